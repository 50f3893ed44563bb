// linalg.inv: the inverse of a square matrix, by getrf + getri.
#include "../op_row.hpp"
#include "../rules.hpp"

namespace ferro::linalg {
namespace {

ferro_status infer_inv(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::inv, true, [&](const MatrixInput& in) {
        a->outputs[0] = in.sig;
        return 1;
    });
}

// M = A^T inverted in place: M^-1 = (A^-1)^T column-major, that is A^-1 row-major.
struct InvKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = call.gather_transposed(item);
        lapack_int* piv = item.c.take<lapack_int>(n);
        T* work = item.c.take<T>(p.lwork);
        if (const lapack_int info = lapack::getrf(ln, ln, a, ldn, piv); info > 0) {
            return item.fail(FERRO_INVALID_ARGUMENT, singular(info));
        }
        lapack::getri(ln, a, ldn, piv, work, static_cast<lapack_int>(p.lwork));
        call.store_matrix(0, b, a, n, 1, n, n);
    }
};

template <class T> void query_getri(Plan& p) {
    const auto n = static_cast<lapack_int>(p.n);
    T w{};
    lapack::getri(n, nullptr, std::max(n, 1), nullptr, &w, -1);
    p.lwork = lapack::query_size(w);
}

void configure_inv(Plan& p, const ferro_prepare_args&) {
    visit_float(p.dtype, [&](auto t) { query_getri<decltype(t)>(p); });
    const int64_t t = itemsize(p.dtype), n = p.n;
    p.scratch_bytes = scratch_array(n * n, t) + scratch_array(n, sizeof(lapack_int)) + scratch_array(p.lwork, t);
    // No BLAS thread hold: getri gains from a second thread (cpu_exec.hpp).
}

// ---- rules
// ---- inv: Y = A^-1.  gA = -Y^H gY Y^H.  dY = -Y dA Y.
ferro_status inv_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TensorRef yh = r.mH(a.outputs[0]);
        a.input_cotangents[0] = r.neg(r.matmul(yh, r.matmul(a.cotangents[0], yh))).release();
    });
}
ferro_status inv_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const ferro_tensor Y = a.outputs[0];
        a.output_tangents[0] = r.neg(r.matmul(Y, r.matmul(a.input_tangents[0], Y))).release();
    });
}

}  // namespace

OpRow op_rows::inv() {
    return {.op = Op::inv,
            .doc = "the inverse of a square matrix",
            .infer = infer_inv,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_outputs = bit(0),
            .vjp = inv_vjp,
            .jvp = inv_jvp,
            .cpu = {.configure = configure_inv, .kernels = kernels<InvKernel>()}};
}

}  // namespace ferro::linalg
