// The unary kernel: every ferro_unary_op for every dtype where numpy defines it, with the cpu
// engine's semantics (sign of a complex is z/|z|, round is half to even, ...). One kernel per
// (op, dtype), chosen on the host.
#include "unary_ops.cuh"

#include <utility>

namespace ferro::cuda {
namespace {

template <uint32_t Op, class T>
ferro_status run(Session& s, const ferro_unary_args& a) {
    using U = Unary<Op, T>;
    if constexpr (U::supported) {
        if (a.out.dtype != dtype_of<typename U::Out>()) return unsupported(s, "unary", "this output dtype for op " + std::to_string(Op));
        return map1<typename U::Out, T>(s, a.out, a.in, U{}, "unary");
    } else {
        return unsupported(s, "unary", "op " + std::to_string(Op) + " on this dtype");
    }
}

template <class T, uint32_t... Ops>
ferro_status dispatch(Session& s, const ferro_unary_args& a, std::integer_sequence<uint32_t, Ops...>) {
    ferro_status st = nullptr;
    const bool known = ((a.op == Ops ? (st = run<Ops, T>(s, a), true) : false) || ...);
    return known ? st : unsupported(s, "unary", "op " + std::to_string(a.op));
}

}  // namespace

ferro_status unary(Session& s, const ferro_unary_args& a) {
    ferro_status st = nullptr;
    const bool ok = visit_dtype(a.in.dtype, [&](auto tag) {
        st = dispatch<decltype(tag)>(s, a, std::make_integer_sequence<uint32_t, FERRO_UNARY_COUNT_>{});
    });
    return ok ? st : unsupported(s, "unary", "this input dtype");
}

}  // namespace ferro::cuda
