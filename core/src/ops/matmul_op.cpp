// matmul with numpy semantics: 1-d operands are promoted to matrices and the added dimension
// removed from the result; leading (batch) dimensions broadcast. Each output batch runs as
// gemm_batched over the last batch dimension, with stride 0 for broadcast operands, so no
// operand is materialised.
#include "ops/core_family.hpp"
#include "ops/op_util.hpp"

namespace ferro::host::ops {
namespace {

struct MatmulShapes {  // NOLINT(bugprone-exception-escape): Dims (a small_vector) moves without allocating
    Dims batch;        // broadcast batch shape
    int64_t m, k, n;
    bool a_vector, b_vector;  // 1-d operands
    Dims out;
};

MatmulShapes matmul_shapes(const std::string& op, std::span<const int64_t> a, std::span<const int64_t> b) {
    if (a.empty() || b.empty()) invalid(op, "0-d inputs are not matrices (use mul)");
    MatmulShapes s{};
    s.a_vector = a.size() == 1;
    s.b_vector = b.size() == 1;
    const Dims am = s.a_vector ? Dims{1, a[0]} : Dims(a.begin(), a.end());
    const Dims bm = s.b_vector ? Dims{b[0], 1} : Dims(b.begin(), b.end());
    s.m = am[am.size() - 2];
    s.k = am[am.size() - 1];
    s.n = bm[bm.size() - 1];
    if (bm[bm.size() - 2] != s.k) {
        invalid(op, fmt::format("input 0 has shape {} and input 1 has shape {}: inner dimensions {} and {} differ", shape_str(a),
                                shape_str(b), s.k, bm[bm.size() - 2]));
    }
    s.batch = broadcast_shapes(op, span_of(am).first(am.size() - 2), span_of(bm).first(bm.size() - 2));
    s.out = s.batch;
    if (!s.a_vector) s.out.push_back(s.m);
    if (!s.b_vector) s.out.push_back(s.n);
    return s;
}

ferro_dtype matmul_dtype(const std::string& op, ferro_dtype a, ferro_dtype b) {
    const ferro_dtype dt = promote(a, b);
    if (!is_inexact(dt)) {
        invalid(op, fmt::format("inputs are {} and {}; matmul needs f32, f64, c64 or c128 (cast first)", dtype_name(a),
                                dtype_name(b)));
    }
    return dt;
}

void matmul_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto s = matmul_shapes(op.qualified, dims_of(a.inputs[0]), dims_of(a.inputs[1]));
    set_output(a.outputs[0], matmul_dtype(op.qualified, a.inputs[0].dtype, a.inputs[1].dtype), s.out);
    a.n_outputs = 1;
}

// An operand seen as a batch of matrices: its element stride along each dimension of the
// broadcast batch shape (0 where it broadcasts), and its row and column strides. A 1-d operand
// is a single row (left) or column (right).
struct MatrixOperand {
    Dims batch_strides;
    int64_t row = 0, col = 0;
};

MatrixOperand as_matrix(int ndim, const int64_t* shape, const int64_t* strides, bool vector, bool is_left,
                        std::span<const int64_t> batch) {
    const int own_batch = vector ? 0 : ndim - 2;
    const int64_t row = vector ? (is_left ? 0 : strides[0]) : strides[ndim - 2];
    const int64_t col = vector ? (is_left ? strides[0] : 0) : strides[ndim - 1];
    // One aggregate initialisation: the strides are built in place (moving a small_vector with
    // inline storage would copy it).
    return {broadcast_strides({shape, static_cast<size_t>(own_batch)}, strides, batch), row, col};
}

// Everything about a matmul that its input layouts decide.
struct MatmulGeometry {
    MatmulShapes s;
    MatrixOperand x, y;

    MatmulGeometry(const std::string& op, int x_ndim, const int64_t* x_shape, const int64_t* x_strides, int y_ndim,
                   const int64_t* y_shape, const int64_t* y_strides)
        : s(matmul_shapes(op, {x_shape, static_cast<size_t>(x_ndim)}, {y_shape, static_cast<size_t>(y_ndim)})),
          x(as_matrix(x_ndim, x_shape, x_strides, s.a_vector, true, span_of(s.batch))),
          y(as_matrix(y_ndim, y_shape, y_strides, s.b_vector, false, span_of(s.batch))) {}
};

// One gemm_batched per outer batch index, over the last batch dimension, on operands that
// already have the output's dtype.
void run_gemms(ferro_session session, const MatmulGeometry& geo, const ferro_tensor_view& x, const ferro_tensor_view& y,
               const ferro_tensor_view& out) {
    const MatmulShapes& s = geo.s;
    // The output is fresh and contiguous in its numpy shape; as a matrix batch its row stride
    // is n (1 for a vector result) and its column stride 1.
    const int64_t c_row = s.b_vector ? 1 : s.n;
    const int64_t c_mat = s.m * s.n;
    const size_t nb = s.batch.size();
    const int64_t last = nb > 0 ? s.batch[nb - 1] : 1;
    const int64_t outer = nb > 1 ? numel(span_of(s.batch).first(nb - 1)) : 1;
    const int64_t item = itemsize(out.dtype);
    const int64_t bs_x = nb > 0 ? geo.x.batch_strides[nb - 1] : 0, bs_y = nb > 0 ? geo.y.batch_strides[nb - 1] : 0;
    for (int64_t o = 0; o < outer; ++o) {
        // Multi-index of the outer batch dims (all but the last) -> element offsets.
        int64_t rest = o, off_x = 0, off_y = 0;
        for (size_t d = nb > 0 ? nb - 1 : 0; d-- > 0;) {
            const int64_t i = rest % s.batch[d];
            rest /= s.batch[d];
            off_x += i * geo.x.batch_strides[d];
            off_y += i * geo.y.batch_strides[d];
        }
        const int64_t off_c = o * last * c_mat * item;
        ferro_gemm_args g{};
        g.struct_size = sizeof g;
        g.dtype = out.dtype;
        g.batch = last;
        g.m = s.m;
        g.n = s.n;
        g.k = s.k;
        g.a = {x.buffer, x.byte_offset + static_cast<uint64_t>(off_x * item), address_at(x, off_x * item), bs_x, geo.x.row,
               geo.x.col};
        g.b = {y.buffer, y.byte_offset + static_cast<uint64_t>(off_y * item), address_at(y, off_y * item), bs_y, geo.y.row,
               geo.y.col};
        g.c = {out.buffer, out.byte_offset + static_cast<uint64_t>(off_c), address_at(out, off_c), c_mat, c_row, 1};
        g.alpha = {1, 0, 1};
        g.beta = {0, 0, 0};
        check(trusted::run(session, g, &ferro_engine_iface::gemm_batched));
    }
}

void matmul_exec(const CoreOp& op, const ferro_host_api* host, const ferro_exec_args& a) {
    const ferro_tensor_view& out = a.outputs[0];
    View keep_x, keep_y;  // only when an operand must be converted to the output's dtype
    const ferro_tensor_view& x =
        a.inputs[0].dtype == out.dtype ? a.inputs[0] : (keep_x = cast_to(host, a.session, View(a.inputs[0]), out.dtype)).v;
    const ferro_tensor_view& y =
        a.inputs[1].dtype == out.dtype ? a.inputs[1] : (keep_y = cast_to(host, a.session, View(a.inputs[1]), out.dtype)).v;
    const MatmulGeometry geo(op.qualified, x.ndim, x.shape, x.strides, y.ndim, y.shape, y.strides);
    run_gemms(a.session, geo, x, y, out);
}

// A matmul for one call signature: the geometry is worked out once. Operands that need a
// dtype conversion take matmul_exec (the converted copies have layouts of their own).
class MatmulPlan final : public OpPlan {
public:
    MatmulPlan(const CoreOp& op, const ferro_prepare_args& p)
        : op_(op),
          convert_(p.inputs[0].dtype != p.outputs[0].dtype || p.inputs[1].dtype != p.outputs[0].dtype),
          geo_(op.qualified, p.inputs[0].ndim, p.inputs[0].shape, p.inputs[0].strides, p.inputs[1].ndim, p.inputs[1].shape,
               p.inputs[1].strides) {}

    void run(const ferro_host_api* host, const ferro_exec_args& a) const override {
        if (convert_) return matmul_exec(op_, host, a);
        run_gemms(a.session, geo_, a.inputs[0], a.inputs[1], a.outputs[0]);
    }

private:
    const CoreOp& op_;
    bool convert_;
    MatmulGeometry geo_;
};

std::unique_ptr<OpPlan> matmul_plan(const CoreOp& op, const ferro_prepare_args& p) { return std::make_unique<MatmulPlan>(op, p); }

}  // namespace

void add_matmul_op(std::vector<CoreOp>& ops) {
    CoreOp op{"matmul", "", "matrix product with numpy batching and broadcasting", 2, 0, 1, {}, matmul_infer, matmul_exec};
    op.plan = matmul_plan;
    ops.push_back(std::move(op));
}

}  // namespace ferro::host::ops
