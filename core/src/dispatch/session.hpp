// A host session: one engine session plus the buffers its executor may touch (inputs, outputs,
// workspace, scratch). Every primitive a plugin enqueues through the host is checked against
// these buffers' bounds before it reaches the engine, so a plugin's indexing bug becomes an
// error status instead of memory corruption. ferro_session_impl is the ABI's ferro_session.
#pragma once

#include "support/status.hpp"
#include "tensor/tensor.hpp"

#include <ferro/host.h>

#include <boost/container/small_vector.hpp>

#include <memory>
#include <span>

struct ferro_session_impl {
    struct KnownBuffer {
        ferro_buffer buffer;
        uint64_t bytes;
        void* address;  // NULL when the engine's memory is not host addressable
    };
    const ferro::host::Engine* engine = nullptr;
    const ferro::host::EnginePtr* engine_ptr = nullptr;  // the caller's, alive for the session (scratch)
    ferro_engine_session engine_session = nullptr;
    boost::container::small_vector<KnownBuffer, 8> buffers;
    boost::container::small_vector<ferro::host::StoragePtr, 2> scratch;

    // Lets the session's primitives touch `storage`.
    void allow(const ferro::host::Storage& storage) { buffers.push_back({storage.buffer(), storage.bytes(), storage.address()}); }
};

namespace ferro::host {

// Set while this thread runs executors into a recorded session (capture/replay.cpp): what an
// executor does outside its session (calling ops, reading tensor data on the host) is not in the
// recording, which then must not be submitted again.
inline thread_local bool* t_outside_recording = nullptr;
inline void note_work_outside_session() noexcept {
    if (t_outside_recording != nullptr) *t_outside_recording = true;
}

// Begins an engine session on `engine` (which must outlive the session); ends it (without
// waiting) when destroyed. Inline: a small op's call is mostly this kind of bookkeeping.
class Session {
public:
    explicit Session(const EnginePtr& engine) {
        impl_.engine = engine.get();
        impl_.engine_ptr = &engine;
        throw_if_error(engine->iface().session_begin(engine->self(), &impl_.engine_session));
    }
    // A session whose kernels the engine keeps, to submit again (ABI 1.14; the engine records
    // sessions): end it with end_recording.
    struct Recorded {};
    Session(const EnginePtr& engine, Recorded) {
        impl_.engine = engine.get();
        impl_.engine_ptr = &engine;
        throw_if_error(engine->iface().session_begin_recording(engine->self(), &impl_.engine_session));
    }
    ~Session() {
        if (!ended_) free_status(impl_.engine->iface().session_end(impl_.engine->self(), impl_.engine_session, 0));
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    ferro_session_impl* get() noexcept { return &impl_; }
    void allow(const Storage& storage) { impl_.allow(storage); }
    // Ends the session now, reporting the engine's errors.
    void end() {
        ended_ = true;
        throw_if_error(impl_.engine->iface().session_end(impl_.engine->self(), impl_.engine_session, 0));
    }
    // Ends a Recorded session: submitted as end() does; the recording (owned by the caller, null
    // when the engine cannot submit it again) replaces `params` at later submissions.
    ferro_engine_recording end_recording(std::span<const ferro_buffer> params) {
        ended_ = true;
        ferro_engine_recording out = nullptr;
        throw_if_error(impl_.engine->iface().session_end_recording(impl_.engine->self(), impl_.engine_session, params.data(),
                                                                   static_cast<uint32_t>(params.size()), 0, &out));
        return out;
    }

private:
    ferro_session_impl impl_;
    bool ended_ = false;
};

// The host services session_* of ferro_host_api (validate, then forward to the engine).
ferro_status session_fill(ferro_session s, const ferro_fill_args* args);
ferro_status session_cast(ferro_session s, const ferro_cast_args* args);
ferro_status session_unary(ferro_session s, const ferro_unary_args* args);
ferro_status session_binary(ferro_session s, const ferro_binary_args* args);
ferro_status session_where(ferro_session s, const ferro_where_args* args);
ferro_status session_reduce(ferro_session s, const ferro_reduce_args* args);
ferro_status session_copy_strided(ferro_session s, const ferro_copy_args* args);
ferro_status session_gemm_batched(ferro_session s, const ferro_gemm_args* args);
ferro_status session_scratch(ferro_session s, uint64_t bytes, ferro_buffer_view* out);
ferro_status session_native_context(ferro_session s, const void** out);
ferro_status session_use(ferro_session s, ferro_tensor tensor);
ferro_status session_parallel(ferro_session s, uint32_t n, ferro_status (*task)(void*, uint32_t, ferro_session), void* user);

// The built-in core family is host code: its executors enqueue primitives without the bounds
// checks plugins get (they cost more than a tiny op's kernel). Plugins never reach these.
namespace trusted {
template <class Args>
ferro_status run(ferro_session s, const Args& args,
                 ferro_status (*const ferro_engine_iface::*entry)(void*, ferro_engine_session, const Args*)) {
    return (s->engine->iface().*entry)(s->engine->self(), s->engine_session, &args);
}
}  // namespace trusted

}  // namespace ferro::host
