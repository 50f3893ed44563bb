// linalg.pinv and linalg.matrix_rank: the Moore-Penrose pseudo-inverse and the rank, from the
// SVD of M = A^T (gesdd) or, with hermitian, the eigendecomposition of M = conj(A) (heevd).
// Singular values <= max(atol, rtol * largest) count as zero (their reciprocals become 0).
#include "../blas.hpp"
#include "../lapack_queries.hpp"
#include "../op_row.hpp"
#include "../rules.hpp"

namespace ferro::linalg {

// ---- rules shared with lstsq (rules.hpp): pinv (X = A^+, constant rank; Golub and Pereyra 1973):
//   dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X,
//   gA = -X^H gX X^H + (I - A X) gX^H X X^H + X^H X gX^H (I - X A).
// The I - P products are formed as B - P B, without identity matrices.
TensorRef pinv_backward(const Ops& r, Arg A, Arg X, Arg g) {
    const TensorRef Xh = r.mH(X), gh = r.mH(g);
    TensorRef out = r.neg(r.matmul(Xh, r.matmul(g, Xh)));
    const TensorRef right = r.matmul(gh, r.matmul(X, Xh));  // gX^H X X^H, then (I - A X) on the left
    out = r.add(out, r.sub(right, r.matmul(A, r.matmul(X, right))));
    const TensorRef left = r.matmul(r.matmul(Xh, X), gh);  // X^H X gX^H, then (I - X A) on the right
    return r.add(out, r.sub(left, r.matmul(r.matmul(left, X), A)));
}
TensorRef pinv_forward(const Ops& r, Arg A, Arg X, Arg dA) {
    const TensorRef Xh = r.mH(X), dAh = r.mH(dA);
    TensorRef out = r.neg(r.matmul(X, r.matmul(dA, X)));
    const TensorRef first = r.matmul(r.matmul(X, Xh), dAh);  // X X^H dA^H, then (I - A X) on the right
    out = r.add(out, r.sub(first, r.matmul(r.matmul(first, A), X)));
    const TensorRef second = r.matmul(dAh, r.matmul(Xh, X));  // dA^H X^H X, then (I - X A) on the left
    return r.add(out, r.sub(second, r.matmul(X, r.matmul(A, second))));
}

namespace {

const ferro_attr_spec pinv_attrs[] = {
    plugin::spec_optional("atol", FERRO_ATTR_F64, "absolute tolerance: singular values <= atol are zero (None: 0)"),
    plugin::spec_optional("rtol", FERRO_ATTR_F64,
                          "relative tolerance, times the largest singular value (None: eps * max(m, n) when atol is "
                          "None or 0, else 0; numpy's rcond)"),
    plugin::spec_bool("hermitian", false, "A is Hermitian: use its eigendecomposition (reads the lower triangle)")};

template <Op op> ferro_status infer_pinv(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, op, false, [&](const MatrixInput& in) {
        if (a->attrs[2].v.boolean != 0 && in.m != in.n) {
            invalid(op, "input 0 must be square with hermitian=true, got shape " + shape_str(dims(in.sig)));
        }
        for (int i = 0; i < 2; ++i) {
            if (a->attrs[i].type == FERRO_ATTR_F64 && !(a->attrs[i].v.f64 >= 0)) {
                invalid(op, std::string("attribute ") + (i ? "rtol" : "atol") + " must be >= 0, got " +
                                std::to_string(a->attrs[i].v.f64));
            }
        }
        if constexpr (op == Op::pinv) a->outputs[0] = out_sig(in.sig.dtype, in.batch, {in.n, in.m});
        else a->outputs[0] = out_sig(FERRO_DTYPE_I64, in.batch, {});
        return 1;
    });
}

struct PinvKernel {
    template <class T> static void run(const MatrixCall<T>& call, Item& item) {
        using R = Real<T>;
        const Plan& p = call.plan();
        const int64_t b = item.b;
        T* a = call.gather_transposed(item);
        const int64_t m = p.m, n = p.n, k = p.k;
        const lapack_int ln = static_cast<lapack_int>(n), lm = static_cast<lapack_int>(m), ldn = std::max<lapack_int>(ln, 1);
        const bool pinv = p.op == Op::pinv;
        if (!all_finite(a, m * n)) return item.fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
        R* s = item.c.take<R>(p.hermitian ? n : k);
        R largest = 0;
        int64_t count = p.hermitian ? n : k;
        T *u = nullptr, *vt = nullptr;
        lapack_int info = 0;
        if (p.hermitian) {  // eigenvalues of M = conj(A) (lower triangle of A = upper of M), vectors Z in a
            T* work = item.c.take<T>(p.lwork);
            R* rwork = item.c.take<R>(p.lrwork);
            lapack_int* iwork = item.c.take<lapack_int>(p.liwork);
            info = lapack::heevd(pinv ? 'V' : 'N', 'U', ln, a, ldn, s, work, static_cast<lapack_int>(p.lwork), rwork,
                                 static_cast<lapack_int>(p.lrwork), iwork, static_cast<lapack_int>(p.liwork));
            for (int64_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(s[i]));
        } else {
            u = item.c.take<T>(n * k);
            vt = item.c.take<T>(k * m);
            T* work = item.c.take<T>(p.lwork);
            R* rwork = item.c.take<R>(p.lrwork);
            lapack_int* iwork = item.c.take<lapack_int>(p.liwork);
            info = lapack::gesdd(pinv ? 'S' : 'N', ln, lm, a, ldn, s, u, ldn, vt,
                                 std::max<lapack_int>(static_cast<lapack_int>(k), 1), work, static_cast<lapack_int>(p.lwork),
                                 rwork, iwork);
            largest = k > 0 ? s[0] : R(0);
        }
        if (info > 0) return item.fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK info " + std::to_string(info) + ")");
        const double cutoff = std::max(p.atol, p.rtol * static_cast<double>(largest));
        if (!pinv) {
            int64_t rank = 0;
            for (int64_t i = 0; i < count; ++i) rank += static_cast<double>(std::abs(s[i])) > cutoff ? 1 : 0;
            *output<int64_t>(call, 0, b) = rank;
            return;
        }
        auto inverse = [&](R v) { return static_cast<double>(std::abs(v)) > cutoff ? T(R(1) / v) : T(0); };
        T* w = item.c.take<T>(std::max(m, n) * std::max(m, n));
        T* x = item.c.take<T>(n * m);
        if (p.hermitian) {
            // A = conj(Z) diag(s) Z^T: pinv(A) = conj(Z) diag(1/s) Z^T. The buffer a holds Z
            // column-major, that is Z^T row-major.
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) w[i * n + j] = inverse(s[i]) * a[i * n + j];
            blas::gemm('C', 'N', n, n, n, T(1), a, n, w, n, T(0), x, n);
        } else {
            // A = Vt'^T S U'^T: pinv(A) = conj(U') S^+ conj(Vt'). u is U' column-major, that is
            // U'^T row-major (k x n); w = S^+ conj(Vt') row-major (k x m).
            for (int64_t i = 0; i < k; ++i)
                for (int64_t j = 0; j < m; ++j) w[i * m + j] = inverse(s[i]) * conj_if(vt[i + j * k], true);
            if (k > 0) blas::gemm('C', 'N', n, m, k, T(1), u, n, w, m, T(0), x, m);
            else std::fill(x, x + n * m, T(0));
        }
        call.store_matrix(0, b, x, m, 1, n, m);
    }
};

void configure_pinv(Plan& p, const ferro_prepare_args& args) {
    const ferro_attr_value* attrs = args.attrs;
    const bool pinv = p.op == Op::pinv;
    p.hermitian = attrs[2].v.boolean != 0;
    const bool has_atol = attrs[0].type == FERRO_ATTR_F64, has_rtol = attrs[1].type == FERRO_ATTR_F64;
    p.atol = has_atol ? attrs[0].v.f64 : 0.0;
    // PyTorch's default: eps * max(m, n) unless an absolute tolerance was given.
    p.rtol = has_rtol ? attrs[1].v.f64
                      : (!has_atol || p.atol == 0 ? dtype_eps(p.dtype) * static_cast<double>(std::max(p.m, p.n)) : 0.0);
    const char job = pinv ? (p.hermitian ? 'V' : 'S') : 'N';
    visit_float(p.dtype, [&](auto t) {
        if (p.hermitian) query_heevd<decltype(t)>(p, job);
        else query_gesdd<decltype(t)>(p, job);
    });
    p.scratch_bytes = p.hermitian ? heevd_scratch(p) : gesdd_scratch(p, false);
    const int64_t t = itemsize(p.dtype), big = std::max(p.m, p.n);
    if (pinv) p.scratch_bytes += scratch_array(big * big, t) + scratch_array(p.n * p.m, t);  // the scaled factor, the product
    p.threaded_routine = p.hermitian ? ThreadedRoutine::syevd : ThreadedRoutine::gesdd;
}

constexpr CpuExecutor kPinvExecutor{.configure = configure_pinv, .kernels = kernels<PinvKernel>()};

ferro_status pinv_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        a.input_cotangents[0] = pinv_backward(r, a.inputs[0], a.outputs[0], a.cotangents[0]).release();
    });
}
ferro_status pinv_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        a.output_tangents[0] = pinv_forward(r, a.inputs[0], a.outputs[0], a.input_tangents[0]).release();
    });
}

}  // namespace

OpRow op_rows::pinv() {
    return {.op = Op::pinv,
            .doc = "the Moore-Penrose pseudo-inverse, through the SVD (or eigh when hermitian)",
            .attrs = pinv_attrs,
            .infer = infer_pinv<Op::pinv>,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .save_outputs = bit(0),
            .vjp = pinv_vjp,
            .jvp = pinv_jvp,
            .cpu = kPinvExecutor};
}

OpRow op_rows::matrix_rank() {
    return {.op = Op::matrix_rank,
            .doc = "the number of singular values above the tolerance (i64)",
            .attrs = pinv_attrs,
            .infer = infer_pinv<Op::matrix_rank>,
            .cpu = kPinvExecutor};
}

}  // namespace ferro::linalg
