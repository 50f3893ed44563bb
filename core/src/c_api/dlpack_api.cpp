// extern "C" shims: DLPack export and import (DLPack 0.6's DLManagedTensor).
#include "autodiff/node.hpp"
#include "c_api/handles.hpp"
#include "capture/program.hpp"
#include "tensor/transfer.hpp"

#include <ferro/ferro.h>

#include <dlpack/dlpack.h>

#include <fmt/format.h>

#include <cstring>

#include <vector>

using ferro::host::c_api::require;

namespace {

// What an exported DLManagedTensor points into: the tensor reference and the shape arrays.
struct ExportContext {
    ferro::host::TensorPtr tensor;
    std::vector<int64_t> shape, strides;
    DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* managed) { delete static_cast<ExportContext*>(managed->manager_ctx); }

void call_producer_deleter(void* managed) {
    auto* m = static_cast<DLManagedTensor*>(managed);
    if (m->deleter != nullptr) m->deleter(m);
}

// ferro dtypes are packed DLDataType values (types.h), so conversion is a repack.
DLDataType to_dl(ferro_dtype d) {
    return {static_cast<uint8_t>(FERRO_DTYPE_CODE(d)), static_cast<uint8_t>(FERRO_DTYPE_BITS(d)),
            static_cast<uint16_t>(FERRO_DTYPE_LANES(d))};
}
ferro_dtype from_dl(DLDataType t) { return t.code | (uint32_t{t.bits} << 8) | (uint32_t{t.lanes} << 16); }

std::string engine_for(const DLDevice& device) {
    // Read as the integer a C producer wrote: a device type newer than this header's enum
    // (or any other value) is not a DLDeviceType, and loading it as one is undefined.
    int32_t type = 0;
    static_assert(sizeof type == sizeof device.device_type);
    std::memcpy(&type, &device.device_type, sizeof type);
    if (type == kDLCPU) return "cpu";
    if (type == kDLCUDA) return fmt::format("cuda:{}", device.device_id);
    throw ferro::host::Error(FERRO_NOT_FOUND, fmt::format("ferro_tensor_from_dlpack: no engine for DLPack device type {} "
                                                          "(cpu and cuda are supported)",
                                                          type));
}

}  // namespace

FERRO_API ferro_status ferro_tensor_to_dlpack(ferro_tensor tensor, DLManagedTensor** out_managed) {
    return ferro::host::guard([&] {
        require(tensor, "ferro_tensor_to_dlpack", "tensor");
        require(out_managed, "ferro_tensor_to_dlpack", "out_managed");
        ferro::host::refuse_while_capturing("ferro_tensor_to_dlpack", "an export of tensor data to the host");
        // The consumer may write through the export; the tape must not see its inputs change.
        if (ferro::host::requires_grad(*tensor)) {
            throw ferro::host::Error(FERRO_FAILED_PRECONDITION,
                                     "ferro_tensor_to_dlpack: the tensor requires grad; "
                                     "export a detached tensor (ferro_tensor_detach) instead");
        }
        const ferro::host::Engine& engine = tensor->storage->engine();
        if (tensor->storage->address() == nullptr) {
            throw ferro::host::Error(FERRO_UNIMPLEMENTED,
                                     "ferro_tensor_to_dlpack: engine '" + engine.name() + "' memory has no address to share");
        }
        auto ctx = std::make_unique<ExportContext>();
        ctx->tensor = ferro::host::TensorPtr::share(tensor);
        ctx->shape.assign(tensor->shape.begin(), tensor->shape.end());
        ctx->strides.assign(tensor->strides.begin(), tensor->strides.end());
        DLTensor& t = ctx->managed.dl_tensor;
        t.data = tensor->storage->address();
        t.device = {static_cast<DLDeviceType>(engine.props().dlpack_device_type), static_cast<int32_t>(engine.ordinal())};
        t.ndim = static_cast<int32_t>(ctx->shape.size());
        t.dtype = to_dl(tensor->dtype);
        t.shape = ctx->shape.data();
        t.strides = ctx->strides.data();
        t.byte_offset = tensor->byte_offset;
        ctx->managed.manager_ctx = ctx.get();
        ctx->managed.deleter = delete_export;
        *out_managed = &ctx.release()->managed;
    });
}

FERRO_API ferro_status ferro_tensor_from_dlpack(ferro_runtime* runtime, DLManagedTensor* managed, ferro_tensor* out_tensor) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_tensor_from_dlpack", "runtime");
        require(managed, "ferro_tensor_from_dlpack", "managed");
        require(out_tensor, "ferro_tensor_from_dlpack", "out_tensor");
        const DLTensor& t = managed->dl_tensor;
        if (t.ndim < 0 || t.ndim > FERRO_MAX_NDIM || (t.ndim > 0 && t.shape == nullptr)) {
            throw ferro::host::Error(FERRO_INVALID_ARGUMENT,
                                     fmt::format("ferro_tensor_from_dlpack: ndim {} or shape is invalid", t.ndim));
        }
        // In integers: an offset past the end of the address space is refused, not wrapped.
        const auto data = reinterpret_cast<uintptr_t>(t.data);
        if (t.data != nullptr && t.byte_offset > UINTPTR_MAX - data) {
            throw ferro::host::Error(FERRO_INVALID_ARGUMENT, fmt::format("ferro_tensor_from_dlpack: byte_offset {} reaches "
                                                                         "beyond addressable memory",
                                                                         t.byte_offset));
        }
        void* element0 = t.data != nullptr ? reinterpret_cast<void*>(data + t.byte_offset) : nullptr;
        *out_tensor = ferro::host::borrow_memory(
                          runtime->runtime, engine_for(t.device), from_dl(t.dtype), {t.shape, static_cast<size_t>(t.ndim)},
                          t.strides, {element0, call_producer_deleter, managed, std::nullopt}, "ferro_tensor_from_dlpack")
                          .release_ownership();
    });
}
