// VJP rules of the core ops that move or combine elements: reductions, matmul, views and
// joins. Each is a composition of core ops, so its own derivative comes for free.
#include "ops/grad_rules.hpp"
#include "ops/op_util.hpp"

#include <algorithm>
#include <numeric>
#include <span>

namespace ferro::host::ops {
namespace {

using plugin::TensorRef;
using Shape = std::vector<int64_t>;

constexpr uint64_t kIn0 = FERRO_MASK_BIT(0), kIn1 = FERRO_MASK_BIT(1);
constexpr uint64_t kOut0 = FERRO_MASK_BIT(0);

int64_t wrap_axis(int64_t axis, size_t ndim) { return axis < 0 ? axis + static_cast<int64_t>(ndim) : axis; }

// ---- reductions ----

// Input 0's shape with the reduced axes (attribute 0) set to 1.
Shape kept_of(const Vjp& v) { return ops::kept_shape(v.shape(0), v.attr(0)); }

// `a` and `b` equal once their leading 1s are dropped: they broadcast alike.
bool same_but_leading_ones(std::span<const int64_t> a, std::span<const int64_t> b) {
    auto drop = [](std::span<const int64_t> s) {
        while (!s.empty() && s.front() == 1) s = s.subspan(1);
        return s;
    };
    const auto x = drop(a), y = drop(b);
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
}

// A reduced tensor (with or without keepdim) broadcast back over the input's shape. The
// reshape to the kept shape is needed only when a reduced axis without keepdim sat left of a
// kept one (a full sum's 0-d result broadcasts as it is).
TensorRef spread(const Vjp& v, plugin::Arg reduced) {
    const Shape kept = kept_of(v);
    if (same_but_leading_ones(kept, plugin::shape_of(v.r.signature(reduced)))) return v.r.expand(reduced, v.shape(0));
    return v.r.expand(v.r.reshape(reduced, kept), v.shape(0));
}

void sum_rule(const Vjp& v) { v.set(0, spread(v, v.g())); }

void mean_rule(const Vjp& v) {
    const Shape keep = kept_of(v);
    const int64_t in = std::accumulate(v.shape(0).begin(), v.shape(0).end(), int64_t{1}, std::multiplies<>());
    const int64_t out = std::accumulate(keep.begin(), keep.end(), int64_t{1}, std::multiplies<>());
    const double count = out > 0 ? static_cast<double>(in) / static_cast<double>(out) : 1.0;
    v.set(0, v.r.mul(spread(v, v.g()), v.r.scalar(v.g(), 1.0 / count)));
}

void prod_rule(const Vjp& v) {
    v.set(0, v.r.mul(spread(v, v.g()), v.r.conj(prod_of_others(v.r, v.x(0), v.shape(0), v.attr(0)))));
}

// max/min over axes: the gradient is shared evenly by the elements equal to the result.
void extremum_rule(const Vjp& v) {
    const TensorRef hit = v.r.call(FERRO_CORE_OP_EQ, {v.x(0), spread(v, v.y())});
    const ferro_attr_value& axes_attr = v.attr(0);
    const TensorRef count =
        axes_attr.type == FERRO_ATTR_NONE
            ? v.r.call(FERRO_CORE_OP_SUM, {hit}, {plugin::attr_bool("keepdim", true)})
            : v.r.call(FERRO_CORE_OP_SUM, {hit},
                       {plugin::attr_i64s("axes", {axes_attr.v.i64_array, axes_attr.count}), plugin::attr_bool("keepdim", true)});
    const TensorRef share = v.r.div(spread(v, v.g()), v.r.expand(count, v.shape(0)));
    v.set(0, v.r.where(hit, share, v.r.scalar(v.g(), 0)));
}

// ---- matmul ----

// numpy matmul promotes 1-d operands to a row (left) or column (right) and drops that axis
// from the result; the gradients are g B^H and A^H g in the promoted shapes (the host sums
// broadcast batch axes away).
void matmul_rule(const Vjp& v) {
    const bool a_vec = v.shape(0).size() == 1, b_vec = v.shape(1).size() == 1;
    const TensorRef a = a_vec ? v.r.unsqueeze(v.x(0), 0) : v.r.borrow(v.x(0));
    const TensorRef b = b_vec ? v.r.unsqueeze(v.x(1), -1) : v.r.borrow(v.x(1));
    TensorRef g = v.r.borrow(v.g());
    if (b_vec) g = v.r.unsqueeze(g, -1);  // first: a vector-vector product's g is 0-d
    if (a_vec) g = v.r.unsqueeze(g, b_vec ? 0 : -2);
    if (v.needs(0)) {
        TensorRef ga = v.r.matmul(g, v.r.conj(v.r.transpose(b)));
        v.set(0, a_vec ? v.r.squeeze(ga, -2) : std::move(ga));
    }
    if (v.needs(1)) {
        TensorRef gb = v.r.matmul(v.r.conj(v.r.transpose(a)), g);
        v.set(1, b_vec ? v.r.squeeze(gb, -1) : std::move(gb));
    }
}

// ---- views ----

void reshape_back(const Vjp& v) { v.set(0, v.r.reshape(v.g(), v.shape(0))); }

void permute_rule(const Vjp& v) {
    const ferro_attr_value& axes = v.attr(0);
    Shape inverse(axes.count);
    for (uint32_t i = 0; i < axes.count; ++i) inverse[static_cast<size_t>(wrap_axis(axes.v.i64_array[i], axes.count))] = i;
    v.set(0, v.r.permute(v.g(), inverse));
}

void transpose_rule(const Vjp& v) { v.set(0, v.r.transpose(v.g(), v.attr(0).v.i64, v.attr(1).v.i64)); }

// expand: the host sums the broadcast axes of the cotangent away.
void expand_rule(const Vjp& v) { v.set(0, v.r.borrow(v.g())); }

// Zeros with `g` placed along `axis` at start, start + step, ... (step > 0), in a tensor whose
// `axis` has `size` elements: g interleaved with step - 1 zero slices, then padded.
TensorRef embed_strided(const Vjp& v, plugin::Arg g, size_t axis, int64_t size, int64_t start, int64_t step) {
    const ferro_signature s = v.r.signature(g);
    Shape shape(s.shape, s.shape + s.ndim);
    const int64_t len = shape[axis];
    const char* engine = v.r.host()->tensor_engine(g.get());
    const auto ax = static_cast<int64_t>(axis);
    TensorRef body = v.r.borrow(g.get());
    if (step > 1 && len > 0) {
        Shape gap = shape;
        gap.insert(gap.begin() + ax + 1, step - 1);
        gap[axis] = len;
        const TensorRef spaced = v.r.call(FERRO_CORE_OP_CONCAT, {v.r.unsqueeze(g, ax + 1), v.r.zeros(gap, s.dtype, engine)},
                                          {plugin::attr_i64("axis", ax + 1)});
        Shape merged = shape;
        merged[axis] = len * step;
        body = v.r.call(
            FERRO_CORE_OP_SLICE, {v.r.reshape(spaced, merged)},
            {plugin::attr_i64("axis", ax), plugin::attr_i64("start", 0), plugin::attr_i64("stop", (len - 1) * step + 1)});
    }
    const int64_t covered = len > 0 ? (len - 1) * step + 1 : 0;
    Shape before = shape, after = shape;
    before[axis] = start;
    after[axis] = size - start - covered;
    return v.r.call(FERRO_CORE_OP_CONCAT, {v.r.zeros(before, s.dtype, engine), body, v.r.zeros(after, s.dtype, engine)},
                    {plugin::attr_i64("axis", ax)});
}

// slice(axis, start, stop, step): the cotangent goes back to the positions it was read from;
// a negative step reads them in reverse, so the reversed cotangent goes in ascending order.
void slice_rule(const Vjp& v) {
    const size_t axis = static_cast<size_t>(wrap_axis(v.attr(0).v.i64, v.shape(0).size()));
    const int64_t size = v.shape(0)[axis], step = v.attr(3).v.i64;
    const auto [start, len] = slice_span(size, v.attr(1), v.attr(2), step);
    if (len == 0) return;
    if (step > 0) {
        v.set(0, embed_strided(v, v.g(), axis, size, start, step));
        return;
    }
    const TensorRef reversed = v.r.call(FERRO_CORE_OP_SLICE, {v.g()},
                                        {plugin::attr_i64("axis", static_cast<int64_t>(axis)), plugin::attr_i64("step", -1)});
    v.set(0, embed_strided(v, reversed, axis, size, start + (len - 1) * step, -step));
}

// diagonal(offset, axis1, axis2): the cotangent becomes a diagonal matrix (g * eye), padded
// to the input's (axis1, axis2) plane at the offset, with the plane moved back into place.
void diagonal_rule(const Vjp& v) {
    const auto in = v.shape(0);
    const size_t n_dim = in.size();
    const int64_t offset = v.attr(0).v.i64;
    const auto a1 = static_cast<size_t>(wrap_axis(v.attr(1).v.i64, n_dim));
    const auto a2 = static_cast<size_t>(wrap_axis(v.attr(2).v.i64, n_dim));
    const ferro_signature gs = v.r.signature(v.g());
    const int64_t len = gs.shape[gs.ndim - 1];
    if (len == 0) return;
    const char* engine = v.r.host()->tensor_engine(v.g());
    const TensorRef eye = v.r.call(FERRO_CORE_OP_EYE, {},
                                   {plugin::attr_i64("n", len), plugin::attr_str("dtype", plugin::dtype_attr_name(gs.dtype)),
                                    plugin::attr_str("engine", engine)});
    TensorRef plane = v.r.mul(v.r.unsqueeze(v.g(), -1), eye);  // [..., len, len]
    const int64_t rows = in[a1], cols = in[a2];
    const int64_t row0 = offset >= 0 ? 0 : -offset, col0 = offset >= 0 ? offset : 0;
    auto pad = [&](TensorRef t, int64_t axis_from_end, int64_t before, int64_t total) {
        const ferro_signature ts = v.r.signature(t);
        Shape lo(ts.shape, ts.shape + ts.ndim), hi = lo;
        const auto ax = static_cast<size_t>(ts.ndim + axis_from_end);
        const int64_t have = lo[ax];
        lo[ax] = before;
        hi[ax] = total - before - have;
        return v.r.call(FERRO_CORE_OP_CONCAT, {v.r.zeros(lo, gs.dtype, engine), t, v.r.zeros(hi, gs.dtype, engine)},
                        {plugin::attr_i64("axis", ts.ndim + axis_from_end)});
    };
    plane = pad(std::move(plane), -2, row0, rows);
    plane = pad(std::move(plane), -1, col0, cols);
    // plane's axes: the input's other axes in order, then axis1, then axis2.
    Shape perm(n_dim);
    int64_t next = 0;
    for (size_t d = 0; d < n_dim; ++d) {
        if (d != a1 && d != a2) perm[d] = next++;
    }
    perm[a1] = static_cast<int64_t>(n_dim) - 2;
    perm[a2] = static_cast<int64_t>(n_dim) - 1;
    // perm[d] is where input axis d sits in `plane`; permute takes the source axis for each output axis.
    v.set(0, v.r.permute(plane, perm));
}

// ---- joins ----

void concat_rule(const Vjp& v) {
    const size_t axis = static_cast<size_t>(wrap_axis(v.attr(0).v.i64, v.shape(0).size()));
    int64_t at = 0;
    for (uint32_t i = 0; i < v.n_inputs(); ++i) {
        const int64_t len = v.shape(i)[axis];
        if (v.needs(i)) {
            v.set(i, v.r.call(FERRO_CORE_OP_SLICE, {v.g()},
                              {plugin::attr_i64("axis", static_cast<int64_t>(axis)), plugin::attr_i64("start", at),
                               plugin::attr_i64("stop", at + len)}));
        }
        at += len;
    }
}

void stack_rule(const Vjp& v) {
    const int64_t axis = wrap_axis(v.attr(0).v.i64, v.shape(0).size() + 1);
    for (uint32_t i = 0; i < v.n_inputs(); ++i) {
        if (!v.needs(i)) continue;
        const TensorRef part =
            v.r.call(FERRO_CORE_OP_SLICE, {v.g()},
                     {plugin::attr_i64("axis", axis), plugin::attr_i64("start", i), plugin::attr_i64("stop", i + 1)});
        v.set(i, v.r.squeeze(part, axis));
    }
}

}  // namespace

Shape kept_shape(std::span<const int64_t> shape, const ferro_attr_value& axes) {
    Shape keep(shape.begin(), shape.end());
    if (axes.type == FERRO_ATTR_NONE) {
        std::fill(keep.begin(), keep.end(), 1);
    } else {
        for (uint32_t i = 0; i < axes.count; ++i) keep[static_cast<size_t>(wrap_axis(axes.v.i64_array[i], keep.size()))] = 1;
    }
    return keep;
}

// With no zero in the group the product of the others is prod / x; with one zero only that
// element gets the product of the non-zero ones; with two or more everything is 0.
TensorRef prod_of_others(const plugin::Rules& r, ferro_tensor x, std::span<const int64_t> shape,
                         const ferro_attr_value& axes_attr) {
    const TensorRef zero = r.scalar(x, 0), one = r.scalar(x, 1);
    const TensorRef is_zero = r.call(FERRO_CORE_OP_EQ, {x, zero});
    Shape axes;
    if (axes_attr.type == FERRO_ATTR_NONE) {
        axes.resize(shape.size());
        std::iota(axes.begin(), axes.end(), 0);
    } else {
        axes.assign(axes_attr.v.i64_array, axes_attr.v.i64_array + axes_attr.count);
    }
    const TensorRef zeros = r.sum(is_zero, axes, true);  // i64 count per group
    const TensorRef nonzero_prod = r.call(FERRO_CORE_OP_PROD, {r.where(is_zero, one, x)},
                                          {plugin::attr_i64s("axes", axes), plugin::attr_bool("keepdim", true)});
    const TensorRef p = r.expand(nonzero_prod, shape);
    const TensorRef n = r.expand(zeros, shape);
    const TensorRef none = r.call(FERRO_CORE_OP_EQ, {n, r.scalar(n, 0)});
    const TensorRef single = r.call(FERRO_CORE_OP_EQ, {n, r.scalar(n, 1)});
    return r.where(none, r.div(p, x), r.where(single, r.where(is_zero, p, zero), zero));
}

void add_structural_rules(std::vector<CoreOp>& ops) {
    set_rule(ops, "sum", sum_rule, kIn0, 0, 0);
    set_rule(ops, "mean", mean_rule, kIn0, 0, 0);
    set_rule(ops, "prod", prod_rule, kIn0, kIn0, 0);
    set_rule(ops, "max", extremum_rule, kIn0, kIn0, kOut0);
    set_rule(ops, "min", extremum_rule, kIn0, kIn0, kOut0);
    set_rule(ops, "matmul", matmul_rule, kIn0 | kIn1, kIn0 | kIn1, 0);
    for (const char* name : {"reshape", "squeeze", "unsqueeze"}) set_rule(ops, name, reshape_back, kIn0, 0, 0);
    set_rule(ops, "permute", permute_rule, kIn0, 0, 0);
    set_rule(ops, "transpose", transpose_rule, kIn0, 0, 0);
    set_rule(ops, "expand", expand_rule, kIn0, 0, 0);
    set_rule(ops, "slice", slice_rule, kIn0, 0, 0);
    set_rule(ops, "diagonal", diagonal_rule, kIn0, 0, 0);
    set_rule(ops, "concat", concat_rule, FERRO_MASK_ALL, 0, 0);
    set_rule(ops, "stack", stack_rule, FERRO_MASK_ALL, 0, 0);
}

}  // namespace ferro::host::ops
