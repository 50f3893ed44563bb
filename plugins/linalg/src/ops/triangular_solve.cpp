// linalg.triangular_solve: X with A X = B (or X A = B) for triangular A, by trsm on M = A^T
// (A upper is M lower). Only A's triangle is read.
#include "../op_row.hpp"
#include "../rules.hpp"
#include "../triangular.hpp"

namespace ferro::linalg {
namespace {

const ferro_attr_spec triangular_attrs[] = {
    plugin::spec_required("upper", FERRO_ATTR_BOOL, "A is upper (else lower) triangular; the other triangle is not read"),
    plugin::spec_bool("left", true, "solve A X = B (else X A = B)"),
    plugin::spec_bool("unitriangular", false, "assume a unit diagonal (it is not read)")};

ferro_status infer_triangular_solve(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::triangular_solve, true, [&](const MatrixInput& in) {
        a->outputs[0] = solve_rhs(Op::triangular_solve, in.sig, a->inputs[1], 1, a->attrs[1].v.boolean != 0);
        return 1;
    });
}

struct TriangularSolveKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = call.gather_transposed(item);
        T* x = item.c.take<T>(n * k);
        const ferro_tensor_view& B = call.args().inputs[1];
        const int64_t brs = B.strides[B.ndim - 2], bcs = B.strides[B.ndim - 1];
        // A X = B is M^T X = B; X A = B is M X^T = B^T. A upper is M lower.
        const char uplo = p.upper ? 'L' : 'U', diag = p.unit ? 'U' : 'N';
        if (p.left) copy2d(input<T>(call, 1, b), brs, bcs, x, 1, n, n, k);
        else copy2d(input<T>(call, 1, b), bcs, brs, x, 1, n, n, k);
        for (int64_t i = 0; i < n && !p.unit; ++i) {  // trtrs's check: an exactly zero diagonal entry
            if (a[i + i * n] == T(0)) {
                return item.fail(FERRO_INVALID_ARGUMENT, "is singular: its diagonal entry [" + std::to_string(i) + ", " +
                                                             std::to_string(i) + "] is exactly zero");
            }
        }
        tri::solve(uplo, p.left ? 'T' : 'N', diag, n, k, a, ldn, x, ldn);
        if (p.left) return call.store_matrix(0, b, x, 1, n, n, k);
        return call.store_matrix(0, b, x, n, 1, k, n);
    }
};

void configure_triangular_solve(Plan& p, const ferro_prepare_args&) {
    const int64_t t = itemsize(p.dtype);
    p.scratch_bytes = scratch_array(p.n * p.n, t) + scratch_array(p.n * p.k, t);
}

// ---- rules
// triangular_solve: X = A^-1 B (left) or B A^-1 (right), A's triangle T(.) only:
//   left:  gB = A^-H gX, gA = T(-gB X^H);   dX = A^-1 (dB - T(dA) X)
//   right: gB = gX A^-H, gA = T(-X^H gB);   dX = (dB - X T(dA)) A^-1
// T keeps the triangle the op reads (without the diagonal when unitriangular).
struct TriAttrs {
    bool upper, left, unit;
};
TriAttrs tri_attrs(const ferro_attr_value* a) { return {a[0].v.boolean != 0, a[1].v.boolean != 0, a[2].v.boolean != 0}; }
TensorRef triangle(const Ops& r, Arg x, const TriAttrs& t) {
    return t.upper ? r.triu(x, t.unit ? 1 : 0) : r.tril(x, t.unit ? -1 : 0);
}

ferro_status triangular_solve_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TriAttrs t = tri_attrs(a.attrs);
        const ferro_tensor A = a.inputs[0], X = a.outputs[0];
        TensorRef gB = r.tri_solve(r.mH(A), a.cotangents[0], !t.upper, t.left, t.unit);
        if (a.needs_input_grad[0]) {
            const TensorRef outer = t.left ? r.matmul(gB, r.mH(X)) : r.matmul(r.mH(X), gB);
            a.input_cotangents[0] = r.neg(triangle(r, outer, t)).release();
        }
        if (a.needs_input_grad[1]) a.input_cotangents[1] = gB.release();
    });
}
ferro_status triangular_solve_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const TriAttrs t = tri_attrs(a.attrs);
        const ferro_tensor A = a.inputs[0], X = a.outputs[0];
        TensorRef rhs = a.input_tangents[1] ? r.borrow(a.input_tangents[1]) : TensorRef();
        if (a.input_tangents[0]) {
            const TensorRef dA = triangle(r, a.input_tangents[0], t);
            const TensorRef term = t.left ? r.matmul(dA, X) : r.matmul(X, dA);
            rhs = rhs ? r.sub(rhs, term) : r.neg(term);
        }
        if (rhs) a.output_tangents[0] = r.tri_solve(A, rhs, t.upper, t.left, t.unit).release();
    });
}

}  // namespace

OpRow op_rows::triangular_solve() {
    return {.op = Op::triangular_solve,
            .doc = "X with A X = B (or X A = B) for triangular A",
            .n_inputs = 2,
            .attrs = triangular_attrs,
            .infer = infer_triangular_solve,
            .diff_inputs = bit(0) | bit(1),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .save_outputs = bit(0),
            .vjp = triangular_solve_vjp,
            .jvp = triangular_solve_jvp,
            .cpu = {.configure = configure_triangular_solve, .kernels = kernels<TriangularSolveKernel>()}};
}

}  // namespace ferro::linalg
