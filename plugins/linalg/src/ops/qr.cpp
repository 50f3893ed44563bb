// linalg.qr: A = Q R (reduced, complete, or R only), by geqrf and ungqr on a column-major
// copy of A: a row-major A is an LQ problem to LAPACK, but gelqf/unglq run slower than
// geqrf/ungqr by far more than the two transposing copies cost (bench/results/linalg.md).
#include "../op_row.hpp"
#include "../rules.hpp"

namespace ferro::linalg {
namespace {

const ferro_attr_spec qr_attrs[] = {plugin::spec_str("mode", "reduced", "reduced | complete | r (R only)")};

ferro_status infer_qr(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::qr, false, [&](const MatrixInput& in) {
        const std::string mode = a->attrs[0].v.str;
        const ferro_dtype d = in.sig.dtype;
        if (mode == "reduced") {
            a->outputs[0] = out_sig(d, in.batch, {in.m, in.k});
            a->outputs[1] = out_sig(d, in.batch, {in.k, in.n});
            return 2;
        }
        if (mode == "complete") {
            a->outputs[0] = out_sig(d, in.batch, {in.m, in.m});
            a->outputs[1] = out_sig(d, in.batch, {in.m, in.n});
            return 2;
        }
        if (mode != "r") invalid(Op::qr, "attribute mode must be \"reduced\", \"complete\" or \"r\", got \"" + mode + "\"");
        a->outputs[0] = out_sig(d, in.batch, {in.k, in.n});
        return 1;
    });
}

// geqrf, R from the upper triangle, then Q from the reflectors (ungqr).
struct QrKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        const Plan& p = call.plan();
        const int64_t b = item.b;
        T* a = call.gather_column_major(item);
        const int64_t m = p.m, n = p.n, k = p.k;
        const lapack_int ln = static_cast<lapack_int>(n), lm = static_cast<lapack_int>(m), lk = static_cast<lapack_int>(k);
        const lapack_int ldm = std::max<lapack_int>(lm, 1);
        T* tau = item.c.take<T>(k);
        T* work = item.c.take<T>(p.lwork);
        const lapack_int lw = static_cast<lapack_int>(p.lwork);
        lapack::geqrf(lm, ln, a, ldm, tau, work, lw);
        // R (rows x n, rows = k or m): the upper triangle of a.
        const uint32_t r_out = p.qr_mode == QrMode::r ? 0 : 1;
        const int64_t r_rows = p.qr_mode == QrMode::complete ? m : k;
        T* r = output<T>(call, r_out, b);
        const int64_t rrs = call.out_stride(r_out, 2), rcs = call.out_stride(r_out, 1);
        if (rrs == 1) {  // column-major R (the plan's layout): column j is a[0..j] then zeros
            for (int64_t j = 0; j < n; ++j) {
                const int64_t top = std::min(j + 1, k);
                std::copy(a + j * m, a + j * m + top, r + j * rcs);
                std::fill(r + j * rcs + top, r + j * rcs + r_rows, T(0));
            }
        } else {
            for_each_tiled(
                r_rows, n, m, rrs, rcs,
                [&](int64_t i, int64_t j) { r[i * rrs + j * rcs] = (i < k && j >= i) ? a[i + j * m] : T(0); },
                [](int64_t, int64_t, int64_t, int64_t) { return false; });
        }
        if (p.qr_mode == QrMode::r) return;
        if (p.qr_mode == QrMode::complete && m > n) {
            // All m columns of Q: the n reflectors into an m x m buffer first.
            T* q = item.c.take<T>(m * m);
            std::copy(a, a + m * n, q);
            lapack::ungqr(lm, lm, lk, q, ldm, tau, work, lw);
            return call.store_matrix(0, b, q, 1, m, m, m);
        }
        if (k > 0) lapack::ungqr(lm, lk, lk, a, ldm, tau, work, lw);
        call.store_matrix(0, b, a, 1, m, m, k);
    }
};

template <class T> void query_qr(Plan& p) {
    // geqrf on A (m x n), then the first k (reduced) or m (complete) columns of Q.
    const auto m = static_cast<lapack_int>(p.m), n = static_cast<lapack_int>(p.n), k = static_cast<lapack_int>(p.k);
    T w{};
    lapack::geqrf(m, n, nullptr, std::max(m, 1), nullptr, &w, -1);
    int64_t need = lapack::query_size(w);
    const lapack_int q_cols = p.qr_mode == QrMode::complete ? m : k;
    if (p.qr_mode != QrMode::r && q_cols > 0) {
        lapack::ungqr(m, q_cols, k, nullptr, std::max(m, 1), nullptr, &w, -1);
        need = std::max(need, lapack::query_size(w));
    }
    p.lwork = std::max<int64_t>(need, 1);
}

void configure_qr(Plan& p, const ferro_prepare_args& args) {
    visit_float(p.dtype, [&](auto t) { query_qr<decltype(t)>(p); });
    const int64_t t = itemsize(p.dtype), m = p.m;
    // A, tau, work, and the full Q of complete mode.
    p.scratch_bytes = scratch_array(m * p.n, t) + scratch_array(p.k, t) + scratch_array(p.lwork, t) + scratch_array(m * m, t);
    p.threaded_routine = ThreadedRoutine::geqrf;
    for (uint32_t i = 0; i < args.n_outputs; ++i) ask_column_major(args, i);
}

// ---- rules
// qr. Tall or square A (m >= n, reduced): with C = Q^H dA R^-1, Q^H dQ = Omega = phi(C) =
// tril(C, -1) - tril(C, -1)^H + i Im diag(C) (skew-Hermitian; R keeps a real diagonal) and
// dR = (C - Omega) R, dQ = dA R^-1 - Q (C - Omega). Its adjoint, with N = Q^H gQ - gR R^H:
//   gA = [Q (gR R^H + phi*(N)) + gQ - Q Q^H gQ] R^-H,  phi*(N) = tril(N, -1) - tril(N^H, -1) + i Im diag(N).
// Wide A = [X | Y] (m < n): X = Q R1 is square, R2 = Q^H Y (Walter and Lehmann 2018).

struct QrParts {
    TensorRef Q, R;  // R: m x n (m >= n: square n x n)
};

// Q, R of the call: the outputs, or for mode "r" a reduced QR recomputed from the input.
QrParts qr_parts(const Ops& r, ferro_tensor A, const ferro_tensor* outputs, uint32_t n_outputs, const char* mode) {
    const std::string m = mode;
    const int64_t rows = r.dim(A, 2), cols = r.dim(A, 1);
    if (m == "complete" && rows > cols) {
        throw plugin::Error(FERRO_NOT_DIFFERENTIABLE,
                            "linalg.qr: mode \"complete\" with more rows than columns has no derivative (the last " +
                                std::to_string(rows - cols) + " columns of Q are not determined by A); use mode \"reduced\"");
    }
    if (n_outputs == 1) {
        auto qr = r.call_all(linalg_op("linalg.qr"), {A});
        return {std::move(qr[0]), std::move(qr[1])};
    }
    return {r.borrow(outputs[0]), r.borrow(outputs[1])};
}

// i Im diag(X) as a matrix; absent (zero) for real X.
TensorRef imag_diagonal(const Ops& r, Arg x) {
    if (!is_complex(r.signature(x).dtype)) return TensorRef();
    return r.diag_embed(r.i_imag(r.diagonal(x)));
}
TensorRef omega_of(const Ops& r, Arg c) {  // phi(C)
    const TensorRef low = r.strictly_lower(c);
    return r.plus(r.sub(low, r.mH(low)), imag_diagonal(r, c));
}
TensorRef omega_adjoint(const Ops& r, Arg n) {  // phi*(N)
    return r.plus(r.sub(r.strictly_lower(n), r.strictly_lower(r.mH(n))), imag_diagonal(r, n));
}
// X R^-H and X R^-1: triangular solves from the right (no LU of R).
TensorRef times_inv_rh(const Ops& r, Arg x, Arg R) { return r.tri_solve(r.mH(R), x, /*upper=*/false, /*left=*/false); }
TensorRef times_inv_r(const Ops& r, Arg x, Arg R) { return r.tri_solve(R, x, /*upper=*/true, /*left=*/false); }

// The tall-or-square VJP (gQ or gR may be empty), with Q Q^H gQ folded into N:
// gA = [Q (phi*(N) - N) + gQ] R^-H, three products and one triangular solve.
TensorRef qr_vjp_tall(const Ops& r, Arg Q, Arg R, const TensorRef& gQ, const TensorRef& gR) {
    TensorRef N = gQ ? r.matmul(r.mH(Q), gQ) : TensorRef();
    if (gR) {
        TensorRef gRRh = r.matmul(gR, r.mH(R));
        N = N ? r.sub(N, gRRh) : r.neg(gRRh);
    }
    TensorRef lhs = r.matmul(Q, r.sub(omega_adjoint(r, N), N));
    if (gQ) lhs = r.add(lhs, gQ);
    return times_inv_rh(r, lhs, R);
}

ferro_status qr_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0];
        const QrParts p = qr_parts(r, A, a.outputs, a.n_outputs, a.attrs[0].v.str);
        TensorRef gQ = a.n_outputs == 1 ? TensorRef() : r.borrow(a.cotangents[0]);
        TensorRef gR = r.borrow(a.cotangents[a.n_outputs == 1 ? 0 : 1]);
        if (!gQ && !gR) return;
        const int64_t m = r.dim(A, 2), n = r.dim(A, 1);
        if (m >= n) {
            a.input_cotangents[0] = qr_vjp_tall(r, p.Q, p.R, gQ, gR).release();
            return;
        }
        const TensorRef Y = r.slice(A, -1, m, n);
        const TensorRef R1 = r.slice(p.R, -1, 0, m);
        TensorRef gR1 = gR ? r.slice(gR, -1, 0, m) : TensorRef();
        TensorRef gR2 = gR ? r.slice(gR, -1, m, n) : TensorRef();
        if (gR2) gQ = r.plus(std::move(gQ), r.matmul(Y, r.mH(gR2)));
        const TensorRef gX = qr_vjp_tall(r, p.Q, R1, gQ, gR1);
        const TensorRef gY = gR2 ? r.matmul(p.Q, gR2) : r.zeros_like(Y);
        a.input_cotangents[0] = r.concat(gX, gY, -1).release();
    });
}

ferro_status qr_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor dA = a.input_tangents[0];
        if (!dA) return;
        const ferro_tensor A = a.inputs[0];
        const uint32_t n_out = a.n_outputs;
        const QrParts p = qr_parts(r, A, a.outputs, n_out, a.attrs[0].v.str);
        const int64_t m = r.dim(A, 2), n = r.dim(A, 1);
        const TensorRef dX = m >= n ? r.borrow(dA) : r.slice(dA, -1, 0, m);
        const TensorRef R1 = m >= n ? r.borrow(p.R.get()) : r.slice(p.R, -1, 0, m);
        const TensorRef B = times_inv_r(r, dX, R1);  // dX R1^-1
        const TensorRef C = r.matmul(r.mH(p.Q), B);
        const TensorRef upper = r.sub(C, omega_of(r, C));  // dR R^-1
        TensorRef dQ = r.sub(B, r.matmul(p.Q, upper));
        TensorRef dR = r.matmul(upper, R1);
        if (m < n) {  // R2 = Q^H Y: dR2 = dQ^H Y + Q^H dY
            const TensorRef Y = r.slice(A, -1, m, n), dY = r.slice(dA, -1, m, n);
            dR = r.concat(dR, r.add(r.matmul(r.mH(dQ), Y), r.matmul(r.mH(p.Q), dY)), -1);
        }
        if (n_out == 1) {
            a.output_tangents[0] = dR.release();
        } else {
            a.output_tangents[0] = dQ.release();
            a.output_tangents[1] = dR.release();
        }
    });
}

}  // namespace

OpRow op_rows::qr() {
    return {.op = Op::qr,
            .doc = "A = Q R, Q with orthonormal columns, R upper triangular",
            .n_outputs = FERRO_VARIADIC,
            .attrs = qr_attrs,
            .infer = infer_qr,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0) | bit(1),
            .save_inputs = bit(0),
            .save_outputs = bit(0) | bit(1),
            .vjp = qr_vjp,
            .jvp = qr_jvp,
            .cpu = {.configure = configure_qr, .kernels = kernels<QrKernel>(), .runs_on_empty = true}};
}

}  // namespace ferro::linalg
