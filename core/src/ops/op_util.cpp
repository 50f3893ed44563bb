#include "ops/op_util.hpp"

#include <algorithm>

namespace ferro::host::ops {

View::View(const ferro_tensor_view& src) : v(src) {
    std::copy(src.shape, src.shape + src.ndim, shape);
    std::copy(src.strides, src.strides + src.ndim, strides);
    v.shape = shape;
    v.strides = strides;
}

View& View::operator=(const View& o) {
    if (this != &o) {
        v = o.v;
        std::copy(o.shape, o.shape + o.v.ndim, shape);
        std::copy(o.strides, o.strides + o.v.ndim, strides);
        v.shape = shape;
        v.strides = strides;
    }
    return *this;
}

void View::set(std::span<const int64_t> new_shape, std::span<const int64_t> new_strides) {
    v.ndim = static_cast<int32_t>(new_shape.size());
    std::copy(new_shape.begin(), new_shape.end(), shape);
    std::copy(new_strides.begin(), new_strides.end(), strides);
}

void invalid(const std::string& op, const std::string& message) { throw Error(FERRO_INVALID_ARGUMENT, op + ": " + message); }

std::string shape_str(std::span<const int64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

Dims broadcast_shapes(const std::string& op, std::span<const int64_t> a, std::span<const int64_t> b, int ia, int ib) {
    const size_t n = std::max(a.size(), b.size());
    Dims out(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (da != db && da != 1 && db != 1) {
            invalid(op,
                    fmt::format("input {} has shape {} and input {} has shape {}, which do not "
                                "broadcast (dimension {}: {} vs {})",
                                ia, shape_str(a), ib, shape_str(b), static_cast<int64_t>(i) - static_cast<int64_t>(n), da, db));
        }
        out[i] = da == 1 ? db : da;
    }
    return out;
}

Dims broadcast_strides(std::span<const int64_t> shape, const int64_t* strides, std::span<const int64_t> target) {
    Dims out(target.size());
    const size_t lead = target.size() - shape.size();
    for (size_t i = 0; i < target.size(); ++i) {
        const bool exists = i >= lead;
        const int64_t size = exists ? shape[i - lead] : 1;
        out[i] = (!exists || (size == 1 && target[i] != 1)) ? 0 : strides[i - lead];
    }
    return out;
}

View broadcast_to(const ferro_tensor_view& in, std::span<const int64_t> shape) {
    View out(in);
    out.set(shape, span_of(broadcast_strides({in.shape, static_cast<size_t>(in.ndim)}, in.strides, shape)));
    return out;
}

void check(ferro_status status) { throw_if_error(status); }

View scratch(const ferro_host_api* host, ferro_session session, ferro_dtype dtype, std::span<const int64_t> shape) {
    ferro_buffer_view buffer{};
    const int64_t bytes = numel(shape) * itemsize(dtype);
    check(host->session_scratch(session, static_cast<uint64_t>(bytes), &buffer));
    View out;
    out.v.struct_size = sizeof out.v;
    out.v.dtype = dtype;
    out.v.buffer = buffer.buffer;
    out.v.byte_offset = buffer.byte_offset;
    out.v.data = buffer.data;
    out.v.shape = out.shape;
    out.v.strides = out.strides;
    const Dims strides = contiguous_strides(shape);
    out.set(shape, span_of(strides));
    return out;
}

View cast_to(const ferro_host_api* host, ferro_session session, const View& in, ferro_dtype dtype) {
    if (in.v.dtype == dtype) return in;
    View out = scratch(host, session, dtype, in.dims());
    ferro_cast_args args{sizeof args, 0, in.v, out.v};
    check(trusted::run(session, args, &ferro_engine_iface::cast));
    return out;
}

const ferro_tensor_view& operand_for(const ferro_host_api* host, ferro_session session, const ferro_tensor_view& in,
                                     const ferro_tensor_view& out, ferro_dtype dtype, View& keep) {
    const bool same_shape = in.ndim == out.ndim && std::equal(in.shape, in.shape + in.ndim, out.shape);
    if (same_shape && in.dtype == dtype) return in;
    keep = cast_to(host, session, broadcast_to(in, {out.shape, static_cast<size_t>(out.ndim)}), dtype);
    return keep.v;
}

SliceSpan slice_span(int64_t size, const ferro_attr_value& start_attr, const ferro_attr_value& stop_attr, int64_t step) {
    auto bound = [&](const ferro_attr_value& v, int64_t fallback) {
        if (v.type == FERRO_ATTR_NONE) return fallback;
        const int64_t i = v.v.i64 < 0 ? v.v.i64 + size : v.v.i64;
        return step > 0 ? std::clamp<int64_t>(i, 0, size) : std::clamp<int64_t>(i, -1, size - 1);
    };
    const int64_t start = bound(start_attr, step > 0 ? 0 : size - 1);
    const int64_t stop = bound(stop_attr, step > 0 ? size : -1);
    // (distance - 1) / |step| + 1, in unsigned arithmetic: no step, INT64_MIN and INT64_MAX
    // included, overflows.
    const uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
    const int64_t distance = step > 0 ? stop - start : start - stop;
    const int64_t len = distance > 0 ? static_cast<int64_t>(static_cast<uint64_t>(distance - 1) / magnitude) + 1 : 0;
    return {start, len};
}

int64_t normalise_axis(const std::string& op, int64_t axis, int64_t ndim, const char* what) {
    const int64_t a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) {
        invalid(op, fmt::format("{} {} is out of range for a {}-d input", what, axis, ndim));
    }
    return a;
}

void set_output(ferro_signature& out, ferro_dtype dtype, std::span<const int64_t> shape) {
    out.dtype = dtype;
    out.ndim = static_cast<int32_t>(shape.size());
    std::copy(shape.begin(), shape.end(), out.shape);
}

std::string attr_str(const ferro_attr_value* attrs, size_t index, const char* fallback) {
    return attrs[index].type == FERRO_ATTR_STR ? attrs[index].v.str : fallback;
}

ferro_dtype attr_dtype(const std::string& op, const ferro_attr_value* attrs, size_t index) {
    const std::string name = attr_str(attrs, index);
    const ferro_dtype dt = parse_dtype(name);
    if (dt == FERRO_DTYPE_INVALID) {
        invalid(op, fmt::format("dtype '{}' is not one of f32, f64, c64, c128, i64, bool (or the "
                                "numpy names float32, float64, complex64, complex128, int64)",
                                name));
    }
    return dt;
}

}  // namespace ferro::host::ops
