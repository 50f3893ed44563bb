// Helpers shared by the core ops: broadcasting, views with their own shape/stride storage,
// casting operands into session scratch, attribute reading, and errors that name the op.
#pragma once

#include "dispatch/attrs.hpp"
#include "dispatch/session.hpp"
#include "support/status.hpp"
#include "tensor/tensor.hpp"

#include <ferro/host.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>
#include <string>

namespace ferro::host::ops {

// A tensor view that owns its shape and strides (engine kernels borrow pointers into it).
// Only the first ndim entries are ever written or read: the arrays are deliberately left
// uninitialised, since zeroing 1 KB per view was a measurable share of a tiny op's dispatch.
struct View {
    ferro_tensor_view v{};
    int64_t shape[FERRO_MAX_NDIM];
    int64_t strides[FERRO_MAX_NDIM];

    View() = default;
    explicit View(const ferro_tensor_view& src);
    View(const View& o) : View(o.v) {}
    View& operator=(const View& o);
    int ndim() const { return v.ndim; }
    std::span<const int64_t> dims() const { return {shape, static_cast<size_t>(v.ndim)}; }
    void set(std::span<const int64_t> new_shape, std::span<const int64_t> new_strides);
    void set(const Dims& new_shape, const Dims& new_strides) { set(span_of(new_shape), span_of(new_strides)); }
};

[[noreturn]] void invalid(const std::string& op, const std::string& message);

// numpy broadcasting of two shapes; the error names both inputs.
Dims broadcast_shapes(const std::string& op, std::span<const int64_t> a, std::span<const int64_t> b, int ia = 0, int ib = 1);
inline Dims broadcast_shapes(const std::string& op, const Dims& a, std::span<const int64_t> b, int ia = 0, int ib = 1) {
    return broadcast_shapes(op, span_of(a), b, ia, ib);
}

// The strides of a tensor (`shape`, `strides`) seen with `target`'s shape: dims right-aligned,
// stride 0 where it broadcasts (a missing dim, or size 1 against a larger one).
Dims broadcast_strides(std::span<const int64_t> shape, const int64_t* strides, std::span<const int64_t> target);

// `in` seen with `shape` (its dims right-aligned, stride 0 where it broadcasts).
View broadcast_to(const ferro_tensor_view& in, std::span<const int64_t> shape);
inline View broadcast_to(const ferro_tensor_view& in, const Dims& shape) { return broadcast_to(in, span_of(shape)); }

// `in` converted to `dtype` in fresh session scratch (contiguous), or `in` itself when it
// already has that dtype.
View cast_to(const ferro_host_api* host, ferro_session session, const View& in, ferro_dtype dtype);

// An input as a kernel needs it: broadcast to `out`'s shape and converted to `dtype`. The
// common case (already that shape and dtype) passes `in` through without copying anything;
// otherwise `keep` holds the new view. Returns the view to use.
const ferro_tensor_view& operand_for(const ferro_host_api* host, ferro_session session, const ferro_tensor_view& in,
                                     const ferro_tensor_view& out, ferro_dtype dtype, View& keep);

// A fresh contiguous scratch tensor of `shape` and `dtype` in the session.
View scratch(const ferro_host_api* host, ferro_session session, ferro_dtype dtype, std::span<const int64_t> shape);

// Moves a view's first element by `bytes`, keeping byte_offset and the data address (which
// addressable engines read) in step.
inline void shift(ferro_tensor_view& v, int64_t bytes) {
    v.byte_offset = static_cast<uint64_t>(static_cast<int64_t>(v.byte_offset) + bytes);
    if (v.data != nullptr) v.data = static_cast<char*>(v.data) + bytes;
}
// The address `bytes` past a view's first element, or NULL when it has none.
inline void* address_at(const ferro_tensor_view& v, int64_t bytes) {
    return v.data != nullptr ? static_cast<char*>(v.data) + bytes : nullptr;
}

// Throws the status as ferro::host::Error (for executors composing host services).
void check(ferro_status status);

// Python's slice.indices over `size` elements for start:stop:step (None bounds allowed,
// negative ones count from the end, step != 0): the first index and the count.
struct SliceSpan {
    int64_t start, len;
};
SliceSpan slice_span(int64_t size, const ferro_attr_value& start, const ferro_attr_value& stop, int64_t step);

// Normalises an axis (negative counts from the end); the error names op and argument.
int64_t normalise_axis(const std::string& op, int64_t axis, int64_t ndim, const char* what = "axis");

// Signature <-> shape helpers.
inline std::span<const int64_t> dims_of(const ferro_signature& s) { return {s.shape, static_cast<size_t>(s.ndim)}; }
void set_output(ferro_signature& out, ferro_dtype dtype, std::span<const int64_t> shape);
inline void set_output(ferro_signature& out, ferro_dtype dtype, const Dims& shape) { set_output(out, dtype, span_of(shape)); }
std::string shape_str(std::span<const int64_t> shape);
inline std::string shape_str(const Dims& shape) { return shape_str(span_of(shape)); }

// The string value of attribute `index`, or `fallback` when it is None.
std::string attr_str(const ferro_attr_value* attrs, size_t index, const char* fallback = "");
// A dtype attribute ("f64", "float32", ...): INVALID_ARGUMENT listing the accepted names.
ferro_dtype attr_dtype(const std::string& op, const ferro_attr_value* attrs, size_t index);

}  // namespace ferro::host::ops
