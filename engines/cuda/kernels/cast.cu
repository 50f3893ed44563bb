// The cast kernel: numpy's conversions between every pair of dtypes (device.cuh's convert).
#include "device.cuh"

namespace ferro::cuda {
namespace {

template <class Out, class In> struct Convert {
    __device__ Out operator()(In x) const { return convert<Out>(x); }
};

}  // namespace

ferro_status cast(Session& s, const ferro_cast_args& a) {
    ferro_status st = nullptr;
    bool inner_ok = false;
    const bool ok = visit_dtype(a.in.dtype, [&](auto in_tag) {
        using In = decltype(in_tag);
        inner_ok = visit_dtype(a.out.dtype, [&](auto out_tag) {
            using Out = decltype(out_tag);
            st = map1<Out, In>(s, a.out, a.in, Convert<Out, In>{}, "cast");
        });
    });
    return ok && inner_ok ? st : unsupported(s, "cast", "this dtype pair");
}

}  // namespace ferro::cuda
