// The copy_strided kernel: any layout into any other; the bits move unchanged, so only the
// element size matters.
#include "device.cuh"

namespace ferro::cuda {
namespace {

struct alignas(16) Bits16 {
    uint64_t lo, hi;
};

template <class T> struct Identity {
    __device__ T operator()(T x) const { return x; }
};

template <class T> ferro_status copy_as(Session& s, const ferro_copy_args& a) {
    return map1<T, T>(s, a.out, a.in, Identity<T>{}, "copy_strided");
}

}  // namespace

ferro_status copy_strided(Session& s, const ferro_copy_args& a) {
    if (a.in.dtype != a.out.dtype) return unsupported(s, "copy_strided", "operands of different dtypes");
    switch (FERRO_DTYPE_BITS(a.out.dtype)) {
        case 8: return copy_as<uint8_t>(s, a);
        case 32: return copy_as<uint32_t>(s, a);
        case 64: return copy_as<uint64_t>(s, a);
        case 128: return copy_as<Bits16>(s, a);
        default: return unsupported(s, "copy_strided", "this dtype");
    }
}

}  // namespace ferro::cuda
