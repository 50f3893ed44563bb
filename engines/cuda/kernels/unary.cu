// The unary kernel: every ferro_unary_op for every dtype where numpy defines it, with the cpu
// engine's semantics (sign of a complex is z/|z|, round is half to even, ...). One kernel per
// (op, dtype), chosen on the host.
#include "unary_ops.cuh"

namespace ferro::cuda {
namespace {

template <uint32_t Op, class T> ferro_status run(Session& s, const ferro_unary_args& a) {
    using U = Unary<Op, T>;
    if constexpr (U::supported) {
        if (a.out.dtype != dtype_of<typename U::Out>())
            return unsupported(s, "unary", "this output dtype for op " + std::to_string(Op));
        return map1<typename U::Out, T>(s, a.out, a.in, U{}, "unary");
    } else {
        return unsupported(s, "unary", "op " + std::to_string(Op) + " on this dtype");
    }
}

}  // namespace

ferro_status unary(Session& s, const ferro_unary_args& a) {
    ferro_status st = nullptr;
    const bool ok = visit_dtype(a.in.dtype, [&](auto tag) {
        using T = decltype(tag);
        if (!with_op<FERRO_UNARY_COUNT_>(a.op, [&](auto op) { st = run<decltype(op)::value, T>(s, a); })) {
            st = unsupported(s, "unary", "op " + std::to_string(a.op));
        }
    });
    return ok ? st : unsupported(s, "unary", "this input dtype");
}

}  // namespace ferro::cuda
