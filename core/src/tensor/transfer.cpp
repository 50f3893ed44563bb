#include "tensor/transfer.hpp"

#include "runtime/runtime.hpp"

#include <fmt/format.h>

#include <vector>

namespace ferro {

TensorPtr borrow_memory(Runtime& runtime, const std::string& engine, ferro_dtype dtype,
                        std::span<const int64_t> shape, const int64_t* strides, void* data,
                        Storage::Deleter deleter, void* context, const char* what) {
    const std::string fn = what;
    if (!is_valid_dtype(dtype)) throw Error(FERRO_INVALID_ARGUMENT, fn + ": unsupported dtype " + dtype_name(dtype));
    const Dims dense = contiguous_strides(shape);
    Dims st = strides ? Dims(strides, strides + shape.size()) : dense;
    int64_t lo = 0, hi = 0, n = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] < 0) throw Error(FERRO_INVALID_ARGUMENT, fn + ": negative size in shape");
        n *= shape[d];
        const int64_t span = (shape[d] - 1) * st[d];
        (span < 0 ? lo : hi) += shape[d] > 0 ? span : 0;
    }
    if (n > 0 && data == nullptr) throw Error(FERRO_INVALID_ARGUMENT, fn + ": data is NULL");
    const int64_t item = itemsize(dtype);
    // The storage starts at the lowest byte any element uses; element 0 sits -lo items in.
    void* base = static_cast<char*>(data) + lo * item;
    const auto bytes = static_cast<uint64_t>(n > 0 ? (hi - lo + 1) * item : 0);
    auto* t = new ferro_tensor_impl;
    TensorPtr owned = TensorPtr::adopt(t);
    t->storage = std::make_shared<Storage>(runtime.engine(engine), base, bytes, deleter, context);
    t->dtype = dtype;
    t->shape.assign(shape.begin(), shape.end());
    t->strides = std::move(st);
    t->byte_offset = static_cast<uint64_t>(-lo * item);
    return owned;
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

}  // namespace ferro
