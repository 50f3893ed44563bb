// DLPack import with every field of the DLTensor fuzzed (ndim, shape, strides or none, dtype
// code, bits and lanes, device, byte offset, a NULL data pointer) over a buffer the fuzzer
// lends. An import is refused with a status, leaving the managed tensor (and its deleter) with
// the caller, or gives a tensor with the producer's metadata whose release runs the deleter
// exactly once. The data is not read: DLPack carries no extent, so a producer's strides are
// trusted as the producer's promise.
#include "fuzz_runtime.hpp"
#include "fuzz_values.hpp"

#include <dlpack/dlpack.h>

#include <cstring>

#include <vector>

namespace {

int deleted = 0;
void deleter(DLManagedTensor*) { ++deleted; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    ferro_runtime* rt = ferro::fuzz::runtime_with(nullptr);
    alignas(64) static unsigned char buffer[4096];
    const int32_t ndim = ferro::fuzz::rarely(in, 8) ? in.ConsumeIntegral<int32_t>() : in.ConsumeIntegralInRange(0, 6);
    std::vector<int64_t> shape(64), strides(64);
    for (int64_t& s : shape) s = ferro::fuzz::small_or_extreme(in);
    for (int64_t& s : strides) s = ferro::fuzz::small_or_extreme(in);
    DLManagedTensor managed{};
    DLTensor& t = managed.dl_tensor;
    t.data = ferro::fuzz::rarely(in, 16) ? nullptr : buffer + in.ConsumeIntegralInRange<size_t>(0, 64);
    // As a C producer writes it: any integer, a type newer than this header's enum included.
    const int32_t device_type = ferro::fuzz::rarely(in, 8) ? in.ConsumeIntegralInRange(0, 40) : kDLCPU;
    std::memcpy(&t.device.device_type, &device_type, sizeof device_type);
    t.device.device_id = in.ConsumeIntegralInRange(0, 1);
    t.ndim = ndim;
    const ferro_dtype dtype = ferro::fuzz::some_dtype(in);
    t.dtype = {static_cast<uint8_t>(FERRO_DTYPE_CODE(dtype)), static_cast<uint8_t>(FERRO_DTYPE_BITS(dtype)),
               static_cast<uint16_t>(FERRO_DTYPE_LANES(dtype))};
    t.shape = ferro::fuzz::rarely(in, 16) ? nullptr : shape.data();
    t.strides = in.ConsumeBool() ? nullptr : strides.data();
    t.byte_offset = ferro::fuzz::rarely(in, 8) ? in.ConsumeIntegral<uint64_t>() : in.ConsumeIntegralInRange<uint64_t>(0, 64);
    managed.deleter = deleter;
    deleted = 0;
    ferro_tensor tensor = nullptr;
    ferro_status st = ferro_tensor_from_dlpack(rt, &managed, &tensor);
    if (st != nullptr) {
        ferro_status_free(st);
        if (deleted != 0 || tensor != nullptr) __builtin_trap();  // a refusal leaves the tensor with the caller
        return 0;
    }
    if (ferro_tensor_ndim(tensor) != ndim || ferro_tensor_dtype(tensor) != dtype) __builtin_trap();
    for (int32_t d = 0; d < ndim; ++d) {
        if (ferro_tensor_shape(tensor)[d] != shape[static_cast<size_t>(d)]) __builtin_trap();
    }
    (void)ferro_tensor_numel(tensor);
    ferro_tensor_release(tensor);
    if (deleted != 1) __builtin_trap();
    return 0;
}
