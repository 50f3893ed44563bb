// linalg.cholesky: L with A = L L^H for Hermitian positive-definite A (U^H U with upper), by
// potrf 'L' only ('U' runs slower in OpenBLAS: bench/results/linalg.md).
#include "../op_row.hpp"
#include "../rules.hpp"

namespace ferro::linalg {
namespace {

const ferro_attr_spec cholesky_attrs[] = {plugin::spec_bool("upper", false, "return U with A = U^H U instead of L")};

ferro_status infer_cholesky(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::cholesky, true, [&](const MatrixInput& in) {
        a->outputs[0] = in.sig;
        return 1;
    });
}

// upper: M = A^T holds A's upper triangle in its lower one, and its factor M = L L^H gives
// U = L^T, which is M's memory read row-major. lower: A's lower triangle, transposed into
// column-major order, factored where the column-major L goes.
struct CholeskyKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = p.upper ? call.gather_transposed(item) : item.c.take<T>(n * n);  // lower gathers its triangle below
        T* out = output<T>(call, 0, b);
        const int64_t ors = call.out_stride(0, 2), ocs = call.out_stride(0, 1);
        // Lower into a packed column-major output (the plan asks for one): factor in place.
        const bool in_place = !p.upper && ors == 1 && ocs == n;
        T* work = in_place ? out : a;
        if (!p.upper) copy_lower(input<T>(call, 0, b), call.in_stride(0, 2), call.in_stride(0, 1), work, 1, n, n, false);
        if (const lapack_int info = lapack::potrf('L', ln, work, ldn); info > 0) {
            return item.fail(FERRO_INVALID_ARGUMENT, "is not positive definite: its leading minor of order " +
                                                         std::to_string(info) + " is not positive definite");
        }
        if (in_place) {  // potrf leaves the strictly upper triangle as it found it: unwritten
            for (int64_t j = 1; j < n; ++j) std::fill(out + j * n, out + j * n + j, T(0));
            return;
        }
        if (!p.upper) return copy_lower(a, 1, n, out, ors, ocs, n, true);
        // U row-major is M's lower triangle read as rows: U(i, j) = a[i n + j] for j >= i.
        return copy_lower(a, 1, n, out, ocs, ors, n, true);
    }
};

void configure_cholesky(Plan& p, const ferro_prepare_args& args) {
    p.scratch_bytes = scratch_array(p.n * p.n, itemsize(p.dtype));
    p.threaded_routine = ThreadedRoutine::potrf;
    if (!p.upper) ask_column_major(args, 0);
}

// ---- rules
// cholesky (Murray 2016): A = L L^H.  gA = sym(L^-H Phi(L^H gL) L^-1), Phi = the lower
// triangle with the diagonal halved, sym(X) = (X + X^H) / 2.  dL = L Phi(L^-1 dA L^-H).
// The upper factor U = L^H goes through the same formulas on its transpose.
TensorRef phi(const Ops& r, Arg x) {
    return r.mul(x, r.constant_matrix(x, r.dim(x, 1), [](int64_t i, int64_t j) { return i > j ? 1.0 : i == j ? 0.5 : 0.0; }));
}
bool attr_bool(const ferro_attr_value* attrs, int i) { return attrs[i].v.boolean != 0; }

ferro_status cholesky_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const bool upper = attr_bool(a.attrs, 0);
        const TensorRef L = upper ? r.mH(a.outputs[0]) : r.borrow(a.outputs[0]);
        const TensorRef gL = upper ? r.mH(a.cotangents[0]) : r.borrow(a.cotangents[0]);
        const TensorRef Linv = r.inv(L);
        const TensorRef inner = r.matmul(r.mH(Linv), r.matmul(phi(r, r.matmul(r.mH(L), gL)), Linv));
        a.input_cotangents[0] = r.scale(r.add(inner, r.mH(inner)), 0.5).release();
    });
}
ferro_status cholesky_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const bool upper = attr_bool(a.attrs, 0);
        const TensorRef L = upper ? r.mH(a.outputs[0]) : r.borrow(a.outputs[0]);
        const TensorRef Linv = r.inv(L);
        TensorRef dL = r.matmul(L, phi(r, r.matmul(Linv, r.matmul(a.input_tangents[0], r.mH(Linv)))));
        a.output_tangents[0] = upper ? r.mH(dL).release() : dL.release();
    });
}

}  // namespace

OpRow op_rows::cholesky() {
    return {.op = Op::cholesky,
            .doc = "L with A = L L^H for Hermitian positive-definite A (U^H U with upper)",
            .attrs = cholesky_attrs,
            .infer = infer_cholesky,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_outputs = bit(0),
            .vjp = cholesky_vjp,
            .jvp = cholesky_jvp,
            .cpu = {.configure = configure_cholesky, .kernels = kernels<CholeskyKernel>()}};
}

}  // namespace ferro::linalg
