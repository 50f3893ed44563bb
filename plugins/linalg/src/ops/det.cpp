// linalg.det and linalg.slogdet, from the LU factorisation (getrf): a zero pivot is a zero
// determinant, not an error.
#include "../op_row.hpp"
#include "../rules.hpp"

#include <cmath>
#include <limits>

namespace ferro::linalg {
namespace {

template <Op op> ferro_status infer_det(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, op, true, [&](const MatrixInput& in) {
        a->outputs[0] = out_sig(in.sig.dtype, in.batch, {});
        if constexpr (op == Op::det) return 1;
        a->outputs[1] = out_sig(in.real, in.batch, {});
        return 2;
    });
}

// det is the product of U's diagonal itself (exp(sum log) would lose digits); slogdet sums
// the logs. A 0 x 0 matrix has determinant 1.
struct DetKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        using R = Real<T>;
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = call.gather_transposed(item);
        lapack_int* piv = item.c.take<lapack_int>(n);
        lapack::getrf(ln, ln, a, ldn, piv);  // a zero pivot is a zero determinant, not an error
        T sign = T(1);
        R logabs = 0;
        for (int64_t i = 0; i < n; ++i) {
            const T u = a[i + i * n];
            const R mag = std::abs(u);
            if (piv[i] != i + 1) sign = -sign;
            if (mag == 0) {
                sign = T(0);
                logabs = -std::numeric_limits<R>::infinity();
                break;
            }
            sign *= u / mag;
            logabs += std::log(mag);
        }
        if (p.op == Op::det) {
            T det = T(1);
            for (int64_t i = 0; i < n; ++i) det *= piv[i] != i + 1 ? -a[i + i * n] : a[i + i * n];
            *output<T>(call, 0, b) = det;
        } else {
            *output<T>(call, 0, b) = sign;
            *output<R>(call, 1, b) = logabs;
        }
    }
};

void configure_det(Plan& p, const ferro_prepare_args&) {
    p.scratch_bytes = scratch_array(p.n * p.n, itemsize(p.dtype)) + scratch_array(p.n, sizeof(lapack_int));
    p.threaded_routine = ThreadedRoutine::getrf;
}

constexpr CpuExecutor kDetExecutor{.configure = configure_det, .kernels = kernels<DetKernel>(), .runs_on_empty = true};

// ---- rules
// det:  d = det(A).  dd = tr(adj(A) dA), so gA = g adj(A)^H. For invertible A,
// adj(A) = d A^-1; for singular A (a zero determinant in the batch) the adjugate comes from
// the SVD A = U S Vh: adj(A) = det(U) det(Vh) V diag(prod_{j != i} s_j) U^H, which is right at
// rank n - 1 too (where d A^-1 is 0 * inf).

bool any_zero(const Ops& r, ferro_tensor d) {
    const TensorRef zero = r.call(FERRO_CORE_OP_EQ, {d, r.scalar(d, 0)});
    const TensorRef any = r.call(FERRO_CORE_OP_ANY, {zero});
    unsigned char hit = 0;
    plugin::check(r.host(), r.host()->tensor_to_host(any.get(), &hit, 1));
    return hit != 0;
}

// prod_{j != i} s_j for singular values s [..., n] (descending, >= 0), exact with zeros.
TensorRef products_of_others(const Ops& r, ferro_tensor s) {
    const int64_t last[1] = {-1};
    const TensorRef is_zero = r.call(FERRO_CORE_OP_EQ, {s, r.scalar(s, 0)});
    const TensorRef safe = r.where(is_zero, r.scalar(s, 1), s);
    const TensorRef all =
        r.call(FERRO_CORE_OP_PROD, {safe}, {plugin::attr_i64s("axes", last), plugin::attr_bool("keepdim", true)});
    const TensorRef zeros = r.sum(r.cast(is_zero, r.signature(s).dtype), last, true);
    const TensorRef none = r.call(FERRO_CORE_OP_EQ, {zeros, r.scalar(zeros, 0)});
    const TensorRef one = r.call(FERRO_CORE_OP_EQ, {zeros, r.scalar(zeros, 1)});
    // no zero: P / s_i; one zero: P at the zero, 0 elsewhere; more: 0.
    const TensorRef at_zero = r.where(is_zero, all, r.scalar(s, 0));
    return r.where(none, r.div(all, safe), r.where(one, at_zero, r.scalar(s, 0)));
}

TensorRef adjugate(const Ops& r, ferro_tensor A, ferro_tensor d) {
    if (!any_zero(r, d)) return r.mul(r.unsqueeze(r.unsqueeze(d, -1), -1), r.inv(A));
    const auto usv = r.call_all(linalg_op("linalg.svd"), {A}, {plugin::attr_bool("full_matrices", false)});
    const TensorRef phase = r.mul(r.call(linalg_op("linalg.det"), {usv[0]}), r.call(linalg_op("linalg.det"), {usv[2]}));
    const TensorRef pi = r.cast(products_of_others(r, usv[1].get()), r.signature(A).dtype);
    const TensorRef v_pi = r.mul(r.mH(usv[2]), r.unsqueeze(pi, -2));  // V diag(pi)
    return r.mul(r.unsqueeze(r.unsqueeze(phase, -1), -1), r.matmul(v_pi, r.mH(usv[0])));
}

TensorRef trace(const Ops& r, Arg x) {
    const int64_t last[1] = {-1};
    return r.sum(r.diagonal(x), last, false);
}

ferro_status det_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TensorRef adj = adjugate(r, a.inputs[0], a.outputs[0]);
        a.input_cotangents[0] = r.mul(r.unsqueeze(r.unsqueeze(a.cotangents[0], -1), -1), r.mH(adj)).release();
    });
}
ferro_status det_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        a.output_tangents[0] = trace(r, r.matmul(adjugate(r, a.inputs[0], a.outputs[0]), a.input_tangents[0])).release();
    });
}

// slogdet: with t = tr(A^-1 dA): dlogabs = Re t, dsign = sign i Im t (complex; 0 for
// real). So gA = c A^-H with c = g_logabs + i Im(conj(sign) g_sign).
ferro_status slogdet_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0], sign = a.outputs[0];
        const bool complex = is_complex(a.input_sigs[0].dtype);
        TensorRef c;
        if (a.cotangents[1]) c = r.cast(a.cotangents[1], a.input_sigs[0].dtype);
        if (complex && a.cotangents[0]) {
            c = r.plus(std::move(c), r.i_imag(r.mul(r.conj(sign), a.cotangents[0])));
        }
        if (!c) return;
        const TensorRef scaled = r.mul(r.unsqueeze(r.unsqueeze(c, -1), -1), r.eye(A, r.dim(A, 1)));
        a.input_cotangents[0] = r.solve(r.mH(A), scaled).release();  // c A^-H
    });
}
ferro_status slogdet_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const TensorRef t = trace(r, r.solve(a.inputs[0], a.input_tangents[0]));
        a.output_tangents[1] = r.real_part(t).release();
        if (is_complex(r.signature(a.inputs[0]).dtype)) a.output_tangents[0] = r.mul(a.outputs[0], r.i_imag(t)).release();
    });
}

}  // namespace

OpRow op_rows::det() {
    return {.op = Op::det,
            .doc = "the determinant",
            .infer = infer_det<Op::det>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .save_outputs = bit(0),
            .vjp = det_vjp,
            .jvp = det_jvp,
            .cpu = kDetExecutor};
}

OpRow op_rows::slogdet() {
    return {.op = Op::slogdet,
            .doc = "(sign, log|det|): det = sign * exp(logabsdet)",
            .n_outputs = 2,
            .infer = infer_det<Op::slogdet>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0) | bit(1),
            .save_inputs = bit(0),
            .save_outputs = bit(0) | bit(1),
            .vjp = slogdet_vjp,
            .jvp = slogdet_jvp,
            .cpu = kDetExecutor};
}

}  // namespace ferro::linalg
