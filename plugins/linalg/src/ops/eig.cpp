// linalg.eig and linalg.eigvals: A V = V diag(w), complex, by geev on a column-major copy of A
// (its eigenvalue order is LAPACK's on A itself, as numpy and PyTorch return it).
#include "../op_row.hpp"
#include "../rules.hpp"

#include <complex>
#include <vector>

namespace ferro::linalg {
namespace {

template <Op op> ferro_status infer_eig(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, op, true, [&](const MatrixInput& in) {
        a->outputs[0] = out_sig(complex_dtype(in.sig.dtype), in.batch, {in.n});
        if constexpr (op == Op::eigvals) return 1;
        a->outputs[1] = out_sig(complex_dtype(in.sig.dtype), in.batch, {in.n, in.n});
        return 2;
    });
}

// Complex eigenvalues and right eigenvectors, as LAPACK normalises them (norm 1, largest
// component real).
struct EigKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        using R = Real<T>;
        const Plan& p = call.plan();
        const int64_t b = item.b;
        T* a = call.gather_column_major(item);
        using C = std::complex<R>;
        const int64_t n = p.n;
        const lapack_int ln = static_cast<lapack_int>(n), ldn = std::max<lapack_int>(ln, 1);
        const bool vectors = p.op == Op::eig;
        R* ev = item.c.take<R>(2 * n);
        T* vr = item.c.take<T>(n * n);
        T* work = item.c.take<T>(p.lwork);
        R* rwork = item.c.take<R>(2 * n);
        if (!all_finite(a, n * n)) return item.fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
        const lapack_int lw = static_cast<lapack_int>(p.lwork);
        lapack_int info = 0;
        if constexpr (lapack::is_complex_v<T>) {
            info = lapack::geev(vectors ? 'V' : 'N', ln, a, ldn, reinterpret_cast<T*>(ev), vr, ldn, work, lw, rwork);
        } else {
            info = lapack::geev(vectors ? 'V' : 'N', ln, a, ldn, ev, ev + n, vr, ldn, work, lw);
        }
        if (info > 0)
            return item.fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK ?geev info " + std::to_string(info) + ")");
        C* w = output<C>(call, 0, b);
        const int64_t ws = call.out_stride(0, 1);
        for (int64_t j = 0; j < n; ++j) {
            if constexpr (lapack::is_complex_v<T>) w[j * ws] = reinterpret_cast<const C*>(ev)[j];
            else w[j * ws] = C(ev[j], ev[n + j]);
        }
        if (!vectors) return;
        C* V = output<C>(call, 1, b);
        const int64_t vrs = call.out_stride(1, 2), vcs = call.out_stride(1, 1);
        for (int64_t j = 0; j < n; ++j) {
            if constexpr (lapack::is_complex_v<T>) {
                for (int64_t i = 0; i < n; ++i) V[i * vrs + j * vcs] = vr[i + j * n];
            } else if (ev[n + j] == 0) {
                for (int64_t i = 0; i < n; ++i) V[i * vrs + j * vcs] = C(vr[i + j * n], 0);
            } else {  // a conjugate pair: columns j and j + 1 hold its real and imaginary parts
                for (int64_t i = 0; i < n; ++i) {
                    V[i * vrs + j * vcs] = C(vr[i + j * n], vr[i + (j + 1) * n]);
                    V[i * vrs + (j + 1) * vcs] = C(vr[i + j * n], -vr[i + (j + 1) * n]);
                }
                ++j;
            }
        }
    }
};

template <class T> void query_geev(Plan& p) {
    const auto n = static_cast<lapack_int>(p.n);
    const char job = p.op == Op::eig ? 'V' : 'N';
    T w{};
    if constexpr (lapack::is_complex_v<T>) {
        std::vector<Real<T>> rwork(static_cast<size_t>(2 * n + 1));  // ?trevc3's query writes rwork(1)
        lapack::geev(job, n, nullptr, std::max(n, 1), nullptr, nullptr, std::max(n, 1), &w, -1, rwork.data());
    } else {
        lapack::geev(job, n, nullptr, std::max(n, 1), nullptr, nullptr, nullptr, std::max(n, 1), &w, -1);
    }
    p.lwork = std::max<int64_t>(lapack::query_size(w), 1);
}

void configure_eig(Plan& p, const ferro_prepare_args&) {
    visit_float(p.dtype, [&](auto t) { query_geev<decltype(t)>(p); });
    const int64_t t = itemsize(p.dtype), r = itemsize(real_dtype(p.dtype)), n = p.n;
    // A, eigenvalues (2n reals or n complex), vectors, work, rwork.
    p.scratch_bytes = scratch_array(n * n, t) + scratch_array(2 * n, r) + scratch_array(n * n, t) + scratch_array(p.lwork, t) +
                      scratch_array(2 * n, r);
    p.threaded_routine = ThreadedRoutine::geev;
}

constexpr CpuExecutor kEigExecutor{.configure = configure_eig, .kernels = kernels<EigKernel>()};

// ---- rules
// eig: A V = V diag(w), columns of V of norm 1. With E_ij = w_j - w_i (F = 1/E off the
// diagonal) and X = V^-1 dA V:
//   dw = diag(X),  dV = V (F o X) - V Re diag(V^H V (F o X))   (keeps each column's norm);
//   gA = V^-H (diag(gw) + conj(F) o (V^H gV - V^H V Re diag(V^H gV))) V^H   (PyTorch's rule).
// eigvals recomputes V from its input. Real inputs get the real part of gA (the host's cast).
struct EigParts {
    TensorRef w, V;
};
EigParts eig_parts(const Ops& r, uint32_t n_outputs, ferro_tensor A, const ferro_tensor* outputs) {
    if (n_outputs == 2) return {r.borrow(outputs[0]), r.borrow(outputs[1])};
    auto wv = r.call_all(linalg_op("linalg.eig"), {A});
    return {std::move(wv[0]), std::move(wv[1])};
}
TensorRef re_diag_row(const Ops& r, Arg x) {  // Re diag(x) as a row [..., 1, n], in x's dtype
    return r.unsqueeze(r.cast(r.real_part(r.diagonal(x)), r.signature(x).dtype), -2);
}

ferro_status eig_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor gw = a.cotangents[0];
        const ferro_tensor gV = a.n_outputs == 2 ? a.cotangents[1] : nullptr;
        if (!gw && !gV) return;
        const EigParts p = eig_parts(r, a.n_outputs, a.inputs[0], a.outputs);
        const TensorRef Vh = r.mH(p.V);
        TensorRef inner;
        if (gV) {
            const TensorRef VhgV = r.matmul(Vh, gV);
            if (r.dim(VhgV, 1) > 0) check_gauge(r, r.diagonal(VhgV), "linalg.eig", "eigenvectors");
            const TensorRef projected = r.sub(VhgV, r.matmul(Vh, r.mul(p.V, re_diag_row(r, VhgV))));
            const TensorRef wc = r.conj(p.w);
            const TensorRef F = r.inverse_gap_matrix(r.sub(r.unsqueeze(wc, -2), r.unsqueeze(wc, -1)));
            inner = r.add(r.mul(projected, F), r.diag_embed(gw ? r.borrow(gw) : r.diagonal(projected)));
        } else {
            inner = r.diag_embed(gw);
        }
        a.input_cotangents[0] = r.solve(Vh, r.matmul(inner, Vh)).release();
    });
}
ferro_status eig_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const EigParts p = eig_parts(r, a.n_outputs, a.inputs[0], a.outputs);
        const TensorRef dA = r.cast(a.input_tangents[0], r.signature(p.V).dtype);
        const TensorRef X = r.solve(p.V, r.matmul(dA, p.V));
        a.output_tangents[0] = r.diagonal(X).release();
        if (a.n_outputs == 1) return;
        const TensorRef F = r.inverse_gap_matrix(r.sub(r.unsqueeze(p.w, -2), r.unsqueeze(p.w, -1)));
        const TensorRef dV = r.matmul(p.V, r.mul(X, F));
        a.output_tangents[1] = r.sub(dV, r.mul(p.V, re_diag_row(r, r.matmul(r.mH(p.V), dV)))).release();
    });
}

}  // namespace

OpRow op_rows::eig() {
    return {.op = Op::eig,
            .doc = "(w, V): A V = V diag(w), complex, each column of V of norm 1 (LAPACK's phase)",
            .n_outputs = 2,
            .infer = infer_eig<Op::eig>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0) | bit(1),
            .save_outputs = bit(0) | bit(1),
            .vjp = eig_vjp,
            .jvp = eig_jvp,
            .cpu = kEigExecutor};
}

OpRow op_rows::eigvals() {
    return {.op = Op::eigvals,
            .doc = "eigenvalues of a general matrix (complex)",
            .infer = infer_eig<Op::eigvals>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .vjp = eig_vjp,
            .jvp = eig_jvp,
            .cpu = kEigExecutor};
}

}  // namespace ferro::linalg
