// ferro's Python extension (_ferro): the pieces every binding file shares. The extension speaks
// only the C API of ferro.h; the Python package (src/ferro) builds numpy's surface on it.
#pragma once

#include <ferro/ferro.h>

#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ferro_py {

namespace nb = nanobind;

// A failed C call, turned into the ferro.Error subclass of its code by the translator that
// module.cpp registers.
struct StatusError {
    uint32_t code;
    uint32_t phase;
    std::string message;
};

// Throws StatusError for a non-NULL status (and frees it).
inline void check(ferro_status status) {
    if (status == nullptr) return;
    StatusError error{ferro_status_code(status), ferro_status_phase(status), ferro_status_message(status)};
    ferro_status_free(status);
    throw error;
}

// The core ops the operators call, resolved once per runtime.
enum CoreOp : size_t { kAdd, kSub, kMul, kDiv, kMatmul, kPow, kEq, kNe, kLt, kLe, kGt, kGe, kNeg, kCopy, kCoreOpCount };

// A runtime and its op handles. Tensors keep it alive; it goes when the last of them does.
class RuntimeState {
public:
    explicit RuntimeState(ferro_runtime* rt);
    ~RuntimeState();
    RuntimeState(const RuntimeState&) = delete;
    RuntimeState& operator=(const RuntimeState&) = delete;

    ferro_runtime* get() const noexcept { return rt_; }
    ferro_op core(CoreOp op) const noexcept { return core_[op]; }
    // The handle of a qualified op name, resolved on first use (NOT_FOUND raises).
    ferro_op find(const std::string& name);

private:
    ferro_runtime* rt_;
    std::array<ferro_op, kCoreOpCount> core_{};
    std::mutex mutex_;
    std::unordered_map<std::string, ferro_op> ops_;
};
using RuntimeRef = std::shared_ptr<RuntimeState>;

// The process's default runtime (plugins from the search path), made on first use.
RuntimeRef default_runtime();
// Drops the module's reference to the default runtime (atexit): tensors still alive keep it.
void release_default_runtime();

// One reference on a ferro_tensor, with the runtime it came from.
class Tensor {
public:
    Tensor(RuntimeRef rt, ferro_tensor adopted) noexcept : rt_(std::move(rt)), t_(adopted) {}
    Tensor(const Tensor& o) : rt_(o.rt_), t_(o.t_) { ferro_tensor_retain(t_); }
    Tensor(Tensor&& o) noexcept : rt_(std::move(o.rt_)), t_(std::exchange(o.t_, nullptr)) {}
    Tensor& operator=(Tensor o) noexcept {
        std::swap(rt_, o.rt_);
        std::swap(t_, o.t_);
        return *this;
    }
    ~Tensor() { ferro_tensor_release(t_); }

    ferro_tensor get() const noexcept { return t_; }
    const RuntimeRef& runtime() const noexcept { return rt_; }
    int32_t ndim() const noexcept { return ferro_tensor_ndim(t_); }
    int64_t numel() const noexcept { return ferro_tensor_numel(t_); }
    ferro_dtype dtype() const noexcept { return ferro_tensor_dtype(t_); }

private:
    RuntimeRef rt_;
    ferro_tensor t_;
};

// The handles of `ts`, borrowed, for the C API's arrays of tensors.
inline std::vector<ferro_tensor> handles(const std::vector<Tensor>& ts) {
    std::vector<ferro_tensor> h;
    h.reserve(ts.size());
    for (const auto& t : ts) h.push_back(t.get());
    return h;
}

// Calls `op` with the GIL released when `release_gil` (work that may take long).
std::vector<Tensor> call_op(const RuntimeRef& rt, ferro_op op, const std::vector<ferro_tensor>& inputs,
                            const std::vector<ferro_named_attr>& attrs, bool release_gil);

// Attributes from a Python dict {name: None | bool | int | float | str | sequence of int or
// float}; the strings and arrays they point to live in this object.
class AttrList {
public:
    explicit AttrList(const nb::dict& attrs);
    const std::vector<ferro_named_attr>& get() const noexcept { return named_; }

private:
    std::vector<std::string> names_;
    std::vector<std::string> strings_;
    std::vector<std::vector<int64_t>> ints_;
    std::vector<std::vector<double>> floats_;
    std::vector<ferro_named_attr> named_;
};

// numpy's dtype objects for ferro's dtypes; numpy's dtype name -> ferro dtype.
nb::object numpy_dtype(ferro_dtype dtype);
ferro_dtype dtype_from_name(const std::string& name);  // "float64", "f64", ... (INVALID when unknown)
const char* dtype_name(ferro_dtype dtype);             // "f64" (the core ops' dtype attribute)
size_t itemsize(ferro_dtype dtype);

// Whether this thread is capturing (capture.cpp): reading values on the host through numpy's
// array interface is refused then, as the C API refuses copies to the host.
extern thread_local bool capturing;

void bind_runtime(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_interop(nb::module_& m);
void bind_capture(nb::module_& m);

}  // namespace ferro_py
