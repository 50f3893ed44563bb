// linalg.vector_norm, linalg.matrix_norm and linalg.cond: whole-call executors (any layout of
// the reduced or matrix axes; vector_norm.hpp, matrix_norm.hpp), rules through host ops.
#include "../matrix_norm.hpp"
#include "../op_row.hpp"
#include "../rules.hpp"
#include "../vector_norm.hpp"

#include <cmath>

namespace ferro::linalg {
namespace {

const ferro_attr_spec vector_norm_attrs[] = {
    plugin::spec_f64("ord", 2.0, "p: any real, inf, -inf, or 0 (the count of non-zeros)"),
    plugin::spec_optional("axes", FERRO_ATTR_I64_ARRAY, "axes to reduce (None or []: all)"),
    plugin::spec_bool("keepdim", false, "keep reduced axes as size 1")};
const ferro_attr_spec matrix_norm_attrs[] = {
    plugin::spec_str("ord", "fro", "fro | nuc | inf | -inf | 1 | -1 | 2 | -2"),
    plugin::spec_optional("axes", FERRO_ATTR_I64_ARRAY, "the (row, column) axes of the matrices (None: (-2, -1))"),
    plugin::spec_bool("keepdim", false, "keep the two axes as size 1")};
const ferro_attr_spec cond_attrs[] = {
    plugin::spec_str("p", "2", "the norm: 2 | -2 (singular values, any shape) | fro | nuc | inf | -inf | 1 | -1 (square)")};

// ---- vector_norm
ferro_status infer_vector_norm(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        constexpr Op op = Op::vector_norm;
        const ferro_signature& in = a->inputs[0];
        require_float(op, in, 0);
        const std::vector<int64_t> axes = norm_axes(op, a->attrs[1], in.ndim);
        const bool keepdim = a->attrs[2].v.boolean != 0;
        const double ord = a->attrs[0].v.f64;
        if (std::isnan(ord)) invalid(op, "attribute ord must be a number, got nan");
        ferro_signature out{};
        out.struct_size = sizeof out;
        out.dtype = real_dtype(in.dtype);
        int64_t reduced = 1;
        for (int d = 0; d < in.ndim; ++d) {
            const bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
            if (r) reduced *= in.shape[d];
            if (!r) out.shape[out.ndim++] = in.shape[d];
            else if (keepdim) out.shape[out.ndim++] = 1;
        }
        if (reduced == 0 && std::isinf(ord)) {
            invalid(op, "the " + std::string(ord > 0 ? "inf" : "-inf") +
                            "-norm of an empty reduction is undefined (input 0 has shape " + shape_str(dims(in)) + ")");
        }
        a->outputs[0] = out;
        a->n_outputs = 1;
    });
}

void configure_vector_norm(Plan& p, const ferro_prepare_args& args) {
    p.ord = args.attrs[0].v.f64;
    p.reduced = norm_axes(Op::vector_norm, args.attrs[1], args.inputs[0].ndim);
}

void run_vector_norm(const Plan& p, const ferro_exec_args& args) {
    visit_float(p.dtype, [&](auto t) {
        using T = decltype(t);
        vector_norm<T>(args.inputs[0], p.reduced, p.ord, static_cast<Real<T>*>(args.outputs[0].data));
    });
}

// vector_norm rules, n = ||x||_p over the reduced axes, s = sgn(x) = x / |x| (0 at 0):
//   p = 2: gx = g x / n;  p = 1: g s;  p = +-inf: g s on the elements with |x| = n, shared
//   evenly (PyTorch);  p = 0: no gradient;  other p: g s |x|^(p-1) / n^(p-1) (0 where x = 0).
//   The JVP is Re of the same weights against dx: dn = sum Re(conj(w) dx).

struct NormParts {
    TensorRef n, weight;  // n with reduced axes kept (size 1); weight: dn/dx-bar per element (x's dtype)
};

NormParts norm_weight(const Ops& r, ferro_tensor x, ferro_tensor n_out, const ferro_attr_value* attrs) {
    const ferro_signature sx = r.signature(x);
    const double ord = attrs[0].v.f64;
    const std::vector<int64_t> axes = norm_axes(Op::vector_norm, attrs[1], sx.ndim);
    std::vector<int64_t> kept(sx.shape, sx.shape + sx.ndim);
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    NormParts p;
    p.n = r.reshape(n_out, kept);
    if (ord == 0) return p;
    const TensorRef s = r.call(FERRO_CORE_OP_SIGN, {x});  // x / |x|, 0 at 0
    if (ord == 1) {
        p.weight = r.borrow(s.get());
        return p;
    }
    const TensorRef mag = r.call(FERRO_CORE_OP_ABS, {x});
    if (std::isinf(ord)) {
        const TensorRef hit = r.cast(r.call(FERRO_CORE_OP_EQ, {mag, r.expand(p.n, r.shape(x))}), real_dtype(sx.dtype));
        const TensorRef count = r.sum(hit, axes, true);
        p.weight = r.mul(s, r.cast(r.div(hit, count), sx.dtype));
        return p;
    }
    if (ord == 2) {
        const TensorRef safe = r.where(r.call(FERRO_CORE_OP_EQ, {p.n, r.scalar(p.n, 0)}), r.scalar(p.n, 1), p.n);
        p.weight = r.div(x, r.cast(safe, sx.dtype));  // 0 / 1 where the norm is 0
        return p;
    }
    // |x|^(p-1) / n^(p-1), 0 where x = 0 (and where n = 0).
    const TensorRef ratio = r.div(mag, r.where(r.call(FERRO_CORE_OP_EQ, {p.n, r.scalar(p.n, 0)}), r.scalar(p.n, 1), p.n));
    const TensorRef powered = r.call(FERRO_CORE_OP_POW, {ratio, r.scalar(ratio, ord - 1)});
    const TensorRef zero = r.call(FERRO_CORE_OP_EQ, {mag, r.scalar(mag, 0)});
    p.weight = r.mul(s, r.cast(r.where(zero, r.scalar(powered, 0), powered), sx.dtype));
    return p;
}

ferro_status vector_norm_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const NormParts p = norm_weight(r, a.inputs[0], a.outputs[0], a.attrs);
        if (!p.weight) return;  // ord 0: no gradient
        const TensorRef g = r.reshape(a.cotangents[0], r.shape(p.n));
        a.input_cotangents[0] = r.mul(p.weight, r.cast(g, a.input_sigs[0].dtype)).release();
    });
}
ferro_status vector_norm_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const NormParts p = norm_weight(r, a.inputs[0], a.outputs[0], a.attrs);
        const ferro_signature sx = r.signature(a.inputs[0]);
        const std::vector<int64_t> axes = norm_axes(Op::vector_norm, a.attrs[1], sx.ndim);
        const ferro_signature so = r.signature(a.outputs[0]);
        if (!p.weight) {
            a.output_tangents[0] = r.zeros_like(a.outputs[0]).release();
            return;
        }
        const TensorRef dn = r.sum(r.real_part(r.mul(r.conj(p.weight), a.input_tangents[0])), axes, true);
        a.output_tangents[0] = r.reshape(dn, std::span<const int64_t>(so.shape, static_cast<size_t>(so.ndim))).release();
    });
}

// ---- matrix_norm
ferro_status infer_matrix_norm(const ferro_host_api* host, ferro_infer_args* a) {
    return plugin::guard(host, [&] {
        constexpr Op op = Op::matrix_norm;
        const ferro_signature& in = a->inputs[0];
        require_float(op, in, 0);
        if (in.ndim < 2) invalid(op, "input 0 must have at least 2 dimensions, got shape " + shape_str(dims(in)));
        const MatrixOrd ord = matrix_ord(op, a->attrs[0].v.str);
        const auto [r, c] = matrix_axes(op, a->attrs[1], in.ndim);
        const bool keepdim = a->attrs[2].v.boolean != 0;
        // The max or min over row sums (inf, -inf), column sums (1, -1) or singular values (2, -2)
        // needs at least one of them; fro and nuc of an empty matrix are 0.
        const bool by_rows = ord == MatrixOrd::inf || ord == MatrixOrd::minus_inf;
        const bool by_columns = ord == MatrixOrd::one || ord == MatrixOrd::minus_one;
        const bool spectral = ord == MatrixOrd::two || ord == MatrixOrd::minus_two;
        if ((by_rows && in.shape[r] == 0) || (by_columns && in.shape[c] == 0) ||
            (spectral && (in.shape[r] == 0 || in.shape[c] == 0))) {
            invalid(op, std::string("the ") + a->attrs[0].v.str + "-norm of an empty matrix is undefined (input 0 has shape " +
                            shape_str(dims(in)) + ")");
        }
        ferro_signature out{};
        out.struct_size = sizeof out;
        out.dtype = real_dtype(in.dtype);
        for (int d = 0; d < in.ndim; ++d) {
            if (d != r && d != c) out.shape[out.ndim++] = in.shape[d];
            else if (keepdim) out.shape[out.ndim++] = 1;
        }
        a->outputs[0] = out;
        a->n_outputs = 1;
    });
}

void configure_matrix_norm(Plan& p, const ferro_prepare_args& args) {
    p.matrix_ord = matrix_ord(Op::matrix_norm, args.attrs[0].v.str);
    std::tie(p.row_axis, p.col_axis) = matrix_axes(Op::matrix_norm, args.attrs[1], args.inputs[0].ndim);
}

void run_matrix_norm(const Plan& p, const ferro_exec_args& args) {
    visit_float(p.dtype, [&](auto t) {
        using T = decltype(t);
        matrix_norm<T>(p, args.inputs[0], static_cast<Real<T>*>(args.outputs[0].data));
    });
}

// matrix_norm rules, n = ||A|| over the (row, column) axes. With the axes moved last, gA = g W
// and dn = sum Re(conj(W) o dA) for the weight W: A / n (fro), U Vh (nuc), u1 v1^H (2),
// u_k v_k^H (-2), sgn(A) on the largest (smallest) column (1, -1) or row (inf, -inf) sums,
// shared evenly on ties (PyTorch).

struct MatrixNormParts {
    std::vector<int64_t> perm, inverse;  // the matrix axes last, and back
    TensorRef A, n, weight;              // A and W permuted; n as [..., 1, 1]
};

MatrixNormParts matrix_norm_parts(const Ops& r, ferro_tensor A, ferro_tensor n_out, const ferro_attr_value* attrs) {
    const ferro_signature s = r.signature(A);
    const auto [row, col] = matrix_axes(Op::matrix_norm, attrs[1], s.ndim);
    MatrixNormParts p;
    std::vector<int64_t> kept_shape;
    for (int64_t d = 0; d < s.ndim; ++d) {
        if (d != row && d != col) {
            p.perm.push_back(d);
            kept_shape.push_back(s.shape[d]);
        }
    }
    p.perm.push_back(row);
    p.perm.push_back(col);
    p.inverse.resize(p.perm.size());
    for (size_t i = 0; i < p.perm.size(); ++i) p.inverse[static_cast<size_t>(p.perm[i])] = static_cast<int64_t>(i);
    kept_shape.push_back(1);
    kept_shape.push_back(1);
    p.A = r.permute(A, p.perm);
    p.n = r.reshape(n_out, kept_shape);
    const ferro_dtype dtype = s.dtype;
    const int64_t k = std::min(s.shape[row], s.shape[col]);
    switch (matrix_ord(Op::matrix_norm, attrs[0].v.str)) {
        case MatrixOrd::fro: {
            const TensorRef safe = r.where(r.call(FERRO_CORE_OP_EQ, {p.n, r.scalar(p.n, 0)}), r.scalar(p.n, 1), p.n);
            p.weight = r.div(p.A, r.cast(safe, dtype));
            break;
        }
        case MatrixOrd::nuc:
        case MatrixOrd::two:
        case MatrixOrd::minus_two: {
            const auto usv = r.call_all(linalg_op("linalg.svd"), {p.A}, {plugin::attr_bool("full_matrices", false)});
            const MatrixOrd o = matrix_ord(Op::matrix_norm, attrs[0].v.str);
            if (o == MatrixOrd::nuc) {
                p.weight = r.matmul(usv[0], usv[2]);
            } else {
                const int64_t i = o == MatrixOrd::two ? 0 : k - 1;
                p.weight = r.matmul(r.slice(usv[0], -1, i, i + 1), r.slice(usv[2], -2, i, i + 1));
            }
            break;
        }
        default: {
            const MatrixOrd o = matrix_ord(Op::matrix_norm, attrs[0].v.str);
            const bool by_column = o == MatrixOrd::one || o == MatrixOrd::minus_one;
            const int64_t across[1] = {by_column ? -2 : -1}, along[1] = {by_column ? -1 : -2};
            const TensorRef sums = r.sum(r.call(FERRO_CORE_OP_ABS, {p.A}), across, true);
            // The extreme of these sums, not the forward's n: the module may add in another
            // order (the last bits differ), and then no sum would equal n.
            const bool largest = o == MatrixOrd::one || o == MatrixOrd::inf;
            const TensorRef extreme = r.call(largest ? FERRO_CORE_OP_MAX : FERRO_CORE_OP_MIN, {sums},
                                             {plugin::attr_i64s("axes", along), plugin::attr_bool("keepdim", true)});
            const TensorRef hit = r.cast(r.call(FERRO_CORE_OP_EQ, {sums, extreme}), real_dtype(dtype));
            const TensorRef share = r.div(hit, r.sum(hit, along, true));
            p.weight = r.mul(r.call(FERRO_CORE_OP_SIGN, {p.A}), r.cast(share, dtype));
            break;
        }
    }
    return p;
}

ferro_status matrix_norm_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const MatrixNormParts p = matrix_norm_parts(r, a.inputs[0], a.outputs[0], a.attrs);
        const TensorRef g = r.cast(r.reshape(a.cotangents[0], r.shape(p.n)), a.input_sigs[0].dtype);
        a.input_cotangents[0] = r.permute(r.mul(g, p.weight), p.inverse).release();
    });
}
ferro_status matrix_norm_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const MatrixNormParts p = matrix_norm_parts(r, a.inputs[0], a.outputs[0], a.attrs);
        const int64_t last2[2] = {-2, -1};
        const TensorRef dA = r.permute(a.input_tangents[0], p.perm);
        const TensorRef dn = r.sum(r.real_part(r.mul(r.conj(p.weight), dA)), last2, false);
        a.output_tangents[0] = r.reshape(dn, r.shape(a.outputs[0])).release();
    });
}

// ---- cond
ferro_status infer_cond(const ferro_host_api* host, ferro_infer_args* a) {
    return infer_matrix(host, a, Op::cond, false, [&](const MatrixInput& in) {
        const MatrixOrd p = matrix_ord(Op::cond, a->attrs[0].v.str);
        if (p != MatrixOrd::two && p != MatrixOrd::minus_two) require_matrix(Op::cond, in.sig, 0, true);
        if (in.k == 0) {
            invalid(Op::cond,
                    "the condition number of an empty matrix is undefined (input 0 has shape " + shape_str(dims(in.sig)) + ")");
        }
        a->outputs[0] = out_sig(in.real, in.batch, {});
        return 1;
    });
}

void configure_cond(Plan& p, const ferro_prepare_args& args) { p.matrix_ord = matrix_ord(Op::cond, args.attrs[0].v.str); }

void run_cond(const Plan& p, const ferro_exec_args& args) {
    visit_float(p.dtype, [&](auto t) {
        using T = decltype(t);
        cond<T>(p, args.inputs[0], static_cast<Real<T>*>(args.outputs[0].data));
    });
}

// cond rules: with G the weight of d(kappa) (gA = g G, d kappa = sum Re(conj(G) dA)):
//   p = 2: G = u1 v1^H / s_k - s_1 / s_k^2 u_k v_k^H (and -2 the other way round);
//   others: kappa = n1 n2, n1 = ||A||, n2 = ||A^-1||: G = n2 W1 - n1 A^-H W2 A^-H, with W1, W2
//   the matrix_norm weights at A and A^-1.

TensorRef cond_weight(const Ops& r, ferro_tensor A, const char* p) {
    const MatrixOrd ord = matrix_ord(Op::cond, p);
    const ferro_dtype dtype = r.signature(A).dtype;
    if (ord == MatrixOrd::two || ord == MatrixOrd::minus_two) {
        const auto usv = r.call_all(linalg_op("linalg.svd"), {A}, {plugin::attr_bool("full_matrices", false)});
        const int64_t k = r.dim(usv[1], 1);
        auto pair = [&](int64_t i) { return r.matmul(r.slice(usv[0], -1, i, i + 1), r.slice(usv[2], -2, i, i + 1)); };
        auto value = [&](int64_t i) { return r.unsqueeze(r.cast(r.slice(usv[1], -1, i, i + 1), dtype), -1); };  // [..., 1, 1]
        const int64_t top = ord == MatrixOrd::two ? 0 : k - 1, bottom = ord == MatrixOrd::two ? k - 1 : 0;
        // kappa = s_top / s_bottom
        const TensorRef st = value(top), sb = value(bottom);
        return r.sub(r.div(pair(top), sb), r.mul(r.div(st, r.mul(sb, sb)), pair(bottom)));
    }
    ferro_attr_value attrs[3] = {};
    attrs[0].type = FERRO_ATTR_STR;
    attrs[0].v.str = p;
    attrs[1].type = FERRO_ATTR_NONE;
    attrs[2].type = FERRO_ATTR_BOOL;
    const TensorRef inv = r.inv(A);
    const TensorRef n1 = r.call(linalg_op("linalg.matrix_norm"), {A}, {plugin::attr_str("ord", p)});
    const TensorRef n2 = r.call(linalg_op("linalg.matrix_norm"), {inv}, {plugin::attr_str("ord", p)});
    const MatrixNormParts w1 = matrix_norm_parts(r, A, n1.get(), attrs);
    const MatrixNormParts w2 = matrix_norm_parts(r, inv.get(), n2.get(), attrs);
    const TensorRef invh = r.mH(inv);
    const TensorRef a_part = r.mul(r.cast(r.unsqueeze(r.unsqueeze(n2, -1), -1), dtype), w1.weight);
    const TensorRef inv_part =
        r.mul(r.cast(r.unsqueeze(r.unsqueeze(n1, -1), -1), dtype), r.matmul(invh, r.matmul(w2.weight, invh)));
    return r.sub(a_part, inv_part);
}

ferro_status cond_vjp(const ferro_host_api* host, const ferro_vjp_args* args) {
    return vjp_rule(host, args, [](const Ops& r, const ferro_vjp_args& a) {
        if (!a.cotangents[0]) return;
        const TensorRef G = cond_weight(r, a.inputs[0], a.attrs[0].v.str);
        const TensorRef g = r.cast(r.unsqueeze(r.unsqueeze(a.cotangents[0], -1), -1), a.input_sigs[0].dtype);
        a.input_cotangents[0] = r.mul(g, G).release();
    });
}
ferro_status cond_jvp(const ferro_host_api* host, const ferro_jvp_args* args) {
    return jvp_rule(host, args, [](const Ops& r, const ferro_jvp_args& a) {
        if (!a.input_tangents[0]) return;
        const TensorRef G = cond_weight(r, a.inputs[0], a.attrs[0].v.str);
        const int64_t last2[2] = {-2, -1};
        a.output_tangents[0] = r.sum(r.real_part(r.mul(r.conj(G), a.input_tangents[0])), last2, false).release();
    });
}

}  // namespace

OpRow op_rows::vector_norm() {
    return {.op = Op::vector_norm,
            .doc = "(sum |x|^p)^(1/p) over axes; max |x| for inf, min for -inf, non-zeros for 0",
            .attrs = vector_norm_attrs,
            .infer = infer_vector_norm,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .save_outputs = bit(0),
            .vjp = vector_norm_vjp,
            .jvp = vector_norm_jvp,
            .cpu = {.configure = configure_vector_norm, .whole = run_vector_norm}};
}

OpRow op_rows::matrix_norm() {
    return {.op = Op::matrix_norm,
            .doc = "Frobenius, nuclear, spectral (2, -2), max/min column (1, -1) or row (inf, -inf) sum norms",
            .attrs = matrix_norm_attrs,
            .infer = infer_matrix_norm,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .save_outputs = bit(0),
            .vjp = matrix_norm_vjp,
            .jvp = matrix_norm_jvp,
            .cpu = {.configure = configure_matrix_norm, .whole = run_matrix_norm}};
}

OpRow op_rows::cond() {
    return {.op = Op::cond,
            .doc = "the condition number ||A|| ||A^-1|| (p = 2: largest / smallest singular value)",
            .attrs = cond_attrs,
            .infer = infer_cond,
            .diff_inputs = bit(0),
            .diff_outputs = bit(0),
            .save_inputs = bit(0),
            .vjp = cond_vjp,
            .jvp = cond_jvp,
            .cpu = {.configure = configure_cond, .whole = run_cond}};
}

}  // namespace ferro::linalg
