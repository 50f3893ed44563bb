// linalg.matrix_exp: exp(A) by scaling and squaring with Pade approximants (expm.hpp).
#include "../expm.hpp"
#include "../op_row.hpp"
#include "../rules.hpp"

namespace ferro::linalg {
namespace {

ferro_status infer_matrix_exp(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::matrix_exp, true, [&](const MatrixInput& in) {
        a->outputs[0] = in.sig;
        return 1;
    });
}

// On A row-major (the gathered M = A^T read row-major).
struct MatrixExpKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const int64_t n = call.plan().n, b = item.b;
        T* a = call.gather_transposed(item);
        T* work = item.c.take<T>(6 * n * n);
        lapack_int* piv = item.c.take<lapack_int>(n);
        if (!all_finite(a, n * n)) return item.fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
        expm(a, n, work, piv);
        call.store_matrix(0, b, a, n, 1, n, n);
    }
};

void configure_matrix_exp(Plan& p, const ferro_prepare_args&) {
    const int64_t t = itemsize(p.dtype), n = p.n;
    p.scratch_bytes = scratch_array(n * n, t) + scratch_array(6 * n * n, t) + scratch_array(n, sizeof(lapack_int));
}

// ---- rules
// matrix_exp: the Frechet derivative L(X, E) is the upper-right block of
// exp([[X, E], [0, X]]) (Mathias 1996; Higham's "block" method): dexp = L(A, dA), and the
// adjoint gA = L(A^H, gE). Both are matrix_exp calls, so every order differentiates.
TensorRef frechet(const Ops& r, Arg X, Arg E) {
    const int64_t n = r.dim(X, 1);
    const TensorRef top = r.concat(X, E, -1);
    const TensorRef bottom = r.concat(r.zeros_shaped(X, {n, n}), X, -1);
    const TensorRef block = r.call(linalg_op("linalg.matrix_exp"), {r.concat(top, bottom, -2)});
    return r.slice(r.slice(block, -2, 0, n), -1, n, 2 * n);
}

ferro_status matrix_exp_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        a.input_cotangents[0] = frechet(r, r.mH(a.inputs[0]), r.cast(a.cotangents[0], a.input_sigs[0].dtype)).release();
    });
}
ferro_status matrix_exp_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        a.output_tangents[0] = frechet(r, a.inputs[0], r.cast(a.input_tangents[0], r.signature(a.inputs[0]).dtype)).release();
    });
}

}  // namespace

OpRow op_rows::matrix_exp() {
    return {.op = Op::matrix_exp,
            .doc = "exp(A) = sum A^k / k! (scaling and squaring, Pade; Higham 2005)",
            .infer = infer_matrix_exp,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .vjp = matrix_exp_vjp,
            .jvp = matrix_exp_jvp,
            .cpu = {.configure = configure_matrix_exp, .kernels = kernels<MatrixExpKernel>()}};
}

}  // namespace ferro::linalg
