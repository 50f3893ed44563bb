#include "tensor/transfer.hpp"

#include "runtime/runtime.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

namespace ferro::host {
namespace {

// The view's bytes [base, base + bytes) must lie in the memory lent.
void check_inside(std::span<const std::byte> lent, const void* base, uint64_t bytes, const std::string& fn) {
    const auto begin = reinterpret_cast<uintptr_t>(lent.data()), first = reinterpret_cast<uintptr_t>(base);
    if (first < begin || first - begin > lent.size() || bytes > lent.size() - (first - begin)) {
        throw Error(FERRO_INVALID_ARGUMENT,
                    fmt::format("{}: the view reaches bytes [{}, {}) of the memory lent, which holds {} bytes", fn,
                                static_cast<int64_t>(first - begin), static_cast<int64_t>(first - begin + bytes), lent.size()));
    }
}

}  // namespace

TensorPtr borrow_memory(Runtime& runtime, const std::string& engine, ferro_dtype dtype, std::span<const int64_t> shape,
                        const int64_t* strides, const ForeignMemory& memory, const char* what) {
    void* data = memory.data;
    const std::string fn = what;
    if (!is_valid_dtype(dtype)) throw Error(FERRO_INVALID_ARGUMENT, fn + ": unsupported dtype " + dtype_name(dtype));
    check_element_count(dtype, shape, what);
    Dims st = strides ? Dims(strides, strides + shape.size()) : contiguous_strides(shape);
    const StridedExtent e = strided_extent(shape, st.data());
    if (!e.empty && data == nullptr) throw Error(FERRO_INVALID_ARGUMENT, fn + ": data is NULL");
    const int64_t item = itemsize(dtype);
    const wide_int span_bytes = (e.hi - e.lo + 1) * item;
    if (span_bytes > std::numeric_limits<int64_t>::max()) {
        throw Error(FERRO_INVALID_ARGUMENT, fn + ": shape and strides reach beyond addressable memory");
    }
    // The storage starts at the lowest byte any element uses; element 0 sits -lo items in. The
    // addresses are computed as integers: a layout that would wrap around the address space is
    // refused.
    const auto lo_bytes = static_cast<uint64_t>(-static_cast<int64_t>(e.lo * item));
    const auto bytes = static_cast<uint64_t>(e.empty ? 0 : span_bytes);
    const auto address = reinterpret_cast<uintptr_t>(data);
    if (lo_bytes > address || bytes > UINTPTR_MAX - (address - lo_bytes)) {
        throw Error(FERRO_INVALID_ARGUMENT, fn + ": shape and strides reach beyond addressable memory");
    }
    void* base = reinterpret_cast<void*>(address - lo_bytes);
    if (memory.lent && bytes > 0) check_inside(*memory.lent, base, bytes, fn);
    StoragePtr storage = Storage::borrow(runtime.engine(engine), base, bytes, memory.deleter, memory.context);
    return wrap_storage(std::move(storage), dtype, shape, span_of(st), lo_bytes);
}

TensorPtr transfer(Runtime& runtime, ferro_tensor_impl& t, const std::string& engine) {
    const EnginePtr target = runtime.engine(engine);
    if (target.get() == &t.storage->engine()) return TensorPtr::share(&t);
    std::vector<unsigned char> staging(static_cast<size_t>(numel(t.shape) * itemsize(t.dtype)));
    copy_to_host(t, staging.data(), staging.size());
    TensorPtr out = make_tensor(target, t.dtype, t.shape, "to");
    copy_from_host(*out, staging.data(), staging.size());
    return out;
}

}  // namespace ferro::host
