// linalg.lstsq: (X, residuals, rank, singular values), X minimising ||A X - B|| with minimum
// norm, by ?gelsd (SVD, divide and conquer) per matrix of a broadcast batch, from column-major
// copies of A and B. Residuals are the squared column norms of A X - B: read off LAPACK's
// output when A has full column rank, computed from A and B otherwise.
#include "../op_row.hpp"
#include "../rules.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ferro::linalg {
namespace {

const ferro_attr_spec lstsq_attrs[] = {
    plugin::spec_optional("rcond", FERRO_ATTR_F64, "singular values <= rcond * largest count as zero (None: eps * max(m, n))"),
    plugin::spec_str("driver", "gelsd",
                     "gelsd | gelss | gelsy | gels: all solved by ?gelsd; the driver decides, as in PyTorch, "
                     "whether residuals are returned (not for gelsy)")};

ferro_status infer_lstsq(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::lstsq, false, [&](const MatrixInput& in) {
        constexpr Op op = Op::lstsq;
        const ferro_signature& b = a->inputs[1];
        require_float(op, b, 1);
        require_same_dtype(op, in.sig, b, 1, "B");
        require_matrix(op, b, 1, false);
        if (rows(b) != in.m) {
            invalid(op, "input 1 (B) has shape " + shape_str(dims(b)) + ", expected [..., " + std::to_string(in.m) +
                            ", k] to match input 0 of shape " + shape_str(dims(in.sig)));
        }
        const std::string driver = a->attrs[1].v.str;
        if (driver != "gelsd" && driver != "gelss" && driver != "gelsy" && driver != "gels") {
            invalid(op, "attribute driver must be gelsd, gelss, gelsy or gels, got \"" + driver + "\"");
        }
        if (a->attrs[0].type == FERRO_ATTR_F64 && !(a->attrs[0].v.f64 >= 0)) {
            invalid(op, "attribute rcond must be >= 0, got " + std::to_string(a->attrs[0].v.f64));
        }
        const auto bb = broadcast_batch(op, in.batch, batch_of(b));
        const int64_t nrhs = cols(b);
        a->outputs[0] = out_sig(in.sig.dtype, bb, {in.n, nrhs});
        const bool residuals = in.m > in.n && driver != "gelsy";
        a->outputs[1] = residuals ? out_sig(in.real, bb, {nrhs}) : out_sig(in.real, {}, {0});
        a->outputs[2] = out_sig(FERRO_DTYPE_I64, bb, {});
        a->outputs[3] = out_sig(in.real, bb, {in.k});
        return 4;
    });
}

void configure_lstsq(Plan& p, const ferro_prepare_args& args) {
    p.rtol =
        args.attrs[0].type == FERRO_ATTR_F64 ? args.attrs[0].v.f64 : dtype_eps(p.dtype) * static_cast<double>(std::max(p.m, p.n));
    p.residuals = p.m > p.n && std::string(args.attrs[1].v.str) != "gelsy";
}

template <class T> void lstsq(const Plan& p, const ferro_exec_args& args) {
    using R = lapack::Real<T>;
    const int64_t m = p.m, n = p.n, k = p.k, mn = std::min(m, n), ldb = std::max<int64_t>({m, n, 1});
    const lapack_int lm = static_cast<lapack_int>(m), ln = static_cast<lapack_int>(n), lk = static_cast<lapack_int>(k);
    const ferro_tensor_view &A = args.inputs[0], &B = args.inputs[1];
    const BatchOffsets a_at(p.batch, A, 2), b_at(p.batch, B, 2);
    const bool residuals = p.residuals;  // else output 1 is empty, [0]
    std::vector<BatchOffsets> out_at;
    for (uint32_t i = 0; i < args.n_outputs; ++i) {
        const ferro_tensor_view& v = args.outputs[i == 1 && !residuals ? 0 : i];
        out_at.emplace_back(p.batch, v, v.ndim - static_cast<int>(p.batch.size()));
    }
    std::vector<T> a(static_cast<size_t>(std::max<int64_t>(m * n, 1)) + lapack::kOverreadPad<T>);
    std::vector<T> b(static_cast<size_t>(ldb * std::max<int64_t>(k, 1)) + lapack::kOverreadPad<T>);
    std::vector<R> s(static_cast<size_t>(std::max<int64_t>(mn, 1)));
    T wq{};
    R rq{};
    lapack_int iq = 0, rank = 0;
    lapack::gelsd(lm, ln, lk, a.data(), std::max<lapack_int>(lm, 1), b.data(), static_cast<lapack_int>(ldb), s.data(),
                  static_cast<R>(p.rtol), &rank, &wq, -1, &rq, &iq);
    std::vector<T> work(static_cast<size_t>(std::max<int64_t>(lapack::query_size(wq), 1)));
    std::vector<R> rwork(static_cast<size_t>(std::max<int64_t>(static_cast<int64_t>(rq), 1)));
    std::vector<lapack_int> iwork(static_cast<size_t>(std::max<lapack_int>(iq, 1)));
    const T* a_data = static_cast<const T*>(A.data);
    const T* b_data = static_cast<const T*>(B.data);
    auto stride = [](const ferro_tensor_view& v, int from_end) { return v.strides[v.ndim - from_end]; };
    for (int64_t bi = 0; bi < p.count; ++bi) {
        const T* Ab = a_data + a_at(bi);
        const T* Bb = b_data + b_at(bi);
        copy2d(Ab, stride(A, 2), stride(A, 1), a.data(), 1, m, m, n);
        std::fill(b.begin(), b.end(), T(0));
        copy2d(Bb, stride(B, 2), stride(B, 1), b.data(), 1, ldb, m, k);
        bool finite = true;
        for (const T& v : a) finite = finite && std::isfinite(std::abs(v));
        if (!finite) {
            throw plugin::Error(FERRO_INVALID_ARGUMENT,
                                "linalg.lstsq: matrix " + std::to_string(bi) + " of input 0 contains NaN or Inf");
        }
        const lapack_int info = lapack::gelsd(lm, ln, lk, a.data(), std::max<lapack_int>(lm, 1), b.data(),
                                              static_cast<lapack_int>(ldb), s.data(), static_cast<R>(p.rtol), &rank, work.data(),
                                              static_cast<lapack_int>(work.size()), rwork.data(), iwork.data());
        if (info > 0)
            throw plugin::Error(FERRO_FAILED_PRECONDITION,
                                "linalg.lstsq: the SVD of matrix " + std::to_string(bi) + " did not converge");
        // Outputs: X (n x k), residuals (k), rank, singular values (min(m, n)).
        const ferro_tensor_view& X = args.outputs[0];
        copy2d(b.data(), 1, ldb, static_cast<T*>(X.data) + out_at[0](bi), stride(X, 2), stride(X, 1), n, k);
        if (residuals) {
            R* res = static_cast<R*>(args.outputs[1].data) + out_at[1](bi);
            const int64_t rs = stride(args.outputs[1], 1);
            for (int64_t j = 0; j < k; ++j) {
                R sum = 0;
                if (rank == ln) {  // LAPACK leaves A's orthogonal complement part of B in rows n..m-1
                    for (int64_t i = n; i < m; ++i) sum += std::norm(b[static_cast<size_t>(i + j * ldb)]);
                } else {
                    for (int64_t i = 0; i < m; ++i) {
                        T r = -Bb[i * stride(B, 2) + j * stride(B, 1)];
                        for (int64_t l = 0; l < n; ++l)
                            r += Ab[i * stride(A, 2) + l * stride(A, 1)] * b[static_cast<size_t>(l + j * ldb)];
                        sum += std::norm(r);
                    }
                }
                res[j * rs] = sum;
            }
        }
        *(static_cast<int64_t*>(args.outputs[2].data) + out_at[2](bi)) = rank;
        R* sv = static_cast<R*>(args.outputs[3].data) + out_at[3](bi);
        for (int64_t i = 0; i < mn; ++i) sv[i * stride(args.outputs[3], 1)] = s[static_cast<size_t>(i)];
    }
}

void run_lstsq(const Plan& p, const ferro_exec_args& args) {
    visit_float(p.dtype, [&](auto t) { lstsq<decltype(t)>(p, args); });
}

// ---- rules
// lstsq: X = P B with P = A^+ (constant rank), residuals r_j = ||A x_j - b_j||^2 with
// R = A X - B (A^H R = 0 at the solution), singular values as svdvals:
//   gA = pinv_backward(gX B^H) + 2 (R diag(g_r)) X^H + U diag(g_s) Vh,  gB = P^H gX - 2 R diag(g_r);
//   dX = dP B + P dB,  dr = 2 Re sum_i conj(R) o (dA X - dB),  ds = Re diag(U^H dA V).
struct LstsqParts {
    TensorRef P, R;  // A^+, and A X - B (only with residuals)
};
LstsqParts lstsq_parts(const Ops& r, ferro_tensor A, ferro_tensor B, ferro_tensor X, bool residuals,
                       const ferro_attr_value* attrs) {
    LstsqParts p;
    std::vector<ferro_named_attr> tol;
    if (attrs[0].type == FERRO_ATTR_F64) tol.push_back(plugin::attr_f64("rtol", attrs[0].v.f64));
    p.P = r.call(linalg_op("linalg.pinv"), std::span<const ferro_tensor>(&A, 1), tol);
    if (residuals) p.R = r.sub(r.matmul(A, X), B);
    return p;
}
bool has_residuals(const Ops& r, ferro_tensor residuals) {  // else the output is empty, [0]
    const ferro_signature s = r.signature(residuals);
    return !(s.ndim == 1 && s.shape[0] == 0);
}

ferro_status lstsq_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        const ferro_tensor A = a.inputs[0], B = a.inputs[1], X = a.outputs[0];
        const ferro_tensor gX = a.cotangents[0], gr = a.cotangents[1], gs = a.cotangents[3];
        const bool residuals = gr != nullptr && has_residuals(r, gr);
        if (!gX && !residuals && !gs) return;
        const LstsqParts p = lstsq_parts(r, A, B, X, residuals, a.attrs);
        const ferro_dtype dtype = a.input_sigs[0].dtype;
        TensorRef gA, gB;
        if (gX) {
            gA = pinv_backward(r, A, p.P, r.matmul(gX, r.mH(B)));
            gB = r.matmul(r.mH(p.P), gX);
        }
        if (residuals) {
            const TensorRef Rg = r.mul(p.R, r.cast(r.unsqueeze(gr, -2), dtype));  // R diag(g_r)
            gA = r.plus(std::move(gA), r.scale(r.matmul(Rg, r.mH(X)), 2));
            gB = r.plus(std::move(gB), r.scale(Rg, -2));
        }
        if (gs) {
            const auto usv = r.call_all(linalg_op("linalg.svd"), {A}, {plugin::attr_bool("full_matrices", false)});
            gA = r.plus(std::move(gA), r.matmul(r.mul(usv[0], r.cast(r.unsqueeze(gs, -2), dtype)), usv[2]));
        }
        if (a.needs_input_grad[0] && gA) a.input_cotangents[0] = gA.release();
        if (a.needs_input_grad[1] && gB) a.input_cotangents[1] = gB.release();
    });
}
ferro_status lstsq_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor A = a.inputs[0], B = a.inputs[1], X = a.outputs[0];
        const ferro_tensor dA = a.input_tangents[0], dB = a.input_tangents[1];
        if (!dA && !dB) return;
        const bool residuals = has_residuals(r, a.outputs[1]);
        const LstsqParts p = lstsq_parts(r, A, B, X, residuals, a.attrs);
        TensorRef dX;
        if (dA) dX = r.matmul(pinv_forward(r, A, p.P, dA), B);
        if (dB) dX = r.plus(std::move(dX), r.matmul(p.P, dB));
        a.output_tangents[0] = dX.release();
        if (residuals) {
            TensorRef change = dA ? r.matmul(dA, X) : TensorRef();
            if (dB) change = change ? r.sub(change, dB) : r.neg(dB);
            const int64_t rows[1] = {-2};
            a.output_tangents[1] = r.scale(r.sum(r.real_part(r.mul(r.conj(p.R), change)), rows, false), 2).release();
        }
        if (dA) {
            const auto usv = r.call_all(linalg_op("linalg.svd"), {A}, {plugin::attr_bool("full_matrices", false)});
            a.output_tangents[3] = r.real_part(r.diagonal(r.matmul(r.mH(usv[0]), r.matmul(dA, r.mH(usv[2]))))).release();
        }
    });
}

}  // namespace

OpRow op_rows::lstsq() {
    return {.op = Op::lstsq,
            .doc = "(X, residuals, rank, singular values): X minimises ||A X - B|| (minimum norm)",
            .n_inputs = 2,
            .n_outputs = 4,
            .attrs = lstsq_attrs,
            .infer = infer_lstsq,
            .diff_inputs = bit(0) | bit(1),
            .diff_outputs = bit(0) | bit(1) | bit(3),
            .save_inputs = bit(0) | bit(1),
            .save_outputs = bit(0),
            .vjp = lstsq_vjp,
            .jvp = lstsq_jvp,
            .cpu = {.configure = configure_lstsq, .whole = run_lstsq}};
}

}  // namespace ferro::linalg
