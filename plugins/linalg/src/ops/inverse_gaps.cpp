// linalg.inverse_gaps: F[..., i, j] = f(y_j - y_i) with y = x (or x^2), f(d) = 1/d, or
// d / (d^2 + eps) when eps > 0, and 0 on the diagonal: the spectral factor of the eigh and svd
// derivatives, as one op instead of the eight calls (squares, two unsqueezes, a difference, an
// identity, a shift, a reciprocal and its undoing) those rules would otherwise spend on it.
#include "../op_row.hpp"
#include "../rules.hpp"

#include <vector>

namespace ferro::linalg {
namespace {

const ferro_attr_spec inverse_gaps_attrs[] = {
    plugin::spec_f64("eps", 0.0, "regulariser: 1/d becomes d/(d^2 + eps) (0: exact)"),
    plugin::spec_bool("squares", false, "the gaps of x^2 (singular values) instead of x (eigenvalues)")};

ferro_status infer_inverse_gaps(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        constexpr Op op = Op::inverse_gaps;
        const ferro_signature& in = a->inputs[0];
        if (in.dtype != FERRO_DTYPE_F32 && in.dtype != FERRO_DTYPE_F64) {
            invalid(op, std::string("input 0 must be f32 or f64 (eigenvalues or singular values), got ") +
                            plugin::dtype_attr_name(in.dtype));
        }
        if (in.ndim < 1 || in.ndim >= FERRO_MAX_NDIM) {
            invalid(op, "input 0 must be a vector or a batch of vectors ([..., n], at most " +
                            std::to_string(FERRO_MAX_NDIM - 1) + " dimensions), got shape " + shape_str(dims(in)));
        }
        const double eps = a->attrs[0].v.f64;
        if (!(eps >= 0)) invalid(op, "attribute eps must be >= 0, got " + std::to_string(eps));
        const int64_t n = in.shape[in.ndim - 1];
        a->outputs[0] = out_sig(in.dtype, batch_of(in, 1), {n, n});
        a->n_outputs = 1;
    });
}

void configure_inverse_gaps(Plan& p, const ferro_prepare_args& args) {
    p.eps = args.attrs[0].v.f64;
    p.squares = args.attrs[1].v.boolean != 0;
}

template <class T> void inverse_gaps(const ferro_tensor_view& x, bool squares, double eps, const ferro_tensor_view& out) {
    const int batch_dims = x.ndim - 1;
    const int64_t n = x.shape[batch_dims], stride = x.strides[batch_dims];
    const std::span<const int64_t> batch(x.shape, static_cast<size_t>(batch_dims));
    const int64_t row_stride = out.strides[batch_dims], col_stride = out.strides[batch_dims + 1];
    int64_t count = 1;
    for (int64_t d : batch) count *= d;
    std::vector<T> y(static_cast<size_t>(n));
    const T e = static_cast<T>(eps);
    for (int64_t b = 0; b < count; ++b) {
        const T* v = static_cast<const T*>(x.data) + offset_of(b, batch, {x.strides, static_cast<size_t>(batch_dims)});
        T* f = static_cast<T*>(out.data) + offset_of(b, batch, {out.strides, static_cast<size_t>(batch_dims)});
        for (int64_t i = 0; i < n; ++i) y[i] = squares ? v[i * stride] * v[i * stride] : v[i * stride];
        for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < n; ++j) {
                const T d = y[j] - y[i];
                f[i * row_stride + j * col_stride] = i == j ? T(0) : eps == 0 ? T(1) / d : d / (d * d + e);
            }
        }
    }
}

void run_inverse_gaps(const Plan& p, const ferro_exec_args& args) {
    if (p.dtype == FERRO_DTYPE_F32) return inverse_gaps<float>(args.inputs[0], p.squares, p.eps, args.outputs[0]);
    inverse_gaps<double>(args.inputs[0], p.squares, p.eps, args.outputs[0]);
}

// ---- rules
// inverse_gaps: F = f(D), D_ij = y_j - y_i, y = x (or x^2), f(d) = 1/d or d / (d^2 + eps).
//   f'(d) = -F^2 (eps = 0) or (eps - d^2) / (d^2 + eps)^2, taken as 0 on the diagonal (F_ii = 0
//   whatever y is); gy = colsum(gF o f') - rowsum(gF o f'), gx = 2 x gy with squares;
//   dF = f' o (dy_j - dy_i).

struct GapParts {
    TensorRef slope;  // f'(D), 0 on the diagonal
    bool squares = false;
};

GapParts gap_slope(const Ops& r, Arg x, Arg F, const ferro_attr_value* attrs) {
    const double eps = attrs[0].v.f64;
    const bool squares = attrs[1].v.boolean != 0;
    if (eps == 0) return {r.neg(r.mul(F, F)), squares};
    const TensorRef y = squares ? r.mul(x, x) : r.borrow(x.get());
    const TensorRef D = r.sub(r.unsqueeze(y, -2), r.unsqueeze(y, -1));
    const TensorRef D2 = r.mul(D, D);
    const TensorRef den = r.add(D2, r.scalar(D2, eps));
    const int64_t n = r.dim(x, 1);
    const TensorRef off_diagonal = r.constant_matrix(x, n, [](int64_t i, int64_t j) { return i == j ? 0.0 : 1.0; });
    return {r.mul(r.div(r.sub(r.scalar(D2, eps), D2), r.mul(den, den)), off_diagonal), squares};
}

ferro_status inverse_gaps_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const ferro_tensor x = a.inputs[0];
        const GapParts p = gap_slope(r, x, a.outputs[0], a.attrs);
        const TensorRef gD = r.mul(a.cotangents[0], p.slope);
        const int64_t rows[1] = {-2}, cols[1] = {-1};
        TensorRef gx = r.sub(r.sum(gD, rows, false), r.sum(gD, cols, false));  // gy
        if (p.squares) gx = r.mul(gx, r.scale(x, 2));
        a.input_cotangents[0] = gx.release();
    });
}

ferro_status inverse_gaps_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        const ferro_tensor dx = a.input_tangents[0];
        if (!dx) return;
        const ferro_tensor x = a.inputs[0];
        const GapParts p = gap_slope(r, x, a.outputs[0], a.attrs);
        const TensorRef dy = p.squares ? r.mul(dx, r.scale(x, 2)) : r.borrow(dx);
        a.output_tangents[0] = r.mul(p.slope, r.sub(r.unsqueeze(dy, -2), r.unsqueeze(dy, -1))).release();
    });
}

}  // namespace

OpRow op_rows::inverse_gaps() {
    return {.op = Op::inverse_gaps,
            .doc =
                "F[..., i, j] = 1/(x_j - x_i) (of x^2 with squares), 0 on the diagonal: the spectral factor of eigh "
                "and svd derivatives",
            .attrs = inverse_gaps_attrs,
            .dtypes = kRealDtypes,
            .infer = infer_inverse_gaps,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .save_outputs = bit(0),
            .vjp = inverse_gaps_vjp,
            .jvp = inverse_gaps_jvp,
            .cpu = {.configure = configure_inverse_gaps, .whole = run_inverse_gaps}};
}

}  // namespace ferro::linalg
