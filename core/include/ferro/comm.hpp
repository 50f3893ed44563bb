// ferro::comm — typed calls into the comm family (libferro_comm.so): collectives across the
// processes of the runtime's communicator, with torch.distributed's semantics. Every rank must
// make the same collective calls, with the same dtypes, shapes and attributes, in the same
// order (backward too); a rank that does not join within `timeout` seconds (0: the
// FERRO_COMM_TIMEOUT environment variable, else 600) gives the others DEADLINE_EXCEEDED.
// docs/comm.md has the details. Included by ferro/ferro.hpp.
#pragma once

#include <ferro/ferro.hpp>

#include <string>

namespace ferro::comm {

// y = the reduction of x over every rank ("sum", "max", "min"), on every rank.
inline Tensor allreduce(const Tensor& x, const std::string& op = "sum", double timeout = 0) {
    return call_all(x.runtime_ref(), "comm.allreduce", {x}, {Attr("op", op), Attr("timeout", timeout)}).at(0);
}
// y[r] = x of rank r: shape [size, *x.shape].
inline Tensor allgather(const Tensor& x, double timeout = 0) {
    return call_all(x.runtime_ref(), "comm.allgather", {x}, {Attr("timeout", timeout)}).at(0);
}
// y = sum over ranks r of x_r[rank]: x has shape [size, ...], y its trailing shape.
inline Tensor reduce_scatter(const Tensor& x, double timeout = 0) {
    return call_all(x.runtime_ref(), "comm.reduce_scatter", {x}, {Attr("timeout", timeout)}).at(0);
}
// y = x of rank root, on every rank.
inline Tensor broadcast(const Tensor& x, int64_t root = 0, double timeout = 0) {
    return call_all(x.runtime_ref(), "comm.broadcast", {x}, {Attr("root", root), Attr("timeout", timeout)}).at(0);
}
// y = sum over ranks of x on rank root; zeros elsewhere.
inline Tensor reduce(const Tensor& x, int64_t root = 0, double timeout = 0) {
    return call_all(x.runtime_ref(), "comm.reduce", {x}, {Attr("root", root), Attr("timeout", timeout)}).at(0);
}
// Returns when every rank has called it.
inline void barrier(const Runtime& rt, double timeout = 0) { call_all(rt.ref(), "comm.barrier", {}, {Attr("timeout", timeout)}); }

}  // namespace ferro::comm
