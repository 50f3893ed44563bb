// extern "C" shims: tensors.
#include "c_api/handles.hpp"
#include "capture/program.hpp"
#include "host_api/host_api.hpp"
#include "tensor/transfer.hpp"

#include <ferro/ferro.h>

using ferro::host::c_api::require;

namespace {

void require_shape(int32_t ndim, const int64_t* shape, const char* function) {
    if (ndim < 0 || ndim > FERRO_MAX_NDIM) {
        throw ferro::host::Error(FERRO_INVALID_ARGUMENT,
                                 std::string(function) + ": ndim " + std::to_string(ndim) + " is outside [0, 64]");
    }
    if (ndim > 0) require(shape, function, "shape");
}

}  // namespace

FERRO_API ferro_status ferro_tensor_from_host(ferro_runtime* runtime, const char* engine, ferro_dtype dtype, int32_t ndim,
                                              const int64_t* shape, const void* data, ferro_tensor* out_tensor) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_tensor_from_host", "runtime");
        require(engine, "ferro_tensor_from_host", "engine");
        require(out_tensor, "ferro_tensor_from_host", "out_tensor");
        require_shape(ndim, shape, "ferro_tensor_from_host");
        const ferro_host_api* host = runtime->runtime.host_api();
        ferro::host::throw_if_error(host->tensor_from_host(host, engine, dtype, ndim, shape, data, out_tensor));
    });
}

FERRO_API ferro_status ferro_tensor_empty(ferro_runtime* runtime, const char* engine, ferro_dtype dtype, int32_t ndim,
                                          const int64_t* shape, ferro_tensor* out_tensor) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_tensor_empty", "runtime");
        require(engine, "ferro_tensor_empty", "engine");
        require(out_tensor, "ferro_tensor_empty", "out_tensor");
        require_shape(ndim, shape, "ferro_tensor_empty");
        const ferro_host_api* host = runtime->runtime.host_api();
        ferro::host::throw_if_error(host->tensor_empty(host, engine, dtype, ndim, shape, out_tensor));
    });
}

FERRO_API ferro_status ferro_tensor_borrow_host(ferro_runtime* runtime, ferro_dtype dtype, int32_t ndim, const int64_t* shape,
                                                const int64_t* strides, void* data, void (*deleter)(void*), void* context,
                                                ferro_tensor* out_tensor) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_tensor_borrow_host", "runtime");
        require(out_tensor, "ferro_tensor_borrow_host", "out_tensor");
        require_shape(ndim, shape, "ferro_tensor_borrow_host");
        *out_tensor = ferro::host::borrow_memory(runtime->runtime, "cpu", dtype, {shape, static_cast<size_t>(ndim)}, strides,
                                                 {data, deleter, context, std::nullopt}, "ferro_tensor_borrow_host")
                          .release_ownership();
    });
}

FERRO_API ferro_status ferro_tensor_borrow(ferro_runtime* runtime, const ferro_borrow_args* args, ferro_tensor* out_tensor) {
    return ferro::host::guard([&] {
        const char* fn = "ferro_tensor_borrow";
        require(runtime, fn, "runtime");
        require(args, fn, "args");
        require(out_tensor, fn, "out_tensor");
        ferro::host::require_struct_size(args->struct_size, sizeof *args, fn, "args");
        require_shape(args->ndim, args->shape, fn);
        if (args->lent_bytes > 0) require(args->lent, fn, "args->lent");
        const std::span<const std::byte> lent(static_cast<const std::byte*>(args->lent), args->lent_bytes);
        *out_tensor =
            ferro::host::borrow_memory(runtime->runtime, "cpu", args->dtype, {args->shape, static_cast<size_t>(args->ndim)},
                                       args->strides, {args->data, args->deleter, args->context, lent}, fn)
                .release_ownership();
    });
}

FERRO_API ferro_status ferro_tensor_copy_to_host(ferro_tensor tensor, void* dst, uint64_t bytes) {
    return ferro::host::guard([&] {
        require(tensor, "ferro_tensor_copy_to_host", "tensor");
        if (bytes > 0) require(dst, "ferro_tensor_copy_to_host", "dst");
        ferro::host::refuse_while_capturing("ferro_tensor_copy_to_host", "a read of tensor data on the host");
        ferro::host::copy_to_host(*tensor, dst, bytes);
    });
}

FERRO_API ferro_status ferro_tensor_to(ferro_runtime* runtime, ferro_tensor tensor, const char* engine,
                                       ferro_tensor* out_tensor) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_tensor_to", "runtime");
        require(tensor, "ferro_tensor_to", "tensor");
        require(engine, "ferro_tensor_to", "engine");
        require(out_tensor, "ferro_tensor_to", "out_tensor");
        *out_tensor = ferro::host::transfer(runtime->runtime, *tensor, engine).release_ownership();
    });
}

FERRO_API void ferro_tensor_retain(ferro_tensor tensor) { ferro::host::TensorPtr::retain(tensor); }
FERRO_API void ferro_tensor_release(ferro_tensor tensor) { ferro::host::TensorPtr::release(tensor); }

FERRO_API ferro_dtype ferro_tensor_dtype(ferro_tensor t) { return t ? t->dtype : FERRO_DTYPE_INVALID; }
FERRO_API int32_t ferro_tensor_ndim(ferro_tensor t) { return t ? static_cast<int32_t>(t->shape.size()) : 0; }
FERRO_API const int64_t* ferro_tensor_shape(ferro_tensor t) { return t ? t->shape.data() : nullptr; }
FERRO_API const int64_t* ferro_tensor_strides(ferro_tensor t) { return t ? t->strides.data() : nullptr; }
FERRO_API int64_t ferro_tensor_numel(ferro_tensor t) { return t ? ferro::host::numel(t->shape) : 0; }
FERRO_API const char* ferro_tensor_engine(ferro_tensor t) { return t ? t->storage->engine().name().c_str() : ""; }
FERRO_API void* ferro_tensor_data(ferro_tensor t) {
    if (t == nullptr || t->storage->address() == nullptr) return nullptr;
    return static_cast<char*>(t->storage->address()) + t->byte_offset;
}
