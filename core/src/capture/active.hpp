// What the dispatcher needs of capture (capture/program.hpp): whether any thread of the process
// captures, read on every call with one relaxed load, and the hook that records a call.
#pragma once

#include "dispatch/host_op.hpp"

#include <ferro/host.h>

#include <atomic>
#include <span>

namespace ferro::host {

class Dispatcher;

// Threads capturing now, in the whole process.
inline std::atomic<uint32_t> g_capturing_threads{0};
inline bool any_capture() noexcept { return g_capturing_threads.load(std::memory_order_relaxed) != 0; }

// Runs the call, recording it when this thread captures (capture/program.cpp): only the
// outermost call of the thread, since what an op calls inside its own prepare or host op
// belongs to it.
Outputs call_recorded(Dispatcher& dispatcher, ferro_op_impl& op, const ferro_named_attr* attrs, uint32_t n_attrs,
                      std::span<ferro_tensor_impl* const> inputs, std::span<ferro_tensor_impl* const> into);

}  // namespace ferro::host
