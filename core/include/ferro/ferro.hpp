// ferro — the C++ API: header-only, over the C API of ferro.h. RAII handles, exceptions
// through one check(), numpy/PyTorch-style tensors:
//
//     ferro::Runtime rt;                                  // loads the plugins on the search path
//     auto a = rt.tensor<double>({1, 2, 3, 4}, {2, 2});
//     auto b = rt.randn({2, 2}, ferro::DType::f64, 7);
//     auto c = (a.matmul(b) + 1.0).sum();
//     double value = c.item<double>();
//
// Tensors keep their runtime alive. Ops that a plugin provides (linalg, fft, einsum) are
// called by name through Runtime::call or the family namespaces built on it.
#pragma once

#include <ferro/ferro.h>
#include <ferro/dtype.hpp>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ferro {

// A failed call: the status code (FERRO_INVALID_ARGUMENT, ...), its message, and where it
// happened (a ferro_phase: FERRO_PHASE_PREPARE, _EXECUTE, _BACKWARD, _LOAD, or _NONE).
class Error : public std::runtime_error {
public:
    Error(uint32_t code, const std::string& message, uint32_t phase = FERRO_PHASE_NONE)
        : std::runtime_error(message), code_(code), phase_(phase) {}
    uint32_t code() const noexcept { return code_; }
    const char* code_name() const noexcept { return ferro_status_code_name(code_); }
    uint32_t phase() const noexcept { return phase_; }

private:
    uint32_t code_;
    uint32_t phase_;
};

// Throws ferro::Error for a non-NULL status (and frees it).
inline void check(ferro_status status) {
    if (status == nullptr) return;
    Error error(ferro_status_code(status), ferro_status_message(status), ferro_status_phase(status));
    ferro_status_free(status);
    throw error;
}

enum class DType : uint32_t {
    f32 = FERRO_DTYPE_F32,
    f64 = FERRO_DTYPE_F64,
    c64 = FERRO_DTYPE_C64,
    c128 = FERRO_DTYPE_C128,
    i64 = FERRO_DTYPE_I64,
    boolean = FERRO_DTYPE_BOOL,
};

inline const char* dtype_name(DType d) { return plugin::dtype_attr_name(static_cast<ferro_dtype>(d)); }

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<std::complex<float>>() { return DType::c64; }
template <> constexpr DType dtype_of<std::complex<double>>() { return DType::c128; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }

using Shape = std::vector<int64_t>;

// One named attribute of an op call; owns what its value points to.
class Attr {
public:
    Attr(std::string name, int64_t v) : name_(std::move(name)) { set(FERRO_ATTR_I64).v.i64 = v; }
    Attr(std::string name, int v) : Attr(std::move(name), static_cast<int64_t>(v)) {}
    Attr(std::string name, double v) : name_(std::move(name)) { set(FERRO_ATTR_F64).v.f64 = v; }
    Attr(std::string name, bool v) : name_(std::move(name)) { set(FERRO_ATTR_BOOL).v.boolean = v; }
    Attr(std::string name, std::string v) : name_(std::move(name)), str_(std::move(v)) { set(FERRO_ATTR_STR); }
    Attr(std::string name, const char* v) : Attr(std::move(name), std::string(v)) {}
    Attr(std::string name, DType v) : Attr(std::move(name), std::string(dtype_name(v))) {}
    Attr(std::string name, std::vector<int64_t> v) : name_(std::move(name)), ints_(std::move(v)) { set(FERRO_ATTR_I64_ARRAY); }
    Attr(std::string name, std::initializer_list<int64_t> v) : Attr(std::move(name), std::vector<int64_t>(v)) {}
    Attr(std::string name, std::nullopt_t) : name_(std::move(name)) { set(FERRO_ATTR_NONE); }
    template <class T>
    Attr(std::string name, const std::optional<T>& v)
        : Attr(v ? Attr(std::move(name), *v) : Attr(std::move(name), std::nullopt)) {}
    Attr(const Attr& o) : name_(o.name_), str_(o.str_), ints_(o.ints_) { set(o.value_.type).v = o.value_.v; }
    // A copy of a C attribute (its strings and arrays copied too).
    explicit Attr(const ferro_named_attr& a) : name_(a.name) {
        set(a.value.type).v = a.value.v;
        if (a.value.type == FERRO_ATTR_STR) str_ = a.value.v.str;
        if (a.value.type == FERRO_ATTR_I64_ARRAY) ints_.assign(a.value.v.i64_array, a.value.v.i64_array + a.value.count);
        if (a.value.type == FERRO_ATTR_F64_ARRAY) {
            throw Error(FERRO_INVALID_ARGUMENT, "Attr: f64 arrays are not supported by the C++ API (" + name_ + ")");
        }
    }
    Attr& operator=(const Attr&) = delete;

    // Valid while this Attr lives and is not moved.
    ferro_named_attr get() const {
        ferro_named_attr a{name_.c_str(), value_};
        if (value_.type == FERRO_ATTR_STR) a.value.v.str = str_.c_str();
        if (value_.type == FERRO_ATTR_I64_ARRAY) {
            a.value.v.i64_array = ints_.data();
            a.value.count = static_cast<uint32_t>(ints_.size());
        }
        return a;
    }

private:
    ferro_attr_value& set(uint32_t type) {
        value_ = {};
        value_.type = type;
        return value_;
    }
    std::string name_;
    std::string str_;
    std::vector<int64_t> ints_;
    ferro_attr_value value_{};
};
using Attrs = std::vector<Attr>;

namespace detail {
using RuntimeRef = std::shared_ptr<ferro_runtime>;

// An op name as a template argument, so each call site caches its resolved handle.
template <size_t N> struct OpName {
    char text[N];
    constexpr OpName(const char (&s)[N]) { std::copy_n(s, N, text); }
};

// The handle for `Name` in runtime `rt`, cached per thread and keyed by the runtime's
// process-unique id (a new runtime at a reused address cannot hit a stale handle).
template <OpName Name> ferro_op op_handle(ferro_runtime* rt) {
    thread_local uint64_t cached_id = 0;
    thread_local ferro_op cached = nullptr;
    const uint64_t id = ferro_runtime_id(rt);
    if (cached_id != id) {
        check(ferro_op_find(rt, Name.text, &cached));
        cached_id = id;
    }
    return cached;
}
}  // namespace detail

class Tensor;
namespace detail {
// Calls op `Name` with a cached handle and stack arrays: the path every Tensor method takes.
template <OpName Name>
Tensor call1(const Tensor& first, std::initializer_list<ferro_tensor> inputs, std::initializer_list<ferro_named_attr> attrs = {});
}  // namespace detail

class Tensor {
public:
    Tensor() = default;
    // Adopts a reference the caller owns.
    Tensor(detail::RuntimeRef rt, ferro_tensor adopted) : rt_(std::move(rt)), t_(adopted) {}
    Tensor(const Tensor& o) : rt_(o.rt_), t_(o.t_) { ferro_tensor_retain(t_); }
    Tensor(Tensor&& o) noexcept : rt_(std::move(o.rt_)), t_(std::exchange(o.t_, nullptr)) {}
    Tensor& operator=(Tensor o) noexcept {
        std::swap(rt_, o.rt_);
        std::swap(t_, o.t_);
        return *this;
    }
    ~Tensor() { ferro_tensor_release(t_); }

    ferro_tensor get() const noexcept { return t_; }
    ferro_runtime* runtime() const noexcept { return rt_.get(); }
    const detail::RuntimeRef& runtime_ref() const noexcept { return rt_; }
    explicit operator bool() const noexcept { return t_ != nullptr; }

    DType dtype() const { return static_cast<DType>(ferro_tensor_dtype(t_)); }
    int ndim() const { return ferro_tensor_ndim(t_); }
    Shape shape() const { return {ferro_tensor_shape(t_), ferro_tensor_shape(t_) + ndim()}; }
    Shape strides() const { return {ferro_tensor_strides(t_), ferro_tensor_strides(t_) + ndim()}; }
    int64_t numel() const { return ferro_tensor_numel(t_); }
    int64_t size(int dim) const { return shape().at(static_cast<size_t>(dim < 0 ? dim + ndim() : dim)); }
    std::string engine() const { return ferro_tensor_engine(t_); }

    // The elements, row-major, converted to T when the dtype differs.
    template <class T> std::vector<T> to_vector() const {
        const Tensor src = dtype() == dtype_of<T>() ? *this : to(dtype_of<T>());
        std::vector<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>> out(static_cast<size_t>(numel()));
        check(ferro_tensor_copy_to_host(src.get(), out.data(), out.size() * sizeof(out[0])));
        return std::vector<T>(out.begin(), out.end());
    }
    template <class T> T item() const {
        if (numel() != 1)
            throw Error(FERRO_INVALID_ARGUMENT, "item: the tensor has " + std::to_string(numel()) + " elements, not 1");
        return to_vector<T>()[0];
    }

    // ---- autodiff (docs/autodiff.md) ----
    bool requires_grad() const { return ferro_tensor_requires_grad(t_) != 0; }
    // The op whose grad node made this tensor ("core.matmul", "program"); empty for a leaf.
    std::string grad_fn() const {
        const char* op = ferro_tensor_grad_fn(t_);
        return op != nullptr ? op : "";
    }
    // Marks a leaf as requiring grad (floating and complex tensors only).
    Tensor& set_requires_grad(bool on = true) {
        check(ferro_tensor_set_requires_grad(t_, on ? 1 : 0));
        return *this;
    }
    // The accumulated gradient of a leaf; an empty Tensor when it has none.
    Tensor grad() const {
        ferro_tensor g = nullptr;
        check(ferro_tensor_grad(t_, &g));
        return g != nullptr ? Tensor(rt_, g) : Tensor();
    }
    void clear_grad() const { check(ferro_tensor_clear_grad(t_)); }
    // Forward mode: the tangent this tensor carries (see make_dual); empty when none.
    Tensor tangent() const {
        ferro_tensor t = nullptr;
        check(ferro_tensor_tangent(t_, &t));
        return t != nullptr ? Tensor(rt_, t) : Tensor();
    }
    // The same values without autograd state (a leaf).
    Tensor detach() const {
        ferro_tensor out = nullptr;
        check(ferro_tensor_detach(t_, &out));
        return {rt_, out};
    }
    // Reverse mode into the leaves' .grad; the seed may be omitted (or empty) for a
    // one-element tensor.
    void backward() const { check(ferro_backward(rt_.get(), t_, nullptr, 0, 0)); }
    void backward(const Tensor& seed, bool retain_graph = false, bool create_graph = false) const {
        check(ferro_backward(rt_.get(), t_, seed.get(), retain_graph ? 1 : 0, create_graph ? 1 : 0));
    }

    Tensor to(const std::string& engine_name) const {
        ferro_tensor out = nullptr;
        check(ferro_tensor_to(rt_.get(), t_, engine_name.c_str(), &out));
        return {rt_, out};
    }
    Tensor to(DType d) const { return detail::call1<"core.cast">(*this, {t_}, {Attr("dtype", d).get()}); }

    // Any op by qualified name with this tensor as input 0.
    Tensor call(const char* op, const Attrs& attrs = {}, std::vector<Tensor> more = {}) const;

    // Elementwise math.
    Tensor neg() const { return detail::call1<"core.neg">(*this, {t_}); }
    Tensor abs() const { return detail::call1<"core.abs">(*this, {t_}); }
    Tensor exp() const { return detail::call1<"core.exp">(*this, {t_}); }
    Tensor log() const { return detail::call1<"core.log">(*this, {t_}); }
    Tensor sin() const { return detail::call1<"core.sin">(*this, {t_}); }
    Tensor cos() const { return detail::call1<"core.cos">(*this, {t_}); }
    Tensor tanh() const { return detail::call1<"core.tanh">(*this, {t_}); }
    Tensor sqrt() const { return detail::call1<"core.sqrt">(*this, {t_}); }
    Tensor conj() const { return detail::call1<"core.conj">(*this, {t_}); }
    Tensor real() const { return detail::call1<"core.real">(*this, {t_}); }
    Tensor imag() const { return detail::call1<"core.imag">(*this, {t_}); }
    Tensor pow(const Tensor& e) const { return detail::call1<"core.pow">(*this, {t_, e.get()}); }
    Tensor matmul(const Tensor& b) const;

    // Reductions (axes empty: all).
    Tensor sum(const Shape& axes = {}, bool keepdim = false) const { return reduce<"core.sum">(axes, keepdim); }
    Tensor mean(const Shape& axes = {}, bool keepdim = false) const { return reduce<"core.mean">(axes, keepdim); }
    Tensor prod(const Shape& axes = {}, bool keepdim = false) const { return reduce<"core.prod">(axes, keepdim); }
    Tensor max(const Shape& axes = {}, bool keepdim = false) const { return reduce<"core.max">(axes, keepdim); }
    Tensor min(const Shape& axes = {}, bool keepdim = false) const { return reduce<"core.min">(axes, keepdim); }

    // Views and layout.
    Tensor reshape(Shape s) const { return call("core.reshape", {Attr("shape", std::move(s))}); }
    Tensor permute(Shape axes) const { return call("core.permute", {Attr("axes", std::move(axes))}); }
    Tensor transpose(int64_t d0 = -2, int64_t d1 = -1) const {
        return call("core.transpose", {Attr("dim0", d0), Attr("dim1", d1)});
    }
    Tensor mT() const { return transpose(); }
    Tensor slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) const {
        return call("core.slice", {Attr("axis", axis), Attr("start", start), Attr("stop", stop), Attr("step", step)});
    }
    Tensor expand(Shape s) const { return call("core.expand", {Attr("shape", std::move(s))}); }
    Tensor squeeze() const { return detail::call1<"core.squeeze">(*this, {t_}); }
    Tensor unsqueeze(int64_t axis) const { return call("core.unsqueeze", {Attr("axis", axis)}); }
    Tensor diagonal(int64_t offset = 0, int64_t a1 = 0, int64_t a2 = 1) const {
        return call("core.diagonal", {Attr("offset", offset), Attr("axis1", a1), Attr("axis2", a2)});
    }
    Tensor contiguous() const { return detail::call1<"core.contiguous">(*this, {t_}); }
    Tensor clone() const { return detail::call1<"core.copy">(*this, {t_}); }

private:
    // axes empty: all. The attributes point into `axes`, alive for the call.
    template <detail::OpName Name> Tensor reduce(const Shape& axes, bool keepdim) const {
        ferro_named_attr a[2] = {};
        a[0].name = "axes";
        a[0].value.type = axes.empty() ? FERRO_ATTR_NONE : FERRO_ATTR_I64_ARRAY;
        a[0].value.count = static_cast<uint32_t>(axes.size());
        a[0].value.v.i64_array = axes.data();
        a[1].name = "keepdim";
        a[1].value.type = FERRO_ATTR_BOOL;
        a[1].value.v.boolean = keepdim;
        return detail::call1<Name>(*this, {t_}, {a[0], a[1]});
    }

    detail::RuntimeRef rt_;
    ferro_tensor t_ = nullptr;
};

namespace detail {
// The C views of attributes and tensors, borrowed from them.
inline std::vector<ferro_named_attr> named_of(const Attrs& attrs) {
    std::vector<ferro_named_attr> named;
    for (const auto& a : attrs) named.push_back(a.get());
    return named;
}
inline std::vector<ferro_tensor> handles_of(const std::vector<Tensor>& tensors) {
    std::vector<ferro_tensor> handles;
    handles.reserve(tensors.size());
    for (const auto& t : tensors) handles.push_back(t.get());
    return handles;
}
}  // namespace detail

// Calls op `name` and returns all its outputs.
inline std::vector<Tensor> call_all(const detail::RuntimeRef& rt, const char* name, const std::vector<Tensor>& inputs,
                                    const Attrs& attrs = {}) {
    const std::vector<ferro_named_attr> named = detail::named_of(attrs);
    const std::vector<ferro_tensor> in = detail::handles_of(inputs);
    ferro_tensor out[16] = {};
    uint32_t n = 0;
    check(ferro_call(rt.get(), name, named.data(), static_cast<uint32_t>(named.size()), in.data(),
                     static_cast<uint32_t>(in.size()), out, 16, &n));
    std::vector<Tensor> result;
    for (uint32_t i = 0; i < n; ++i) result.emplace_back(rt, out[i]);
    return result;
}

inline Tensor call_one(const detail::RuntimeRef& rt, const char* name, const std::vector<Tensor>& inputs,
                       const Attrs& attrs = {}) {
    auto outs = call_all(rt, name, inputs, attrs);
    if (outs.size() != 1) throw Error(FERRO_INTERNAL, std::string(name) + ": expected one output");
    return std::move(outs[0]);
}

inline Tensor Tensor::call(const char* op, const Attrs& attrs, std::vector<Tensor> more) const {
    more.insert(more.begin(), *this);
    return call_one(rt_, op, more, attrs);
}

namespace detail {
// The arguments of one op call, every field set by name (user code builds without
// -Wmissing-field-initializers firing in this header).
inline ferro_op_call_args call_args(const ferro_named_attr* attrs, size_t n_attrs, const ferro_tensor* inputs, size_t n_inputs,
                                    ferro_tensor* outputs, size_t capacity, const ferro_tensor* into = nullptr,
                                    size_t n_into = 0) {
    ferro_op_call_args a{};
    a.struct_size = sizeof a;
    a.n_attrs = static_cast<uint32_t>(n_attrs);
    a.attrs = attrs;
    a.n_inputs = static_cast<uint32_t>(n_inputs);
    a.outputs_capacity = static_cast<uint32_t>(capacity);
    a.inputs = inputs;
    a.outputs = outputs;
    a.into = into;
    a.n_into = static_cast<uint32_t>(n_into);
    return a;
}

// The hot path for attribute-free binary core ops: a cached handle, no allocation.
template <OpName Name> Tensor binary(const Tensor& a, const Tensor& b) {
    ferro_tensor in[2] = {a.get(), b.get()};
    ferro_tensor out = nullptr;
    ferro_op_call_args args = call_args(nullptr, 0, in, 2, &out, 1);
    check(ferro_op_call(a.runtime(), op_handle<Name>(a.runtime()), &args));
    return {a.runtime_ref(), out};
}

// A 0-d tensor holding `value`, in `like`'s dtype when that is inexact, else f64.
inline Tensor scalar_like(const Tensor& like, double value) {
    const DType d = like.dtype();
    const bool inexact = d == DType::f32 || d == DType::f64 || d == DType::c64 || d == DType::c128;
    const DType dt = inexact ? d : DType::f64;
    const std::complex<double> z(value, 0);
    const std::complex<float> zf(static_cast<float>(value), 0);
    const float f = static_cast<float>(value);
    const void* data = dt == DType::f32    ? static_cast<const void*>(&f)
                       : dt == DType::c64  ? static_cast<const void*>(&zf)
                       : dt == DType::c128 ? static_cast<const void*>(&z)
                                           : static_cast<const void*>(&value);
    ferro_tensor out = nullptr;
    check(ferro_tensor_from_host(like.runtime(), ferro_tensor_engine(like.get()), static_cast<ferro_dtype>(dt), 0, nullptr, data,
                                 &out));
    return {like.runtime_ref(), out};
}
}  // namespace detail

namespace detail {
template <OpName Name>
Tensor call1(const Tensor& first, std::initializer_list<ferro_tensor> inputs, const ferro_named_attr* attrs, uint32_t n_attrs) {
    ferro_tensor out = nullptr;
    ferro_op_call_args args = call_args(attrs, n_attrs, inputs.begin(), inputs.size(), &out, 1);
    check(ferro_op_call(first.runtime(), op_handle<Name>(first.runtime()), &args));
    return {first.runtime_ref(), out};
}
template <OpName Name>
Tensor call1(const Tensor& first, std::initializer_list<ferro_tensor> inputs, std::initializer_list<ferro_named_attr> attrs) {
    return call1<Name>(first, inputs, attrs.begin(), static_cast<uint32_t>(attrs.size()));
}

// call1 for ops with `Outs` outputs (the family wrappers): a cached handle and stack arrays
// instead of call_all's lookup by name and vectors, a third of a small call's host time.
template <OpName Name, size_t Outs>
std::array<Tensor, Outs> call_n(const Tensor& first, std::initializer_list<ferro_tensor> inputs,
                                std::initializer_list<ferro_named_attr> attrs = {}) {
    ferro_tensor out[Outs] = {};
    ferro_op_call_args args = call_args(attrs.begin(), attrs.size(), inputs.begin(), inputs.size(), out, Outs);
    check(ferro_op_call(first.runtime(), op_handle<Name>(first.runtime()), &args));
    std::array<Tensor, Outs> result;
    for (uint32_t i = 0; i < args.n_outputs && i < Outs; ++i) result[i] = Tensor(first.runtime_ref(), out[i]);
    if (args.n_outputs != Outs) {
        throw Error(FERRO_INTERNAL, std::string(Name.text) + ": expected " + std::to_string(Outs) + " outputs, got " +
                                        std::to_string(args.n_outputs));
    }
    return result;
}

// C attributes for call1 and call_n, borrowing `name` and `text` for the call.
inline ferro_named_attr attr_bool(const char* name, bool v) {
    ferro_named_attr a{name, {}};
    a.value.type = FERRO_ATTR_BOOL;
    a.value.v.boolean = v;
    return a;
}
inline ferro_named_attr attr_f64(const char* name, double v) {
    ferro_named_attr a{name, {}};
    a.value.type = FERRO_ATTR_F64;
    a.value.v.f64 = v;
    return a;
}
inline ferro_named_attr attr_str(const char* name, const char* text) {
    ferro_named_attr a{name, {}};
    a.value.type = FERRO_ATTR_STR;
    a.value.v.str = text;
    return a;
}
inline ferro_named_attr attr_str(const char* name, const std::string& text) { return attr_str(name, text.c_str()); }
}  // namespace detail

inline Tensor Tensor::matmul(const Tensor& b) const { return detail::binary<"core.matmul">(*this, b); }

// Functional reverse mode (torch.autograd.grad): the cotangents of `inputs` for `outputs`
// weighted by `cotangents` (omitted: ones, for one-element outputs). An input no gradient
// reaches gets an empty Tensor. With create_graph the results can be differentiated again.
inline std::vector<Tensor> vjp(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                               const std::vector<Tensor>& cotangents = {}, bool create_graph = false) {
    if (outputs.empty()) throw Error(FERRO_INVALID_ARGUMENT, "vjp: no outputs");
    std::vector<ferro_tensor> out, cot, in, result(inputs.size(), nullptr);
    for (const Tensor& t : outputs) out.push_back(t.get());
    for (const Tensor& t : cotangents) cot.push_back(t.get());
    for (const Tensor& t : inputs) in.push_back(t.get());
    if (!cot.empty() && cot.size() != out.size()) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    "vjp: " + std::to_string(cot.size()) + " cotangents for " + std::to_string(out.size()) + " outputs");
    }
    check(ferro_vjp(outputs[0].runtime(), out.data(), cot.empty() ? nullptr : cot.data(), static_cast<uint32_t>(out.size()),
                    in.data(), static_cast<uint32_t>(in.size()), create_graph ? 1 : 0, result.data()));
    std::vector<Tensor> grads;
    grads.reserve(result.size());
    for (ferro_tensor g : result) grads.push_back(g != nullptr ? Tensor(outputs[0].runtime_ref(), g) : Tensor());
    return grads;
}
inline std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                const std::vector<Tensor>& cotangents = {}, bool create_graph = false) {
    return vjp(outputs, inputs, cotangents, create_graph);
}

// Forward mode: `primal` carrying `tangent`; ops on it propagate the tangent.
inline Tensor make_dual(const Tensor& primal, const Tensor& tangent) {
    ferro_tensor out = nullptr;
    check(ferro_tensor_make_dual(primal.runtime(), primal.get(), tangent.get(), &out));
    return {primal.runtime_ref(), out};
}

// Jacobian-vector product: f's outputs at `primals` and their directional derivatives along
// `tangents` (one per primal). Outputs without a tangent get an empty Tensor.
inline std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& primals,
    const std::vector<Tensor>& tangents) {
    if (primals.size() != tangents.size()) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    "jvp: " + std::to_string(tangents.size()) + " tangents for " + std::to_string(primals.size()) + " primals");
    }
    std::vector<Tensor> duals;
    for (size_t i = 0; i < primals.size(); ++i) duals.push_back(make_dual(primals[i], tangents[i]));
    std::vector<Tensor> outputs = f(duals), out_tangents;
    for (const Tensor& y : outputs) out_tangents.push_back(y.tangent());
    return {std::move(outputs), std::move(out_tangents)};
}

// Disables gradient recording on this thread for its scope.
class NoGrad {
public:
    NoGrad() { ferro_no_grad_push(); }
    ~NoGrad() { ferro_no_grad_pop(); }
    NoGrad(const NoGrad&) = delete;
    NoGrad& operator=(const NoGrad&) = delete;
};

inline Tensor operator+(const Tensor& a, const Tensor& b) { return detail::binary<"core.add">(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return detail::binary<"core.sub">(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return detail::binary<"core.mul">(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return detail::binary<"core.div">(a, b); }
inline Tensor operator-(const Tensor& a) { return a.neg(); }
inline Tensor operator+(const Tensor& a, double s) { return a + detail::scalar_like(a, s); }
inline Tensor operator-(const Tensor& a, double s) { return a - detail::scalar_like(a, s); }
inline Tensor operator*(const Tensor& a, double s) { return a * detail::scalar_like(a, s); }
inline Tensor operator/(const Tensor& a, double s) { return a / detail::scalar_like(a, s); }
inline Tensor operator+(double s, const Tensor& a) { return detail::scalar_like(a, s) + a; }
inline Tensor operator-(double s, const Tensor& a) { return detail::scalar_like(a, s) - a; }
inline Tensor operator*(double s, const Tensor& a) { return detail::scalar_like(a, s) * a; }
inline Tensor operator/(double s, const Tensor& a) { return detail::scalar_like(a, s) / a; }
inline Tensor matmul(const Tensor& a, const Tensor& b) { return a.matmul(b); }
inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
    return call_one(cond.runtime_ref(), "core.where", {cond, a, b});
}
inline Tensor concat(const std::vector<Tensor>& ts, int64_t axis = 0) {
    if (ts.empty()) throw Error(FERRO_INVALID_ARGUMENT, "core.concat: no tensors given");
    return call_one(ts[0].runtime_ref(), "core.concat", ts, {Attr("axis", axis)});
}
inline Tensor stack(const std::vector<Tensor>& ts, int64_t axis = 0) {
    if (ts.empty()) throw Error(FERRO_INVALID_ARGUMENT, "core.stack: no tensors given");
    return call_one(ts[0].runtime_ref(), "core.stack", ts, {Attr("axis", axis)});
}

struct Inventory;  // ferro/inventory.hpp

class Runtime {
public:
    struct Options {
        std::vector<std::string> plugin_paths;
        bool use_environment_path = true;
        bool use_default_dir = true;
        bool autoload = true;
        std::optional<uint32_t> log_level;  // FERRO_LOG_*; unset: FERRO_LOG_LEVEL or warn
        ferro_log_callback log_callback = nullptr;
        void* log_user = nullptr;
        // A communicator the application created, type-erased (ferro/communicator.h), e.g.
        // {sizeof c, 0, FERRO_COMMUNICATOR_MPI, &comm, sizeof(MPI_Comm)}; kind null: none.
        ferro_communicator communicator{sizeof(ferro_communicator), 0, nullptr, nullptr, 0};
    };

    Runtime() : Runtime(Options{}) {}
    explicit Runtime(const Options& o) {
        ferro_runtime_options c;
        ferro_runtime_options_init(&c);
        std::vector<const char*> paths;
        for (const auto& p : o.plugin_paths) paths.push_back(p.c_str());
        c.plugin_paths = paths.data();
        c.n_plugin_paths = static_cast<uint32_t>(paths.size());
        c.use_environment_path = o.use_environment_path;
        c.use_default_dir = o.use_default_dir;
        c.autoload = o.autoload;
        c.log_level_set = o.log_level.has_value();
        c.log_level = o.log_level.value_or(FERRO_LOG_WARN);
        c.log_callback = o.log_callback;
        c.log_user = o.log_user;
        c.communicator = o.communicator;
        ferro_runtime* rt = nullptr;
        check(ferro_runtime_create(&c, &rt));
        rt_ = detail::RuntimeRef(rt, ferro_runtime_destroy);
    }

    ferro_runtime* get() const noexcept { return rt_.get(); }
    const detail::RuntimeRef& ref() const noexcept { return rt_; }

    void load_plugin(const std::string& path) { check(ferro_runtime_load_plugin(rt_.get(), path.c_str())); }
    void unload_plugin(const std::string& name) { check(ferro_runtime_unload_plugin(rt_.get(), name.c_str())); }
    uint64_t epoch() const { return ferro_runtime_epoch(rt_.get()); }
    Inventory inventory() const;
    // Sample calls of `op` for conformance checks (its family's examples hook, ABI 1.3): inputs
    // on `engine` whose main dtype is `dtype`, and attributes. Empty when the family has none.
    struct Example {
        std::vector<Tensor> inputs;
        std::vector<uint32_t> input_flags;  // FERRO_EXAMPLE_HERMITIAN: derivatives over Hermitian matrices
        Attrs attrs;
        std::string what;
    };
    std::vector<Example> op_examples(const std::string& op, DType dtype, const std::string& engine = "cpu") const;

    // Tensors from host data (row-major).
    template <class T> Tensor tensor(const std::vector<T>& data, Shape shape, const std::string& engine = "cpu") const {
        int64_t n = 1;
        for (int64_t s : shape) n *= s;
        if (n != static_cast<int64_t>(data.size())) {
            throw Error(FERRO_INVALID_ARGUMENT,
                        "tensor: " + std::to_string(data.size()) + " values for a shape of " + std::to_string(n) + " elements");
        }
        std::vector<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>> packed(data.begin(), data.end());
        ferro_tensor out = nullptr;
        check(ferro_tensor_from_host(rt_.get(), engine.c_str(), static_cast<ferro_dtype>(dtype_of<T>()),
                                     static_cast<int32_t>(shape.size()), shape.data(), packed.data(), &out));
        return {rt_, out};
    }
    template <class T> Tensor scalar(T value, const std::string& engine = "cpu") const { return tensor<T>({value}, {}, engine); }

    Tensor zeros(Shape s, DType d = DType::f64, const std::string& engine = "cpu") const {
        return create("core.zeros", {Attr("shape", std::move(s)), Attr("dtype", d), Attr("engine", engine)});
    }
    Tensor ones(Shape s, DType d = DType::f64, const std::string& engine = "cpu") const {
        return create("core.ones", {Attr("shape", std::move(s)), Attr("dtype", d), Attr("engine", engine)});
    }
    Tensor full(Shape s, double value, DType d = DType::f64, const std::string& engine = "cpu") const {
        return create("core.full", {Attr("shape", std::move(s)), Attr("value", value), Attr("dtype", d), Attr("engine", engine)});
    }
    Tensor eye(int64_t n, DType d = DType::f64, const std::string& engine = "cpu") const {
        return create("core.eye", {Attr("n", n), Attr("dtype", d), Attr("engine", engine)});
    }
    Tensor arange(double start, double stop, double step = 1.0, const std::string& engine = "cpu") const {
        return create("core.arange", {Attr("start", start), Attr("stop", stop), Attr("step", step), Attr("engine", engine)});
    }
    Tensor rand(Shape s, DType d = DType::f64, std::optional<int64_t> seed = std::nullopt,
                const std::string& engine = "cpu") const {
        return create("core.rand", {Attr("shape", std::move(s)), Attr("dtype", d), Attr("seed", seed), Attr("engine", engine)});
    }
    Tensor randn(Shape s, DType d = DType::f64, std::optional<int64_t> seed = std::nullopt,
                 const std::string& engine = "cpu") const {
        return create("core.randn", {Attr("shape", std::move(s)), Attr("dtype", d), Attr("seed", seed), Attr("engine", engine)});
    }

    // Any op by qualified name.
    std::vector<Tensor> call(const char* op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) const {
        return call_all(rt_, op, inputs, attrs);
    }

    ferro_engine_memory_stats engine_memory(const std::string& engine = "cpu") const {
        ferro_engine_memory_stats s{};
        s.struct_size = sizeof s;
        check(ferro_runtime_engine_memory(rt_.get(), engine.c_str(), &s));
        return s;
    }

    // This process's place in the runtime's communicator (the comm family's comm.info).
    struct RankSize {
        int64_t rank = 0, size = 1;
    };
    RankSize rank_size() const {
        RankSize r;
        check(ferro_runtime_rank_size(rt_.get(), &r.rank, &r.size));
        return r;
    }

    // Starts counting the engine's peak bytes (engine_memory().peak_bytes) from its live bytes now.
    void reset_engine_memory_peak(const std::string& engine = "cpu") const {
        check(ferro_runtime_engine_memory_reset_peak(rt_.get(), engine.c_str()));
    }

    ferro_plan_cache_stats plan_cache_stats() const {
        ferro_plan_cache_stats s{};
        s.struct_size = sizeof s;
        check(ferro_runtime_plan_cache_stats(rt_.get(), &s));
        return s;
    }

private:
    Tensor create(const char* op, const Attrs& attrs) const { return call_one(rt_, op, {}, attrs); }
    detail::RuntimeRef rt_;
};

// Op `name` with its attributes fixed (ferro_op_bind), for a loop that repeats one call: a
// run on inputs with the last run's signature goes straight to that run's plan. Any inputs
// work; each new signature is planned once, as an ordinary call would.
//   ferro::BoundOp fft(rt, "fft.fft", {ferro::Attr("norm", "ortho")});
//   Tensor y = fft(x);   // as ferro::fft::fft(x, std::nullopt, -1, "ortho")
//   fft.into(y, x);      // writes y, allocating nothing
class BoundOp {
public:
    BoundOp(const Runtime& rt, const char* name, const Attrs& attrs = {}) : rt_(rt.ref()) {
        ferro_op op = nullptr;
        check(ferro_op_find(rt.get(), name, &op));
        const std::vector<ferro_named_attr> named = detail::named_of(attrs);
        ferro_bound_call call = nullptr;
        check(ferro_op_bind(rt.get(), op, named.data(), static_cast<uint32_t>(named.size()), &call));
        call_.reset(call);
    }

    // The first output (for ops with one).
    template <class... More> Tensor operator()(const Tensor& first, const More&... more) const {
        const ferro_tensor in[] = {first.get(), more.get()...};
        ferro_tensor out = nullptr;
        ferro_op_call_args args = detail::call_args(nullptr, 0, in, std::size(in), &out, 1);
        check(ferro_bound_call_run(call_.get(), &args));
        return {rt_, out};
    }
    // Every output.
    std::vector<Tensor> all(const std::vector<Tensor>& inputs) const {
        const std::vector<ferro_tensor> in = detail::handles_of(inputs);
        ferro_tensor out[16] = {};
        ferro_op_call_args args = detail::call_args(nullptr, 0, in.data(), in.size(), out, 16);
        check(ferro_bound_call_run(call_.get(), &args));
        std::vector<Tensor> result;
        for (uint32_t i = 0; i < args.n_outputs; ++i) result.emplace_back(rt_, out[i]);
        return result;
    }
    // Writes the one output into `out` (numpy's out=; ferro_op_call_args.into has the rules).
    template <class... More> void into(const Tensor& out, const Tensor& first, const More&... more) const {
        const ferro_tensor in[] = {first.get(), more.get()...};
        const ferro_tensor dst[] = {out.get()};
        run_into(in, std::size(in), dst, 1);
    }
    // Writes every output into `outs`, one each.
    void into(const std::vector<Tensor>& outs, const std::vector<Tensor>& inputs) const {
        const std::vector<ferro_tensor> in = detail::handles_of(inputs), dst = detail::handles_of(outs);
        run_into(in.data(), in.size(), dst.data(), dst.size());
    }

private:
    struct Destroy {
        void operator()(ferro_bound_call c) const noexcept { ferro_bound_call_destroy(c); }
    };
    void run_into(const ferro_tensor* in, size_t n_in, const ferro_tensor* dst, size_t n_dst) const {
        ferro_op_call_args args = detail::call_args(nullptr, 0, in, n_in, nullptr, 0, dst, n_dst);
        check(ferro_bound_call_run(call_.get(), &args));
    }
    detail::RuntimeRef rt_;  // declared first: the call is destroyed before its runtime
    std::unique_ptr<ferro_bound_call_impl, Destroy> call_;
};

// Calls op `name` once, writing its outputs into `outs` (numpy's out=).
inline void call_into(const Runtime& rt, const char* name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outs,
                      const Attrs& attrs = {}) {
    ferro_op op = nullptr;
    check(ferro_op_find(rt.get(), name, &op));
    const std::vector<ferro_named_attr> named = detail::named_of(attrs);
    const std::vector<ferro_tensor> in = detail::handles_of(inputs), dst = detail::handles_of(outs);
    ferro_op_call_args args =
        detail::call_args(named.data(), named.size(), in.data(), in.size(), nullptr, 0, dst.data(), dst.size());
    check(ferro_op_call(rt.get(), op, &args));
}

inline std::vector<Runtime::Example> Runtime::op_examples(const std::string& op, DType dtype, const std::string& engine) const {
    std::vector<ferro_example> raw(16);
    uint32_t n = 0;
    check(ferro_op_examples(rt_.get(), op.c_str(), engine.c_str(), static_cast<ferro_dtype>(dtype), raw.data(),
                            static_cast<uint32_t>(raw.size()), &n));
    std::vector<Example> out;
    for (uint32_t i = 0; i < n; ++i) {  // adopt every input first: nothing leaks if an Attr throws
        Example e;
        for (uint32_t k = 0; k < raw[i].n_inputs; ++k) {
            e.inputs.emplace_back(rt_, raw[i].inputs[k]);
            e.input_flags.push_back(raw[i].input_flags[k]);
        }
        out.push_back(std::move(e));
    }
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t k = 0; k < raw[i].n_attrs; ++k) out[i].attrs.push_back(Attr(raw[i].attrs[k]));
        out[i].what = raw[i].what != nullptr ? raw[i].what : "";
    }
    return out;
}

}  // namespace ferro

#include <ferro/comm.hpp>    // ferro::comm: collectives across processes
#include <ferro/einsum.hpp>  // ferro::einsum: typed calls into the einsum family
#include <ferro/fft.hpp>     // ferro::fft: typed calls into the fft family
#include <ferro/inventory.hpp>
#include <ferro/linalg.hpp>  // ferro::linalg: typed calls into the linalg family
