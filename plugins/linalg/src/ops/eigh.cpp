// linalg.eigh and linalg.eigvalsh: A = V diag(w) V^H for Hermitian A, w ascending, by heevd on
// the triangle A's uplo names (only that triangle is read).
#include "../lapack_queries.hpp"
#include "../op_row.hpp"
#include "../rules.hpp"

namespace ferro::linalg {
namespace {

const ferro_attr_spec eigh_attrs[] = {plugin::spec_str("uplo", "L", "L | U: the triangle of A that is read"),
                                      plugin::spec_f64("eps", 0.0, kEpsDoc)};
const ferro_attr_spec eigvalsh_attrs[] = {plugin::spec_str("uplo", "L", "L | U: the triangle of A that is read")};

template <Op op> ferro_status infer_eigh(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, op, true, [&](const MatrixInput& in) {
        const std::string uplo = a->attrs[0].v.str;
        if (uplo != "L" && uplo != "U") invalid(op, "attribute uplo must be \"L\" or \"U\", got \"" + uplo + "\"");
        a->outputs[0] = out_sig(in.real, in.batch, {in.n});
        if constexpr (op == Op::eigvalsh) return 1;
        a->outputs[1] = in.sig;
        return 2;
    });
}

// heevd on the triangle gathered column-major with its own uplo: 'U' on the row-major copy
// ran slower than 'L' on the transposed triangle (bench/results/linalg.md).
struct EighKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        using R = Real<T>;
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = call.gather_triangle(item);
        R* w = item.c.take<R>(n);
        T* work = item.c.take<T>(p.lwork);
        R* rwork = item.c.take<R>(p.lrwork);
        lapack_int* iwork = item.c.take<lapack_int>(p.liwork);
        if (!call.triangle_finite(a, n)) return item.fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
        const char uplo = p.upper ? 'U' : 'L';
        const lapack_int info =
            lapack::heevd(p.op == Op::eigh ? 'V' : 'N', uplo, ln, a, ldn, w, work, static_cast<lapack_int>(p.lwork), rwork,
                          static_cast<lapack_int>(p.lrwork), iwork, static_cast<lapack_int>(p.liwork));
        if (info > 0)
            return item.fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK ?heevd info " + std::to_string(info) + ")");
        copy2d(w, 0, 1, output<R>(call, 0, b), 0, call.out_stride(0, 1), 1, n);
        if (p.op == Op::eigh) call.store_matrix(1, b, a, 1, n, n, n);  // into a column-major output: straight
    }
};

void configure_eigh(Plan& p, const ferro_prepare_args& args) {
    const char job = p.op == Op::eigh ? 'V' : 'N';
    visit_float(p.dtype, [&](auto t) { query_heevd<decltype(t)>(p, job); });
    p.scratch_bytes = heevd_scratch(p);
    p.threaded_routine = ThreadedRoutine::syevd;
    if (p.op == Op::eigh) ask_column_major(args, 1);  // the eigenvectors, as heevd leaves them
}

constexpr CpuExecutor kEighExecutor{.configure = configure_eigh, .kernels = kernels<EighKernel>()};

// ---- rules
// eigh: A = V diag(w) V^H. With F_ij = 1/(w_j - w_i) off the diagonal (regularised by eps):
//   gA = V (diag(gw) + F o skew(V^H gV)) V^H,  skew(X) = (X - X^H) / 2;
//   dw = Re diag(V^H dA V),  dV = V (F o (V^H dA V)).
// eigvalsh recomputes V from its input.

struct EighParts {
    TensorRef w, V;
    double eps = 0;
};

EighParts eigh_parts(const Ops& r, const ferro_attr_value* attrs, uint32_t n_outputs, ferro_tensor A,
                     const ferro_tensor* outputs) {
    if (n_outputs == 2) return {r.borrow(outputs[0]), r.borrow(outputs[1]), attrs[1].v.f64};
    auto wv = r.call_all(linalg_op("linalg.eigh"), {A}, {plugin::attr_str("uplo", attrs[0].v.str)});
    return {std::move(wv[0]), std::move(wv[1]), 0.0};
}

ferro_status eigh_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor gw = a.cotangents[0];
        const ferro_tensor gV = a.n_outputs == 2 ? a.cotangents[1] : nullptr;
        if (!gw && !gV) return;
        const EighParts p = eigh_parts(r, a.attrs, a.n_outputs, a.inputs[0], a.outputs);
        const ferro_dtype dtype = a.input_sigs[0].dtype;
        TensorRef inner;
        const TensorRef Vh = r.mH(p.V);
        if (gV) {
            const TensorRef VhgV = r.matmul(Vh, gV);
            if (is_complex(dtype) && r.dim(VhgV, 1) > 0) check_gauge(r, r.diagonal(VhgV), "linalg.eigh", "eigenvectors");
            const TensorRef skew = r.scale(r.sub(VhgV, r.mH(VhgV)), 0.5);
            inner = r.mul(skew, r.cast(r.inverse_gaps(p.w, p.eps), dtype));
        }
        const TensorRef V_inner = gw ? r.times_plus_diag(p.V, inner, r.cast(gw, dtype)) : r.matmul(p.V, inner);
        a.input_cotangents[0] = r.matmul(V_inner, Vh).release();
    });
}

ferro_status eigh_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const EighParts p = eigh_parts(r, a.attrs, a.n_outputs, a.inputs[0], a.outputs);
        const TensorRef X = r.matmul(r.mH(p.V), r.matmul(a.input_tangents[0], p.V));
        a.output_tangents[0] = r.real_part(r.diagonal(X)).release();
        if (a.n_outputs == 2) {
            const TensorRef F = r.cast(r.inverse_gaps(p.w, p.eps), r.signature(X).dtype);
            a.output_tangents[1] = r.matmul(p.V, r.mul(F, X)).release();
        }
    });
}

}  // namespace

OpRow op_rows::eigh() {
    return {.op = Op::eigh,
            .doc = "(w, V): A = V diag(w) V^H for Hermitian A, w ascending",
            .n_outputs = 2,
            .attrs = eigh_attrs,
            .infer = infer_eigh<Op::eigh>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0) | bit(1),
            .save_outputs = bit(0) | bit(1),
            .vjp = eigh_vjp,
            .jvp = eigh_jvp,
            .cpu = kEighExecutor};
}

OpRow op_rows::eigvalsh() {
    return {.op = Op::eigvalsh,
            .doc = "eigenvalues of a Hermitian matrix, ascending",
            .attrs = eigvalsh_attrs,
            .infer = infer_eigh<Op::eigvalsh>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .vjp = eigh_vjp,
            .jvp = eigh_jvp,
            .cpu = kEighExecutor};
}

}  // namespace ferro::linalg
