// Fills the ferro_host_api table a runtime hands to its plugins.
#pragma once

#include "dispatch/dispatcher.hpp"
#include "support/status.hpp"

#include <ferro/host.h>

#include <cstddef>
#include <span>
#include <string>

namespace ferro::host {

class Runtime;

// The table for `runtime`; host_data points back at it.
ferro_host_api make_host_api(Runtime* runtime);

// The runtime a table belongs to.
Runtime& runtime_of(const ferro_host_api* host);

// The struct_size every caller's op-call args must reach: the 1.0 fields (into and n_into, 1.7,
// are read only when present, see into_of).
inline constexpr std::size_t kOpCallArgsMinSize = FERRO_STRUCT_SIZE_UP_TO(ferro_op_call_args, reserved);

// The call's out tensors (ferro_op_call_args.into, 1.7), empty when it has none; INVALID_ARGUMENT
// naming `op` when into is given with n_into 0.
inline std::span<ferro_tensor_impl* const> into_of(const std::string& op, const ferro_op_call_args& args) {
    if (!FERRO_HAS_FIELD(&args, ferro_op_call_args, n_into) || args.into == nullptr) return {};
    if (args.n_into == 0) throw Error(FERRO_INVALID_ARGUMENT, op + ": into is given but n_into is 0");
    return {args.into, args.n_into};
}

// The handle of op `name`; NOT_FOUND "<context>: ..." saying why there is no such op.
ferro_op find_op(Runtime& runtime, const char* name, const char* context);

// An op call as the C API and the host table take it (ferro_op_call, ferro_call, op_call):
// checks the args, calls the dispatcher, hands the outputs to args. Throws what went wrong.
void call_op(Runtime& runtime, ferro_op_impl& op, ferro_op_call_args& args);

// Hands a call's outputs to the caller's args (new references): OUT_OF_RANGE naming `op`
// when they do not fit, INVALID_ARGUMENT when there are some and args.outputs is NULL.
void give_outputs(const std::string& op, Outputs& outs, ferro_op_call_args& args);

}  // namespace ferro::host
