// VJP and JVP rules of the comm family, with torch.distributed's meaning: the objective is the
// sum of every rank's own loss, so a rank's cotangent gathers the cotangents of all the ranks
// its input reached. Every collective is linear, and the adjoints pair up:
//   allreduce sum <-> allreduce sum, allgather <-> reduce_scatter, broadcast <-> reduce;
// allreduce max and min send the summed cotangent to the ranks holding the extreme value,
// split evenly between ties (as torch's amax). The rules call collectives, so every rank must
// run backward through the same collectives in the same order, as in the forward.
#include "comm.hpp"

#include <ferro/rules.hpp>

namespace ferro::comm {
namespace {

using plugin::Arg;
using plugin::TensorRef;

class Ops : public plugin::Rules {
public:
    Ops(const ferro_host_api* host, const ferro_vjp_args& a) : Rules(host, a, rule_calls()) {}
    Ops(const ferro_host_api* host, const ferro_jvp_args& a) : Rules(host, a, rule_calls()) {}

    // `op` on x with the call's root and timeout (allreduce: a sum).
    TensorRef collective(Op op, Arg x, const Call& c) const {
        const plugin::DeclaredOp handle{static_cast<uint32_t>(op)};
        switch (op) {
            case Op::allreduce:
                return call(handle, {x}, {plugin::attr_str("op", "sum"), plugin::attr_f64("timeout", c.timeout_s)});
            case Op::broadcast:
            case Op::reduce:
                return call(handle, {x}, {plugin::attr_i64("root", c.root), plugin::attr_f64("timeout", c.timeout_s)});
            default: return call(handle, {x}, {plugin::attr_f64("timeout", c.timeout_s)});
        }
    }
    // 1 where x holds the reduced extreme y, else 0, in x's dtype; and how many ranks hold it.
    std::pair<TensorRef, TensorRef> extremes(Arg x, Arg y, const Call& c) const {
        TensorRef mask = cast(call(FERRO_CORE_OP_EQ, {x, y}), signature(x).dtype);
        TensorRef holders = collective(Op::allreduce, mask, c);
        return {std::move(mask), std::move(holders)};
    }
};

// The collective whose adjoint `op` is.
Op adjoint(Op op) {
    switch (op) {
        case Op::allgather: return Op::reduce_scatter;
        case Op::reduce_scatter: return Op::allgather;
        case Op::broadcast: return Op::reduce;
        case Op::reduce: return Op::broadcast;
        default: return op;
    }
}

}  // namespace

ferro_status vjp(Op op, const ferro_host_api* host, const ferro_vjp_args* args) {
    return plugin::guard(host, [&] {
        const ferro_vjp_args& a = *args;
        if (a.cotangents[0] == nullptr) return;
        const Ops r(host, a);
        const Call c = describe(op, a.attrs);
        TensorRef g = r.collective(adjoint(op), a.cotangents[0], c);
        if (op == Op::allreduce && c.reduction != Reduction::sum) {
            auto [mask, holders] = r.extremes(a.inputs[0], a.outputs[0], c);
            g = r.div(r.mul(g, mask), holders);
        }
        a.input_cotangents[0] = g.release();
    });
}

ferro_status jvp(Op op, const ferro_host_api* host, const ferro_jvp_args* args) {
    return plugin::guard(host, [&] {
        const ferro_jvp_args& a = *args;
        if (a.input_tangents[0] == nullptr) return;
        const Ops r(host, a);
        const Call c = describe(op, a.attrs);
        if (op == Op::allreduce && c.reduction != Reduction::sum) {
            auto [mask, holders] = r.extremes(a.inputs[0], a.outputs[0], c);
            a.output_tangents[0] = r.div(r.collective(op, r.mul(a.input_tangents[0], mask), c), holders).release();
            return;
        }
        a.output_tangents[0] = r.collective(op, a.input_tangents[0], c).release();
    });
}

}  // namespace ferro::comm
