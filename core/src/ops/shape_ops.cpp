// View ops: reshape, permute, transpose, slice, expand, squeeze, unsqueeze, diagonal, and
// contiguous. They are host ops: each returns a tensor sharing its input's storage with new
// metadata (reshape and contiguous copy only when no view can express the result, as numpy).
// One function per op computes the new layout; infer and the host op both use it.
#include "ops/core_family.hpp"
#include "ops/op_util.hpp"
#include "runtime/runtime.hpp"

#include <algorithm>

namespace ferro::host::ops {
namespace {

struct Layout {  // NOLINT(bugprone-exception-escape): Dims (a small_vector) moves without allocating
    Dims shape, strides;
    int64_t offset = 0;       // elements from the input's first element
    bool needs_copy = false;  // reshape of a layout no view can express
};

using LayoutFn = Layout (*)(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in);

std::span<const int64_t> array_attr(const ferro_attr_value& v) {
    return v.type == FERRO_ATTR_I64_ARRAY ? std::span<const int64_t>(v.v.i64_array, v.count) : std::span<const int64_t>();
}

// Strides that view `in` with `shape` without copying, if any exist (numpy's
// attempt_nocopy_reshape): old and new dims are matched in groups of equal product, and each
// group of old dims must be contiguous within itself.
bool nocopy_strides(const Layout& in, std::span<const int64_t> shape, Dims& strides) {
    Dims old_shape, old_strides;
    for (size_t i = 0; i < in.shape.size(); ++i) {
        if (in.shape[i] != 1) {
            old_shape.push_back(in.shape[i]);
            old_strides.push_back(in.strides[i]);
        }
    }
    strides.assign(shape.size(), 0);
    size_t oi = 0, ni = 0;
    while (oi < old_shape.size() && ni < shape.size()) {
        size_t oj = oi + 1, nj = ni + 1;
        int64_t np = shape[ni], op = old_shape[oi];
        while (np != op) {
            if (np < op) np *= shape[nj++];
            else op *= old_shape[oj++];
        }
        for (size_t k = oi; k + 1 < oj; ++k) {
            if (old_strides[k] != old_shape[k + 1] * old_strides[k + 1]) return false;
        }
        strides[nj - 1] = old_strides[oj - 1];
        for (size_t k = nj - 1; k > ni; --k) strides[k - 1] = strides[k] * shape[k];
        ni = nj;
        oi = oj;
    }
    // Trailing size-1 dims of the new shape: any stride works; keep them contiguous-looking.
    for (size_t k = ni; k < shape.size(); ++k) strides[k] = 1;
    return true;
}

Layout reshape_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto req = array_attr(attrs[0]);
    const int64_t total = numel(in.shape);
    Dims shape(req.begin(), req.end());
    int64_t known = 1, infer_at = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
            if (infer_at >= 0) invalid(op.qualified, "only one dimension can be -1");
            infer_at = static_cast<int64_t>(i);
        } else if (shape[i] < 0) {
            invalid(op.qualified, fmt::format("shape {} has a negative size", shape_str(shape)));
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            invalid(op.qualified, fmt::format("cannot reshape {} ({} elements) into {}: its element count overflows",
                                              shape_str(in.shape), total, shape_str(shape)));
        }
    }
    if (infer_at >= 0) {
        if (known == 0 || total % known != 0) {
            invalid(op.qualified,
                    fmt::format("cannot reshape {} ({} elements) into {}", shape_str(in.shape), total, shape_str(shape)));
        }
        shape[static_cast<size_t>(infer_at)] = total / known;
    }
    if (numel(shape) != total) {
        invalid(op.qualified, fmt::format("cannot reshape {} ({} elements) into {} ({} elements)", shape_str(in.shape), total,
                                          shape_str(shape), numel(shape)));
    }
    Layout out{shape, {}, 0};
    if (total == 0 || !nocopy_strides(in, span_of(shape), out.strides)) {
        out.strides = contiguous_strides(shape);
        out.needs_copy = total != 0;
    }
    return out;
}

Layout permute_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto axes = array_attr(attrs[0]);
    const auto n = static_cast<int64_t>(in.shape.size());
    if (static_cast<int64_t>(axes.size()) != n) {
        invalid(op.qualified, fmt::format("axes has {} entries for a {}-d input", axes.size(), n));
    }
    Layout out{Dims(in.shape.size()), Dims(in.shape.size()), 0};
    boost::container::small_vector<bool, 8> seen(in.shape.size(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
        const auto a = static_cast<size_t>(normalise_axis(op.qualified, axes[i], n, "axes entry"));
        if (seen[a]) invalid(op.qualified, fmt::format("axis {} appears twice in axes", a));
        seen[a] = true;
        out.shape[i] = in.shape[a];
        out.strides[i] = in.strides[a];
    }
    return out;
}

Layout transpose_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto n = static_cast<int64_t>(in.shape.size());
    const auto a = static_cast<size_t>(normalise_axis(op.qualified, attrs[0].v.i64, n, "dim0"));
    const auto b = static_cast<size_t>(normalise_axis(op.qualified, attrs[1].v.i64, n, "dim1"));
    Layout out = in;
    out.offset = 0;
    std::swap(out.shape[a], out.shape[b]);
    std::swap(out.strides[a], out.strides[b]);
    return out;
}

// Python slice semantics for one axis: negative indices count from the end, out-of-range
// bounds clamp, negative steps walk backwards.
Layout slice_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto n = static_cast<int64_t>(in.shape.size());
    const auto axis = static_cast<size_t>(normalise_axis(op.qualified, attrs[0].v.i64, n));
    const int64_t step = attrs[3].v.i64;
    if (step == 0) invalid(op.qualified, "step must not be 0");
    const auto [start, len] = slice_span(in.shape[axis], attrs[1], attrs[2], step);
    Layout out = in;
    out.shape[axis] = len;
    // A step longer than the axis leaves one element, whose stride is never used (and whose
    // product with the step could overflow).
    out.strides[axis] = len > 1 ? in.strides[axis] * step : in.strides[axis];
    out.offset = len > 0 ? start * in.strides[axis] : 0;
    return out;
}

Layout expand_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto shape = array_attr(attrs[0]);
    if (shape.size() < in.shape.size()) {
        invalid(op.qualified, fmt::format("cannot expand {} to fewer dimensions {}", shape_str(in.shape), shape_str(shape)));
    }
    const size_t lead = shape.size() - in.shape.size();
    Layout out{Dims(shape.size()), Dims(shape.size()), 0};
    for (size_t i = 0; i < shape.size(); ++i) {
        const bool exists = i >= lead;
        const int64_t have = exists ? in.shape[i - lead] : 1;
        const int64_t want = shape[i] == -1 && exists ? have : shape[i];
        if (want < 0 || (have != want && have != 1)) {
            invalid(op.qualified, fmt::format("cannot expand {} to {} (dimension {}: {} vs {})", shape_str(in.shape),
                                              shape_str(shape), i, have, shape[i]));
        }
        out.shape[i] = want;
        out.strides[i] = exists && have == want ? in.strides[i - lead] : 0;
    }
    return out;
}

Layout squeeze_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto n = static_cast<int64_t>(in.shape.size());
    boost::container::small_vector<bool, 8> drop(in.shape.size(), false);
    if (attrs[0].type == FERRO_ATTR_NONE) {
        for (size_t i = 0; i < in.shape.size(); ++i) drop[i] = in.shape[i] == 1;
    } else {
        for (int64_t a : array_attr(attrs[0])) {
            const auto d = static_cast<size_t>(normalise_axis(op.qualified, a, n, "axes entry"));
            if (in.shape[d] != 1) invalid(op.qualified, fmt::format("axis {} has size {}, not 1", a, in.shape[d]));
            drop[d] = true;
        }
    }
    Layout out;
    for (size_t i = 0; i < in.shape.size(); ++i) {
        if (!drop[i]) {
            out.shape.push_back(in.shape[i]);
            out.strides.push_back(in.strides[i]);
        }
    }
    return out;
}

Layout unsqueeze_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto n = static_cast<int64_t>(in.shape.size());
    const auto axis = static_cast<size_t>(normalise_axis(op.qualified, attrs[0].v.i64, n + 1));
    Layout out = in;
    out.offset = 0;
    const int64_t stride = axis < in.shape.size() ? in.shape[axis] * in.strides[axis] : 1;
    out.shape.insert(out.shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    out.strides.insert(out.strides.begin() + static_cast<std::ptrdiff_t>(axis), stride);
    return out;
}

Layout diagonal_layout(const CoreOp& op, const ferro_attr_value* attrs, const Layout& in) {
    const auto n = static_cast<int64_t>(in.shape.size());
    const int64_t offset = attrs[0].v.i64;
    const auto a = static_cast<size_t>(normalise_axis(op.qualified, attrs[1].v.i64, n, "axis1"));
    const auto b = static_cast<size_t>(normalise_axis(op.qualified, attrs[2].v.i64, n, "axis2"));
    if (a == b) invalid(op.qualified, "axis1 and axis2 must differ");
    const int64_t len = offset >= 0 ? std::min(in.shape[a], in.shape[b] - offset) : std::min(in.shape[a] + offset, in.shape[b]);
    Layout out;
    for (size_t i = 0; i < in.shape.size(); ++i) {
        if (i != a && i != b) {
            out.shape.push_back(in.shape[i]);
            out.strides.push_back(in.strides[i]);
        }
    }
    out.shape.push_back(std::max<int64_t>(len, 0));
    out.strides.push_back(in.strides[a] + in.strides[b]);
    out.offset = len > 0 ? (offset >= 0 ? offset * in.strides[b] : -offset * in.strides[a]) : 0;
    return out;
}

struct ViewOp {
    const char* name;
    const char* doc;
    LayoutFn layout;
    std::vector<ferro_attr_spec> attrs;
};

const std::vector<ViewOp>& view_ops() {
    static const std::vector<ViewOp> table = {
        {"reshape",
         "same elements, new shape (-1 infers one size); a view when possible",
         reshape_layout,
         {attr_required("shape", FERRO_ATTR_I64_ARRAY, "new shape")}},
        {"permute",
         "reorder dimensions (view)",
         permute_layout,
         {attr_required("axes", FERRO_ATTR_I64_ARRAY, "the input dimension for each output dimension")}},
        {"transpose",
         "swap two dimensions (view); default swaps the last two",
         transpose_layout,
         {attr_i64("dim0", -2, "first dimension"), attr_i64("dim1", -1, "second dimension")}},
        {"slice",
         "python slicing start:stop:step along one axis (view)",
         slice_layout,
         {attr_i64("axis", 0, "axis to slice"), attr_optional("start", FERRO_ATTR_I64, "first index (None: from the start)"),
          attr_optional("stop", FERRO_ATTR_I64, "end index, exclusive (None: to the end)"),
          attr_i64("step", 1, "step, may be negative")}},
        {"expand",
         "broadcast to a larger shape without copying (-1 keeps a size)",
         expand_layout,
         {attr_required("shape", FERRO_ATTR_I64_ARRAY, "target shape")}},
        {"squeeze",
         "remove size-1 dimensions (view)",
         squeeze_layout,
         {attr_optional("axes", FERRO_ATTR_I64_ARRAY, "which size-1 axes (None: all)")}},
        {"unsqueeze",
         "insert a size-1 dimension (view)",
         unsqueeze_layout,
         {attr_required("axis", FERRO_ATTR_I64, "position of the new axis")}},
        {"diagonal",
         "a diagonal as the last dimension (view, numpy.diagonal)",
         diagonal_layout,
         {attr_i64("offset", 0, "diagonal offset (> 0 above the main diagonal)"), attr_i64("axis1", 0, "first axis"),
          attr_i64("axis2", 1, "second axis")}},
    };
    return table;
}

LayoutFn layout_of(const CoreOp& op) {
    for (const auto& v : view_ops()) {
        if (op.name == v.name) return v.layout;
    }
    if (op.name == "contiguous") return nullptr;
    throw Error(FERRO_INTERNAL, op.qualified + ": not a view op");
}

void view_infer(const CoreOp& op, ferro_infer_args& a) {
    const auto& s = a.inputs[0];
    Layout in{Dims(s.shape, s.shape + s.ndim), Dims(s.strides, s.strides + s.ndim), 0};
    const LayoutFn fn = layout_of(op);
    set_output(a.outputs[0], s.dtype, fn ? fn(op, a.attrs, in).shape : in.shape);
    a.n_outputs = 1;
}

Outputs copy_then(const HostOpCall& call, ferro_tensor_impl* t) {
    ferro_tensor_impl* inputs[] = {t};
    return call.runtime.call("core.copy", {}, inputs);
}

template <size_t I> Outputs view_host(const HostOpCall& call) {
    const ViewOp& spec = view_ops()[I];
    ferro_tensor_impl& t = *call.inputs[0];
    const Layout in{t.shape, t.strides, 0};
    CoreOp op;
    op.name = spec.name;
    op.qualified = call.op;
    Layout out = spec.layout(op, call.attrs.data(), in);
    if (out.needs_copy) {
        // No view can express it: copy to contiguous, whose reshape is always a view.
        TensorPtr packed = std::move(copy_then(call, &t)[0]);
        return {make_view(*packed, t.dtype, out.shape, out.strides, packed->byte_offset, call.op.c_str())};
    }
    const int64_t byte_delta = out.offset * itemsize(t.dtype);
    return {make_view(t, t.dtype, out.shape, out.strides, static_cast<uint64_t>(static_cast<int64_t>(t.byte_offset) + byte_delta),
                      call.op.c_str())};
}

template <size_t... I> std::array<HostOpFn, sizeof...(I)> view_hosts(std::index_sequence<I...>) { return {&view_host<I>...}; }

Outputs contiguous_host(const HostOpCall& call) {
    ferro_tensor_impl* t = call.inputs[0];
    if (is_contiguous(*t)) return {TensorPtr::share(t)};
    return copy_then(call, t);
}

}  // namespace

void add_shape_ops(std::vector<CoreOp>& ops) {
    const auto hosts = view_hosts(std::make_index_sequence<8>{});
    const auto& table = view_ops();
    for (size_t i = 0; i < table.size(); ++i) {
        CoreOp op;
        op.name = table[i].name;
        op.doc = table[i].doc;
        op.attrs = table[i].attrs;
        op.infer = view_infer;
        op.host = hosts.at(i);
        op.view = kIsView | (op.name == "reshape" ? FERRO_OP_VIEW_MAY_COPY : 0u);  // reshape copies what no view expresses
        ops.push_back(std::move(op));
    }
    CoreOp contiguous;
    contiguous.name = "contiguous";
    contiguous.doc = "the input itself when row-major contiguous, else a contiguous copy";
    contiguous.infer = view_infer;
    contiguous.host = contiguous_host;
    contiguous.view = kIsView | FERRO_OP_VIEW_MAY_COPY;  // the input itself when it is contiguous
    ops.push_back(std::move(contiguous));
}

}  // namespace ferro::host::ops
