// linalg.svd and linalg.svdvals: A = U diag(S) Vh, S descending, by gesdd on M = A^T: the SVD
// of M holds Vh and U of A in its U and Vt, so no transposing copies.
#include "../lapack_queries.hpp"
#include "../op_row.hpp"
#include "../rules.hpp"

namespace ferro::linalg {
namespace {

const ferro_attr_spec svd_attrs[] = {plugin::spec_bool("full_matrices", true, "U is m x m and Vh n x n (else m x k, k x n)"),
                                     plugin::spec_f64("eps", 0.0, kEpsDoc)};

template <Op op> ferro_status infer_svd(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, op, false, [&](const MatrixInput& in) {
        if constexpr (op == Op::svdvals) {
            a->outputs[0] = out_sig(in.real, in.batch, {in.k});
            return 1;
        }
        const bool full = a->attrs[0].v.boolean != 0;
        a->outputs[0] = out_sig(in.sig.dtype, in.batch, {in.m, full ? in.m : in.k});
        a->outputs[1] = out_sig(in.real, in.batch, {in.k});
        a->outputs[2] = out_sig(in.sig.dtype, in.batch, {full ? in.n : in.k, in.n});
        return 3;
    });
}

struct SvdKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        using R = Real<T>;
        const Plan& p = call.plan();
        const auto [m, n, k, lm, ln, ldn] = call.sizes();
        const int64_t b = item.b;
        T* a = call.gather_transposed(item);
        const bool vectors = p.op == Op::svd;
        const int64_t ucols = p.full ? n : k, vrows = p.full ? m : k;
        R* s = item.c.take<R>(k);
        T* u = item.c.take<T>(n * ucols);
        T* vt = item.c.take<T>(vrows * m);
        T* work = item.c.take<T>(p.lwork);
        R* rwork = item.c.take<R>(p.lrwork);
        lapack_int* iwork = item.c.take<lapack_int>(p.liwork);
        if (!all_finite(a, m * n)) return item.fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
        const char job = vectors ? (p.full ? 'A' : 'S') : 'N';
        const lapack_int ldvt = std::max<lapack_int>(static_cast<lapack_int>(vrows), 1);
        const lapack_int info =
            lapack::gesdd(job, ln, lm, a, ldn, s, u, ldn, vt, ldvt, work, static_cast<lapack_int>(p.lwork), rwork, iwork);
        if (info > 0)
            return item.fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK ?gesdd info " + std::to_string(info) + ")");
        const int s_out = vectors ? 1 : 0;
        copy2d(s, 0, 1, output<R>(call, s_out, b), 0, call.out_stride(s_out, 1), 1, k);
        if (vectors) {
            if (k == 0) {  // LAPACK returns at once; the full bases of an empty matrix are identities
                std::fill(u, u + n * ucols, T(0));
                std::fill(vt, vt + vrows * m, T(0));
                for (int64_t i = 0; i < n && i < ucols; ++i) u[i + i * n] = T(1);
                for (int64_t i = 0; i < m && i < vrows; ++i) vt[i + i * vrows] = T(1);
            }
            // M = U' S Vt'  =>  A = Vt'^T S U'^T: U = Vt'^T (m x vrows), Vh = U'^T (ucols x n).
            call.store_matrix(0, b, vt, ldvt, 1, m, vrows);
            call.store_matrix(2, b, u, ldn, 1, ucols, n);
        }
    }
};

void configure_svd(Plan& p, const ferro_prepare_args&) {
    const char job = p.op == Op::svdvals ? 'N' : (p.full ? 'A' : 'S');
    visit_float(p.dtype, [&](auto t) { query_gesdd<decltype(t)>(p, job); });
    p.scratch_bytes = gesdd_scratch(p, p.full);
    p.threaded_routine = ThreadedRoutine::gesdd;
}

constexpr CpuExecutor kSvdExecutor{.configure = configure_svd, .kernels = kernels<SvdKernel>(), .runs_on_empty = true};

// ---- rules
// svd (thin: U m x k, S k, Vh k x n). With F_ij = 1/(s_j^2 - s_i^2) off the diagonal
// (regularised by eps), skew(X) = X - X^H and sym(X) = X + X^H:
//   gA = U [F o (skew(U^H gU) S + S skew(V^H gV)) + diag(gS) + i Im diag(U^H gU) / S] Vh
//        + (I - U U^H) gU S^-1 Vh   (m > n)   + U S^-1 gVh (I - V Vh)   (m < n);
//   dP = U^H dA V: dS = Re diag(dP), dU = U (F o sym(dP S) + i Im diag(dP) / S)
//        + (I - U U^H) dA V S^-1, dV = V (F o sym(S dP)) + (I - V Vh) dA^H U S^-1.
// The phase of each complex singular pair is free: a loss that depends on it has no
// gradient (gauge; docs/linalg.md). full_matrices: the columns beyond k get no cotangent
// (as PyTorch). svdvals recomputes U and Vh from its input.

struct SvdParts {
    TensorRef U, S, Vh;  // thin
    TensorRef gU, gS, gVh;
    double eps = 0;
};

SvdParts svd_parts(const Ops& r, uint32_t n_outputs, const ferro_attr_value* attrs, ferro_tensor A, const ferro_tensor* outputs,
                   const ferro_tensor* cotangents) {
    SvdParts p;
    if (n_outputs == 1) {  // svdvals: its input is saved
        auto usv = r.call_all(linalg_op("linalg.svd"), {A}, {plugin::attr_bool("full_matrices", false)});
        p.U = std::move(usv[0]);
        p.S = std::move(usv[1]);
        p.Vh = std::move(usv[2]);
        if (cotangents) p.gS = r.borrow(cotangents[0]);
        return p;
    }
    const bool full = attrs[0].v.boolean != 0;
    const int64_t k = r.dim(outputs[1], 1);  // svd saves its outputs, not A
    p.eps = attrs[1].v.f64;
    auto narrow_cols = [&](ferro_tensor t) { return full ? r.slice(t, -1, 0, k) : r.borrow(t); };
    auto narrow_rows = [&](ferro_tensor t) { return full ? r.slice(t, -2, 0, k) : r.borrow(t); };
    p.U = narrow_cols(outputs[0]);
    p.S = r.borrow(outputs[1]);
    p.Vh = narrow_rows(outputs[2]);
    if (cotangents) {
        if (cotangents[0]) p.gU = narrow_cols(cotangents[0]);
        p.gS = r.borrow(cotangents[1]);
        if (cotangents[2]) p.gVh = narrow_rows(cotangents[2]);
    }
    return p;
}

TensorRef svd_gaps(const Ops& r, Arg S, ferro_dtype dtype, double eps) {  // 1/(s_j^2 - s_i^2)
    return r.cast(r.inverse_gaps(S, eps, /*squares=*/true), dtype);
}

ferro_status svd_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0];
        const ferro_dtype dtype = a.input_sigs[0].dtype;
        const SvdParts p = svd_parts(r, a.n_outputs, a.attrs, A, a.outputs, a.cotangents);
        if (!p.gU && !p.gS && !p.gVh) return;
        const int64_t m = a.input_sigs[0].shape[a.input_sigs[0].ndim - 2], n = a.input_sigs[0].shape[a.input_sigs[0].ndim - 1];
        const TensorRef S = r.cast(p.S, dtype);
        const TensorRef S_row = r.unsqueeze(S, -2), S_col = r.unsqueeze(S, -1);
        TensorRef inner;
        TensorRef UhgU;
        if (p.gU || p.gVh) {
            TensorRef off, gauge;  // gauge terms: complex only (real vectors have no phase)
            const bool complex = is_complex(dtype);
            if (p.gU) {
                const TensorRef x = r.matmul(r.mH(p.U), p.gU);
                UhgU = r.sub(x, r.mH(x));
                off = r.mul(UhgU, S_row);
                if (complex) gauge = r.diagonal(x);
            }
            if (p.gVh) {
                const TensorRef x = r.matmul(p.Vh, r.mH(p.gVh));  // V^H gV
                off = r.plus(std::move(off), r.mul(S_col, r.sub(x, r.mH(x))));
                if (complex) gauge = r.plus(std::move(gauge), r.diagonal(x));
            }
            if (complex && r.dim(gauge, 1) > 0) check_gauge(r, gauge, "linalg.svd", "singular vectors");
            inner = r.mul(off, svd_gaps(r, p.S, dtype, p.eps));
        }
        if (UhgU && is_complex(dtype)) {
            inner = r.add(inner, r.diag_embed(r.div(r.diagonal(UhgU), r.scale(S, 2))));
        }
        const TensorRef U_inner = p.gS ? r.times_plus_diag(p.U, inner, r.cast(p.gS, dtype)) : r.matmul(p.U, inner);
        TensorRef gA = r.matmul(U_inner, p.Vh);
        if (m > n && p.gU) {
            const TensorRef gUSinv = r.div(p.gU, S_row);
            gA = r.add(gA, r.matmul(r.sub(gUSinv, r.matmul(p.U, r.matmul(r.mH(p.U), gUSinv))), p.Vh));
        } else if (m < n && p.gVh) {
            const TensorRef SinvgVh = r.div(p.gVh, S_col);
            gA = r.add(gA, r.matmul(p.U, r.sub(SinvgVh, r.matmul(r.matmul(SinvgVh, r.mH(p.Vh)), p.Vh))));
        }
        a.input_cotangents[0] = gA.release();
    });
}

ferro_status svd_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor dA = a.input_tangents[0];
        if (!dA) return;
        const ferro_tensor A = a.inputs[0];
        const ferro_dtype dtype = r.signature(A).dtype;
        const int64_t m = r.dim(A, 2), n = r.dim(A, 1);
        const SvdParts p = svd_parts(r, a.n_outputs, a.attrs, A, a.outputs, nullptr);
        const TensorRef V = r.mH(p.Vh);
        const TensorRef dP = r.matmul(r.mH(p.U), r.matmul(dA, V));
        TensorRef dS = r.real_part(r.diagonal(dP));
        if (a.n_outputs == 1) {
            a.output_tangents[0] = dS.release();
            return;
        }
        const TensorRef S = r.cast(p.S, dtype);
        const TensorRef S_row = r.unsqueeze(S, -2), S_col = r.unsqueeze(S, -1);
        const TensorRef F = svd_gaps(r, p.S, dtype, p.eps);
        const TensorRef dPS = r.mul(dP, S_row), SdP = r.mul(S_col, dP);
        TensorRef omega_u = r.mul(F, r.add(dPS, r.mH(dPS)));
        if (is_complex(dtype)) omega_u = r.add(omega_u, r.diag_embed(r.div(r.i_imag(r.diagonal(dP)), S)));
        TensorRef dU = r.matmul(p.U, omega_u);
        TensorRef dV = r.matmul(V, r.mul(F, r.add(SdP, r.mH(SdP))));
        if (m > n) {  // (I - U U^H) dA V S^-1
            const TensorRef dAVSinv = r.div(r.matmul(dA, V), S_row);
            dU = r.add(dU, r.sub(dAVSinv, r.matmul(p.U, r.matmul(r.mH(p.U), dAVSinv))));
        } else if (m < n) {  // (I - V Vh) dA^H U S^-1
            const TensorRef dAhUSinv = r.div(r.matmul(r.mH(dA), p.U), S_row);
            dV = r.add(dV, r.sub(dAhUSinv, r.matmul(V, r.matmul(p.Vh, dAhUSinv))));
        }
        if (a.attrs[0].v.boolean != 0 && m != n) {
            // full_matrices: the extra columns Q of U (or of V) are any orthonormal completion; we
            // move them as little as keeps [U Q] unitary to first order: dQ = -U dU^H Q.
            const int64_t k = std::min(m, n);
            if (m > n) {
                const TensorRef Q = r.slice(a.outputs[0], -1, k, m);
                dU = r.concat(dU, r.neg(r.matmul(p.U, r.matmul(r.mH(dU), Q))), -1);
            } else {
                const TensorRef Q = r.mH(r.slice(a.outputs[2], -2, k, n));
                dV = r.concat(dV, r.neg(r.matmul(V, r.matmul(r.mH(dV), Q))), -1);
            }
        }
        a.output_tangents[0] = dU.release();
        a.output_tangents[1] = dS.release();
        a.output_tangents[2] = r.mH(dV).release();
    });
}

}  // namespace

OpRow op_rows::svd() {
    return {.op = Op::svd,
            .doc = "(U, S, Vh): A = U diag(S) Vh, S descending",
            .n_outputs = 3,
            .attrs = svd_attrs,
            .infer = infer_svd<Op::svd>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0) | bit(1) | bit(2),
            .save_outputs = bit(0) | bit(1) | bit(2),
            .vjp = svd_vjp,
            .jvp = svd_jvp,
            .cpu = kSvdExecutor};
}

OpRow op_rows::svdvals() {
    return {.op = Op::svdvals,
            .doc = "singular values, descending",
            .infer = infer_svd<Op::svdvals>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .vjp = svd_vjp,
            .jvp = svd_jvp,
            .cpu = kSvdExecutor};
}

}  // namespace ferro::linalg
