// The binary kernel, with the cpu engine's semantics: integer division floors (and
// is 0 for a zero divisor), integer powers wrap, maximum/minimum propagate NaN, complex has
// no order.
#include "binary_ops.cuh"

namespace ferro::cuda {
namespace {

template <uint32_t Op, class T> ferro_status run(Session& s, const ferro_binary_args& a) {
    using B = Binary<Op, T>;
    if constexpr (B::supported) {
        if (a.out.dtype != dtype_of<typename B::Out>())
            return unsupported(s, "binary", "this output dtype for op " + std::to_string(Op));
        return map2<typename B::Out, T>(s, a.out, a.a, a.b, B{}, "binary");
    } else {
        return unsupported(s, "binary", "op " + std::to_string(Op) + " on this dtype");
    }
}

}  // namespace

ferro_status binary(Session& s, const ferro_binary_args& a) {
    if (a.a.dtype != a.b.dtype) return unsupported(s, "binary", "operands of different dtypes");
    ferro_status st = nullptr;
    const bool ok = visit_dtype(a.a.dtype, [&](auto tag) {
        using T = decltype(tag);
        if (!with_op<FERRO_BINARY_COUNT_>(a.op, [&](auto op) { st = run<decltype(op)::value, T>(s, a); })) {
            st = unsupported(s, "binary", "op " + std::to_string(a.op));
        }
    });
    return ok ? st : unsupported(s, "binary", "this dtype");
}

}  // namespace ferro::cuda
