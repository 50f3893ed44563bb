// The vulkan engine's descriptor and engine table: probe, device creation, memory, transfers,
// sessions and the native context. Kernels live in kernels.cpp.
#include "engine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ferro::vk {
namespace {

constexpr uint64_t kTensorBlock = uint64_t{64} << 20;
constexpr uint64_t kUploadBlock = uint64_t{16} << 20;
constexpr uint64_t kArgsChunk = uint64_t{64} << 10;
constexpr uint64_t kStagingChunk = uint64_t{32} << 20;

Engine& self_of(void* self) { return *static_cast<Engine*>(self); }

bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// ---- sessions and submissions ----------------------------------------------------------

// A finished session: its fence reset and the session back to the idle list (unless a recording
// keeps it), once no thread waits on that fence (vkResetFences must not overlap a wait). Needs
// flight_mutex.
void settle_locked(Engine& e, SessionState* s) {
    if (!s->finished || s->waiters > 0) return;
    s->finished = false;
    e.fns.vkResetFences(e.device, 1, &s->fence);
    if (!s->kept) e.idle_sessions.push_back(s);
}

// Returns finished sessions to the idle list and releases the buffers that waited for them.
// Needs flight_mutex.
void reap_locked(Engine& e) {
    uint64_t completed = 0;
    bool any = false;
    while (!e.in_flight.empty()) {
        const Engine::InFlight f = e.in_flight.front();
        if (e.fns.vkGetFenceStatus(e.device, f.session->fence) != VK_SUCCESS) break;
        f.session->pending = false;
        f.session->finished = true;
        settle_locked(e, f.session);
        e.in_flight.pop_front();
        completed = f.serial;
        any = true;
    }
    // Everything submitted up to the oldest unfinished one has completed.
    const uint64_t done = e.in_flight.empty() ? e.submitted : (any ? completed : e.in_flight.front().serial - 1);
    e.completed = done;
    auto keep =
        std::partition(e.deferred_release.begin(), e.deferred_release.end(), [&](const auto& d) { return d.first > done; });
    for (auto it = keep; it != e.deferred_release.end(); ++it) e.memory->release(it->second);
    e.deferred_release.erase(keep, e.deferred_release.end());
}

// Waits for every submitted session. Needs flight_mutex.
ferro_status wait_all_locked(Engine& e) {
    for (const Engine::InFlight& f : e.in_flight) {
        const VkResult r = e.fns.vkWaitForFences(e.device, 1, &f.session->fence, VK_TRUE, UINT64_MAX);
        if (r != VK_SUCCESS) {
            return make_status(e, r == VK_ERROR_DEVICE_LOST ? FERRO_UNAVAILABLE : FERRO_INTERNAL,
                               "waiting for submitted work failed: " + result_name(r));
        }
    }
    reap_locked(e);
    return nullptr;
}

ferro_status wait_all(Engine& e) {
    const std::lock_guard<std::mutex> lock(e.flight_mutex);
    return wait_all_locked(e);
}

ferro_status buffer_info(const ferro_vulkan_context* ctx, ferro_buffer buffer, ferro_vulkan_buffer_info* out);
void lock_queue(const ferro_vulkan_context* ctx, int32_t lock);
void (*get_instance_proc_addr(void* instance, const char* name))(void) {
    return loader().vkGetInstanceProcAddr(static_cast<VkInstance>(instance), name);
}

// An idle session state, or a new one; its command buffer recording. A `recording` session's
// command buffer may be submitted again, and its addresses are noted.
ferro_status take_session(Engine& e, SessionState*& out, bool recording = false) {
    SessionState* s = nullptr;
    {
        const std::lock_guard<std::mutex> lock(e.flight_mutex);
        reap_locked(e);
        if (!e.idle_sessions.empty()) {
            s = e.idle_sessions.back();
            e.idle_sessions.pop_back();
        } else {
            e.sessions.push_back(std::make_unique<SessionState>());
            s = e.sessions.back().get();
            s->engine = &e;
        }
    }
    VkResult r = VK_SUCCESS;
    if (s->pool == VK_NULL_HANDLE) {
        VkCommandPoolCreateInfo pool{};
        pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
        pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
        pool.queueFamilyIndex = e.physical.queue_family;
        r = e.fns.vkCreateCommandPool(e.device, &pool, nullptr, &s->pool);
        VkCommandBufferAllocateInfo alloc{};
        alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        alloc.commandPool = s->pool;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        if (r == VK_SUCCESS) r = e.fns.vkAllocateCommandBuffers(e.device, &alloc, &s->cmd);
        VkFenceCreateInfo fence{};
        fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
        if (r == VK_SUCCESS) r = e.fns.vkCreateFence(e.device, &fence, nullptr, &s->fence);
    } else {
        r = e.fns.vkResetCommandPool(e.device, s->pool, 0);
    }
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = recording ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (r == VK_SUCCESS) r = e.fns.vkBeginCommandBuffer(s->cmd, &begin);
    if (r != VK_SUCCESS) {
        // Start this state afresh next time: drop whatever part of it was made.
        if (s->fence != VK_NULL_HANDLE) e.fns.vkDestroyFence(e.device, s->fence, nullptr);
        if (s->pool != VK_NULL_HANDLE) e.fns.vkDestroyCommandPool(e.device, s->pool, nullptr);  // frees cmd
        s->fence = VK_NULL_HANDLE;
        s->pool = VK_NULL_HANDLE;
        s->cmd = VK_NULL_HANDLE;
        const std::lock_guard<std::mutex> lock(e.flight_mutex);
        e.idle_sessions.push_back(s);
        return make_status(
            e, r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? FERRO_RESOURCE_EXHAUSTED : FERRO_INTERNAL,
            "cannot start a command buffer: " + result_name(r));
    }
    s->args_index = 0;
    s->args_used = 0;
    s->dispatches = 0;
    s->context_used = false;
    s->recording = recording;
    s->addresses.clear();
    s->context = {};
    s->context.struct_size = sizeof s->context;
    s->context.api_version = e.physical.props.apiVersion;
    s->context.instance = e.instance->handle;
    s->context.physical_device = e.physical.handle;
    s->context.device = e.device;
    s->context.queue = e.queue;
    s->context.queue_family_index = e.physical.queue_family;
    s->context.command_pool = reinterpret_cast<uint64_t>(s->pool);
    s->context.command_buffer = s->cmd;
    s->context.get_instance_proc_addr = get_instance_proc_addr;
    s->context.buffer_info = buffer_info;
    s->context.lock_queue = lock_queue;
    s->context.engine = &e;
    out = s;
    return nullptr;
}

void barrier(const Engine& e, VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
             VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
    VkMemoryBarrier b{};
    b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    b.srcAccessMask = src;
    b.dstAccessMask = dst;
    e.fns.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// Returns once submission `serial` of session `s` has finished. Waits on its fence without
// holding flight_mutex, counted in `waiters` so that no thread resets the fence meanwhile.
ferro_status wait_for(Engine& e, SessionState* s, uint64_t serial) {
    for (;;) {
        {
            const std::lock_guard<std::mutex> lock(e.flight_mutex);
            reap_locked(e);
            if (e.completed >= serial) return nullptr;
            ++s->waiters;
        }
        const VkResult r = e.fns.vkWaitForFences(e.device, 1, &s->fence, VK_TRUE, UINT64_MAX);
        {
            const std::lock_guard<std::mutex> lock(e.flight_mutex);
            --s->waiters;
            reap_locked(e);
            settle_locked(e, s);
        }
        if (r != VK_SUCCESS) {
            return make_status(e, r == VK_ERROR_DEVICE_LOST ? FERRO_UNAVAILABLE : FERRO_INTERNAL,
                               "a session failed on the device: " + result_name(r));
        }
    }
}

// Submits the session's ended command buffer (`serial`, when given, receives its serial: 0 when
// it was not submitted); with `wait`, returns after it has run. A session that fails to submit
// goes back to the idle list, unless a recording keeps it.
ferro_status submit(Engine& e, SessionState* s, bool wait, uint64_t* out_serial = nullptr) {
    VkSubmitInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    info.commandBufferCount = 1;
    info.pCommandBuffers = &s->cmd;
    uint64_t serial = 0;
    VkResult r = VK_SUCCESS;
    {
        const std::lock_guard<std::mutex> queue_lock(e.queue_mutex);
        const std::lock_guard<std::mutex> lock(e.flight_mutex);
        r = e.fns.vkQueueSubmit(e.queue, 1, &info, s->fence);
        if (r == VK_SUCCESS) {
            serial = ++e.submitted;
            s->pending = true;
            e.in_flight.push_back({serial, s});
        } else if (!s->kept) {
            e.idle_sessions.push_back(s);
        }
    }
    if (out_serial != nullptr) *out_serial = serial;
    if (r != VK_SUCCESS) {
        return make_status(e, r == VK_ERROR_DEVICE_LOST ? FERRO_UNAVAILABLE : FERRO_INTERNAL,
                           "submitting a session failed: " + result_name(r));
    }
    return wait ? wait_for(e, s, serial) : nullptr;
}

// Ends and submits the session's command buffer (or recycles it when nothing was recorded);
// with `wait`, returns after it has run. `serial` as for submit().
ferro_status finish_session(Engine& e, SessionState* s, bool wait, uint64_t* serial = nullptr) {
    if (serial != nullptr) *serial = 0;
    if (s->dispatches == 0 && !s->context_used) {
        e.fns.vkEndCommandBuffer(s->cmd);
        const std::lock_guard<std::mutex> lock(e.flight_mutex);
        e.idle_sessions.push_back(s);
        return nullptr;
    }
    // Make every write of the session visible to the host (mapped reads after the fence).
    barrier(e, s->cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    const VkResult r = e.fns.vkEndCommandBuffer(s->cmd);
    if (r != VK_SUCCESS) {
        const std::lock_guard<std::mutex> lock(e.flight_mutex);
        if (!s->kept) e.idle_sessions.push_back(s);
        return make_status(e, FERRO_INTERNAL, "ending a command buffer failed: " + result_name(r));
    }
    return submit(e, s, wait, serial);
}

// ---- the engine table --------------------------------------------------------------------

ferro_status properties(void* self, ferro_device_props* out) {
    const Engine& e = self_of(self);
    std::snprintf(out->name, sizeof out->name, "%s", e.name.c_str());
    out->flags = 0;  // device memory: the host reaches it through transfers only
    out->memory_bytes = e.device_memory_bytes;
    static_assert(sizeof out->uuid == VK_UUID_SIZE);
    VkPhysicalDeviceIDProperties id{};
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    VkPhysicalDeviceProperties2 props{};
    props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props.pNext = &id;
    e.instance->fns.vkGetPhysicalDeviceProperties2(e.physical.handle, &props);
    std::memcpy(out->uuid, id.deviceUUID, VK_UUID_SIZE);
    out->dlpack_device_type = FERRO_DLPACK_DEVICE_VULKAN;
    out->score = e.physical.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 30
                 : e.physical.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 20
                 : e.physical.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU            ? -10
                                                                                         : 10;
    std::vector<ferro_dtype> dtypes = {FERRO_DTYPE_F32, FERRO_DTYPE_C64, FERRO_DTYPE_I64};
    if (e.physical.float64) dtypes.insert(dtypes.end(), {FERRO_DTYPE_F64, FERRO_DTYPE_C128});
    if (e.physical.int8_storage) dtypes.push_back(FERRO_DTYPE_BOOL);
    out->n_dtypes = static_cast<uint32_t>(dtypes.size());
    std::copy(dtypes.begin(), dtypes.end(), out->dtypes);
    const uint32_t v = e.physical.props.apiVersion;
    std::snprintf(out->details, sizeof out->details, "Vulkan %u.%u.%u, driver %#x, vendor %#x device %#x; f64 %s; memory %s%s",
                  VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v), e.physical.props.driverVersion,
                  e.physical.props.vendorID, e.physical.props.deviceID, e.physical.float64 ? "yes" : "no (no shaderFloat64)",
                  e.staging ? "device-local, staged" : "host-visible", e.instance->validation ? "; validation layer on" : "");
    return nullptr;
}

ferro_status alloc(void* self, uint64_t bytes, uint64_t alignment, ferro_buffer* out_buffer, void** out_address) {
    Engine& e = self_of(self);
    *out_address = nullptr;
    std::string why;
    bool exhausted = false;
    Allocation* a = nullptr;
    try {
        a = e.memory->allocate(bytes, alignment, why, exhausted);
        if (a == nullptr && exhausted) {  // buffers waiting for submitted work may free enough
            if (ferro_status st = wait_all(e)) return st;
            a = e.memory->allocate(bytes, alignment, why, exhausted);
        }
    } catch (const std::bad_alloc&) {
        why = "out of host memory";
        exhausted = true;
    }
    if (a == nullptr) {
        return make_status(e, exhausted ? FERRO_RESOURCE_EXHAUSTED : FERRO_INTERNAL,
                           "cannot allocate " + std::to_string(bytes) + " bytes: " + why);
    }
    *out_buffer = reinterpret_cast<ferro_buffer>(a);
    return nullptr;
}

// Stream-ordered: a buffer freed while submitted work may still use it is released when that
// work has finished.
void free_buffer(void* self, ferro_buffer buffer) {
    Engine& e = self_of(self);
    auto* a = reinterpret_cast<Allocation*>(buffer);
    if (a == nullptr) return;
    const std::lock_guard<std::mutex> lock(e.flight_mutex);
    reap_locked(e);
    if (e.in_flight.empty()) e.memory->release(a);
    else e.deferred_release.emplace_back(e.submitted, a);
}

// Copies through upload memory: `to_device` copies host -> staging -> buffer, else back.
ferro_status staged_copy(Engine& e, Allocation* a, uint64_t offset, char* host, uint64_t bytes, bool to_device) {
    std::string why;
    bool exhausted = false;
    Allocation* staging = e.upload->allocate(std::min(bytes, kStagingChunk), 16, why, exhausted);
    if (staging == nullptr) {
        return make_status(e, exhausted ? FERRO_RESOURCE_EXHAUSTED : FERRO_INTERNAL, "no staging memory: " + why);
    }
    ferro_status st = nullptr;
    for (uint64_t done = 0; done < bytes && st == nullptr; done += kStagingChunk) {
        const uint64_t n = std::min(kStagingChunk, bytes - done);
        if (to_device) std::memcpy(staging->mapped(), host + done, n);
        SessionState* s = nullptr;
        if ((st = take_session(e, s)) != nullptr) break;
        VkBufferCopy region{};
        region.size = n;
        if (to_device) {
            region.srcOffset = staging->offset;
            region.dstOffset = a->offset + offset + done;
            e.fns.vkCmdCopyBuffer(s->cmd, staging->block->buffer, a->block->buffer, 1, &region);
        } else {
            region.srcOffset = a->offset + offset + done;
            region.dstOffset = staging->offset;
            e.fns.vkCmdCopyBuffer(s->cmd, a->block->buffer, staging->block->buffer, 1, &region);
        }
        s->context_used = true;  // recorded outside dispatch(): submit it
        st = finish_session(e, s, true);
        if (st == nullptr && !to_device) std::memcpy(host + done, staging->mapped(), n);
    }
    e.upload->release(staging);
    return st;
}

// A synchronous transfer between host memory and engine memory, after the submitted work:
// a memcpy where tensor memory is mapped, staged otherwise. `entry` names it in errors.
ferro_status transfer(Engine& e, const char* entry, ferro_buffer buffer, uint64_t offset, char* host, uint64_t bytes,
                      bool to_device) {
    auto* a = reinterpret_cast<Allocation*>(buffer);
    if (offset + bytes > a->size) return make_status(e, FERRO_OUT_OF_RANGE, std::string(entry) + " past the end of the buffer");
    if (bytes == 0) return nullptr;
    if (ferro_status st = wait_all(e)) return st;
    if (e.staging) return staged_copy(e, a, offset, host, bytes, to_device);
    if (to_device) std::memcpy(a->mapped() + offset, host, bytes);
    else std::memcpy(host, a->mapped() + offset, bytes);
    return nullptr;
}

ferro_status copy_h2d(void* self, const void* src, ferro_buffer dst, uint64_t offset, uint64_t bytes) {
    // staged_copy only reads `host` when copying to the device.
    return transfer(self_of(self), "copy_h2d", dst, offset, const_cast<char*>(static_cast<const char*>(src)), bytes, true);
}

ferro_status copy_d2h(void* self, ferro_buffer src, uint64_t offset, void* dst, uint64_t bytes) {
    return transfer(self_of(self), "copy_d2h", src, offset, static_cast<char*>(dst), bytes, false);
}

ferro_status session_begin(void* self, ferro_engine_session* out) {
    SessionState* s = nullptr;
    try {
        if (ferro_status st = take_session(self_of(self), s)) return st;
    } catch (const std::bad_alloc&) {
        return make_status(self_of(self), FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
    *out = reinterpret_cast<ferro_engine_session>(s);
    return nullptr;
}

ferro_status session_end(void* self, ferro_engine_session session, ferro_bool wait) {
    return finish_session(self_of(self), reinterpret_cast<SessionState*>(session), wait != 0);
}

// ---- recorded sessions ------------------------------------------------------------------

// Gives the recording's session state back (to the idle list, or to reap_locked when it is still
// running).
void recording_destroy(void* self, ferro_engine_recording recording) {
    Engine& e = self_of(self);
    std::unique_ptr<Recording> r(reinterpret_cast<Recording*>(recording));
    if (r == nullptr || r->session == nullptr) return;
    const std::lock_guard<std::mutex> lock(e.flight_mutex);
    r->session->kept = false;
    if (r->session->finished) settle_locked(e, r->session);
    else if (!r->session->pending) e.idle_sessions.push_back(r->session);  // else settle_locked will
}

ferro_status session_begin_recording(void* self, ferro_engine_session* out) {
    SessionState* s = nullptr;
    try {
        if (ferro_status st = take_session(self_of(self), s, true)) return st;
    } catch (const std::bad_alloc&) {
        return make_status(self_of(self), FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
    *out = reinterpret_cast<ferro_engine_session>(s);
    return nullptr;
}

// Where each parameter's addresses are in the session's argument memory. Null (with no error)
// when the session cannot be submitted again.
ferro_status make_recording(Engine& e, const SessionState& s, const ferro_buffer* params, uint32_t n_params,
                            std::unique_ptr<Recording>& out) {
    for (uint32_t i = 0; i < n_params; ++i) {
        if (params[i] == nullptr || std::find(params, params + i, params[i]) != params + i) {
            return make_status(e, FERRO_INVALID_ARGUMENT,
                               "session_end_recording: parameter " + std::to_string(i) + " is NULL or given twice");
        }
    }
    if (s.context_used) return nullptr;  // commands recorded outside dispatch(): nothing says where their buffers are
    out = std::make_unique<Recording>();
    out->n_params = n_params;
    for (const RecordedAddress& a : s.addresses) {
        const auto* param =
            std::find(params, params + n_params, reinterpret_cast<ferro_buffer>(const_cast<Allocation*>(a.source)));
        if (param == params + n_params) continue;
        out->patches.push_back({a.chunk, a.at, static_cast<uint32_t>(param - params), a.address - a.source->address()});
    }
    return nullptr;
}

ferro_status session_end_recording(void* self, ferro_engine_session session, const ferro_buffer* params, uint32_t n_params,
                                   ferro_bool wait, ferro_engine_recording* out_recording) {
    Engine& e = self_of(self);
    auto* s = reinterpret_cast<SessionState*>(session);
    *out_recording = nullptr;
    std::unique_ptr<Recording> r;
    ferro_status st = nullptr;
    try {
        st = make_recording(e, *s, params, n_params, r);
    } catch (const std::bad_alloc&) {
        st = make_status(e, FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
    const bool empty = s->dispatches == 0 && !s->context_used;
    if (st != nullptr || r == nullptr || empty) {  // submitted as any session (a recording of nothing keeps no state)
        ferro_status end = finish_session(e, s, wait != 0);
        if (st != nullptr) {
            if (end != nullptr) e.host->status_free(end);
            return st;
        }
        if (end != nullptr) return end;
        *out_recording = reinterpret_cast<ferro_engine_recording>(r.release());
        return nullptr;
    }
    s->kept = true;
    r->session = s;
    if (ferro_status end = finish_session(e, s, wait != 0, &r->serial)) {
        recording_destroy(self, reinterpret_cast<ferro_engine_recording>(r.release()));
        return end;
    }
    *out_recording = reinterpret_cast<ferro_engine_recording>(r.release());
    return nullptr;
}

ferro_status recording_submit(void* self, ferro_engine_recording recording, const ferro_buffer* buffers,
                              const int64_t* offset_deltas, uint32_t n_buffers, ferro_bool wait) {
    Engine& e = self_of(self);
    auto* r = reinterpret_cast<Recording*>(recording);
    if (n_buffers != r->n_params) {
        return make_status(e, FERRO_INVALID_ARGUMENT,
                           "recording_submit: " + std::to_string(n_buffers) + " buffers for a recording of " +
                               std::to_string(r->n_params) + " parameters");
    }
    SessionState* s = r->session;
    if (s == nullptr) return nullptr;  // recorded nothing
    // Its previous submission reads the argument memory and holds the command buffer and fence.
    if (ferro_status st = wait_for(e, s, r->serial)) return st;
    for (const Recording::Patch& p : r->patches) {
        const uint64_t address = reinterpret_cast<const Allocation*>(buffers[p.param])->address() + p.offset +
                                 static_cast<uint64_t>(offset_deltas[p.param]);
        std::memcpy(s->args[p.chunk]->mapped() + p.at, &address, sizeof address);
    }
    return submit(e, s, wait != 0, &r->serial);
}

template <class Args, ferro_status (*Kernel)(SessionState&, const Args&)>
ferro_status kernel(void* self, ferro_engine_session session, const Args* args) {
    try {
        return Kernel(*reinterpret_cast<SessionState*>(session), *args);
    } catch (const std::bad_alloc&) {
        return make_status(self_of(self), FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
}

ferro_status native_context(void* self, ferro_engine_session session, const void** out) {
    Engine& e = self_of(self);
    auto* s = reinterpret_cast<SessionState*>(session);
    // What the session recorded so far is visible to the executor's commands, and theirs to
    // what comes after (dispatch() starts with a barrier when the context was handed out).
    barrier(e, s->cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    s->context_used = true;
    *out = &s->context;
    return nullptr;
}

void destroy(void* self) { delete &self_of(self); }

ferro_status buffer_info(const ferro_vulkan_context*, ferro_buffer buffer, ferro_vulkan_buffer_info* out) {
    const auto* a = reinterpret_cast<const Allocation*>(buffer);
    out->buffer = reinterpret_cast<uint64_t>(a->block->buffer);
    out->offset = a->offset;
    out->device_address = a->address();
    out->size = a->size;
    return nullptr;
}

void lock_queue(const ferro_vulkan_context* ctx, int32_t lock) {
    Engine& e = *static_cast<Engine*>(ctx->engine);
    if (lock != 0) e.queue_mutex.lock();
    else e.queue_mutex.unlock();
}

constexpr ferro_engine_iface kIface = {sizeof(ferro_engine_iface),
                                       0,
                                       properties,
                                       alloc,
                                       free_buffer,
                                       copy_h2d,
                                       copy_d2h,
                                       session_begin,
                                       session_end,
                                       kernel<ferro_fill_args, fill>,
                                       kernel<ferro_cast_args, cast>,
                                       kernel<ferro_unary_args, unary>,
                                       kernel<ferro_binary_args, binary>,
                                       kernel<ferro_where_args, where>,
                                       kernel<ferro_reduce_args, reduce>,
                                       kernel<ferro_copy_args, copy_strided>,
                                       kernel<ferro_gemm_args, gemm_batched>,
                                       native_context,
                                       destroy,
                                       nullptr,
                                       nullptr,
                                       kernel<ferro_fused_args, elementwise_fused>,
                                       session_begin_recording,
                                       session_end_recording,
                                       recording_submit,
                                       recording_destroy};

// ---- probe and create --------------------------------------------------------------------

ferro_status probe(const ferro_host_api* host, ferro_probe_result* out) {
    out->device_count = 0;
    std::string why;
    try {
        auto instance = create_instance(host, false, why);
        if (instance != nullptr) {
            std::string skipped;
            out->device_count = static_cast<uint32_t>(usable_devices(*instance, skipped).size());
            why =
                out->device_count > 0 ? skipped : (skipped.empty() ? "no Vulkan devices" : "no usable Vulkan device: " + skipped);
        }
    } catch (const std::bad_alloc&) {
        why = "out of host memory";
    }
    std::snprintf(out->reason, sizeof out->reason, "%s", why.c_str());
    return nullptr;
}

// Tensor memory: device-local, from the largest device-local heap. On integrated and
// software devices (one memory for host and device) a host-visible coherent type is taken
// and mapped, so transfers are memcpy; elsewhere they are staged (FERRO_VULKAN_STAGING=1
// forces staging, to test that path on any device).
struct MemoryChoice {
    uint32_t tensor_type = UINT32_MAX, upload_type = UINT32_MAX;
    bool map_tensors = false;
    uint64_t heap_bytes = 0;
};

MemoryChoice choose_memory(const VkPhysicalDeviceMemoryProperties& m, VkPhysicalDeviceType device_type) {
    MemoryChoice c;
    const VkMemoryPropertyFlags mappable = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const bool unified = device_type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || device_type == VK_PHYSICAL_DEVICE_TYPE_CPU;
    for (uint32_t i = 0; i < m.memoryTypeCount; ++i) {
        const VkMemoryType& t = m.memoryTypes[i];
        const uint64_t heap = m.memoryHeaps[t.heapIndex].size;
        if ((t.propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0) {
            const bool can_map = unified && (t.propertyFlags & mappable) == mappable;
            const bool better =
                c.tensor_type == UINT32_MAX || heap > c.heap_bytes || (heap == c.heap_bytes && can_map && !c.map_tensors);
            if (better) {
                c.tensor_type = i;
                c.heap_bytes = heap;
                c.map_tensors = can_map;
            }
        }
        if ((t.propertyFlags & mappable) == mappable) {
            const bool cached = (t.propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
            if (c.upload_type == UINT32_MAX ||
                (cached && (m.memoryTypes[c.upload_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) == 0)) {
                c.upload_type = i;
            }
        }
    }
    return c;
}

ferro_status create_device(Engine& e, uint32_t ordinal) {
    std::string why;
    e.instance = create_instance(e.host, true, why);
    if (e.instance == nullptr) return make_status(e, FERRO_UNAVAILABLE, why);
    std::string skipped;
    const std::vector<PhysicalDevice> devices = usable_devices(*e.instance, skipped);
    if (ordinal >= devices.size()) {
        return make_status(e, FERRO_NOT_FOUND,
                           "no device " + std::to_string(ordinal) + " (" + std::to_string(devices.size()) + " usable)");
    }
    e.physical = devices[ordinal];
    e.name = e.physical.props.deviceName;
    const InstanceFunctions& f = e.instance->fns;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = e.physical.queue_family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features v12{};
    v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    v12.bufferDeviceAddress = VK_TRUE;
    v12.storageBuffer8BitAccess = e.physical.int8_storage ? VK_TRUE : VK_FALSE;
    v12.shaderInt8 = e.physical.int8_storage ? VK_TRUE : VK_FALSE;
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &v12;
    features.features.shaderInt64 = VK_TRUE;
    features.features.shaderFloat64 = e.physical.float64 ? VK_TRUE : VK_FALSE;
    VkDeviceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.pNext = &features;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    VkResult r = f.vkCreateDevice(e.physical.handle, &info, nullptr, &e.device);
    if (r != VK_SUCCESS) {
        e.device = VK_NULL_HANDLE;
        return make_status(e, FERRO_UNAVAILABLE, "vkCreateDevice(" + e.name + ") failed: " + result_name(r));
    }
    std::string missing;
    if (!load_device_functions(f, e.device, e.fns, missing)) {
        auto destroy_device = reinterpret_cast<PFN_vkDestroyDevice>(f.vkGetDeviceProcAddr(e.device, "vkDestroyDevice"));
        if (destroy_device != nullptr) destroy_device(e.device, nullptr);
        e.device = VK_NULL_HANDLE;
        return make_status(e, FERRO_UNAVAILABLE, "the Vulkan driver lacks " + missing);
    }
    e.fns.vkGetDeviceQueue(e.device, e.physical.queue_family, 0, &e.queue);

    VkPhysicalDeviceMemoryProperties memory{};
    f.vkGetPhysicalDeviceMemoryProperties(e.physical.handle, &memory);
    const MemoryChoice m = choose_memory(memory, e.physical.props.deviceType);
    if (m.tensor_type == UINT32_MAX || m.upload_type == UINT32_MAX) {
        return make_status(e, FERRO_UNAVAILABLE, e.name + " has no device-local or no host-visible coherent memory type");
    }
    VkPhysicalDeviceMaintenance3Properties limits{};
    limits.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    VkPhysicalDeviceProperties2 props{};
    props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props.pNext = &limits;
    f.vkGetPhysicalDeviceProperties2(e.physical.handle, &props);
    const uint64_t max_allocation = std::min<uint64_t>(limits.maxMemoryAllocationSize, m.heap_bytes);
    e.device_memory_bytes = m.heap_bytes;
    e.staging = !m.map_tensors || env_flag("FERRO_VULKAN_STAGING");
    e.memory = std::make_unique<Memory>(e.device, e.fns, m.tensor_type, m.map_tensors, kTensorBlock, max_allocation);
    e.upload = std::make_unique<Memory>(e.device, e.fns, m.upload_type, true, kUploadBlock, max_allocation);
    e.pipelines = std::make_unique<Pipelines>(e.device, e.fns);
    return nullptr;
}

ferro_status create(const ferro_host_api* host, uint32_t ordinal, ferro_engine_instance* out) {
    auto e = std::make_unique<Engine>();
    e->host = host;
    try {
        if (ferro_status st = create_device(*e, ordinal)) return st;
    } catch (const std::bad_alloc&) {
        return make_status(*e, FERRO_RESOURCE_EXHAUSTED, "out of host memory");
    }
    out->self = e.release();
    out->iface = &kIface;
    return nullptr;
}

constexpr ferro_engine_desc kEngines[] = {
    {sizeof(ferro_engine_desc), 0, "vulkan", FERRO_VULKAN_CONTEXT_ABI,
     "Vulkan compute: SPIR-V kernels for the primitive set on any Vulkan 1.2 device with bufferDeviceAddress", probe, create}};

constexpr ferro_plugin_desc kPlugin = {sizeof(ferro_plugin_desc),
                                       FERRO_ABI_MAJOR,
                                       FERRO_ABI_MINOR,
                                       0,
                                       "engine_vulkan",
                                       "0.1.0",
                                       "Vulkan compute engine (vulkan:N)",
                                       1,
                                       0,
                                       kEngines,
                                       nullptr,
                                       0,
                                       0,
                                       nullptr};

}  // namespace

ferro_status make_status(const Engine& e, uint32_t code, const std::string& message) {
    const std::string text = "vulkan engine: " + message;
    return e.host->status_make(code, text.c_str());
}

ferro_status dispatch(SessionState& s, VkPipeline pipeline, const void* args, uint64_t args_bytes, std::array<uint32_t, 3> groups,
                      const ArgAddresses& addresses) {
    Engine& e = *s.engine;
    const uint64_t size = (args_bytes + 15) / 16 * 16;
    if (size > kArgsChunk) return make_status(e, FERRO_INTERNAL, "a kernel's arguments exceed one chunk");
    if (s.args.empty() || s.args_used + size > kArgsChunk) {
        if (!s.args.empty()) ++s.args_index;
        if (s.args_index == s.args.size()) {
            std::string why;
            bool exhausted = false;
            Allocation* a = e.upload->allocate(kArgsChunk, 16, why, exhausted);
            if (a == nullptr) {
                return make_status(e, exhausted ? FERRO_RESOURCE_EXHAUSTED : FERRO_INTERNAL,
                                   "no memory for kernel arguments: " + why);
            }
            s.args.push_back(a);
        }
        s.args_used = 0;
    }
    Allocation* chunk = s.args[s.args_index];
    std::memcpy(chunk->mapped() + s.args_used, args, args_bytes);
    if (s.recording) {
        for (uint32_t i = 0; i < addresses.n; ++i) {
            const ArgAddress& a = addresses.fields[i];
            uint64_t value = 0;
            std::memcpy(&value, static_cast<const char*>(args) + a.at, sizeof value);
            s.addresses.push_back(
                {static_cast<uint32_t>(s.args_index), static_cast<uint32_t>(s.args_used + a.at), a.source, value});
        }
    }
    const VkDeviceAddress address = chunk->address() + s.args_used;
    s.args_used += size;
    if (s.context_used) {  // an executor recorded commands before this dispatch
        barrier(e, s.cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
    e.fns.vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    e.fns.vkCmdPushConstants(s.cmd, e.pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof address, &address);
    e.fns.vkCmdDispatch(s.cmd, groups[0], groups[1], groups[2]);
    barrier(e, s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    ++s.dispatches;
    return nullptr;
}

Engine::~Engine() {
    if (device != VK_NULL_HANDLE) {
        fns.vkDeviceWaitIdle(device);
        {
            const std::lock_guard<std::mutex> lock(flight_mutex);
            for (const InFlight& f : in_flight) idle_sessions.push_back(f.session);
            in_flight.clear();
            for (auto& [serial, a] : deferred_release) memory->release(a);
            deferred_release.clear();
        }
        for (auto& s : sessions) {
            for (Allocation* a : s->args) upload->release(a);
            if (s->fence != VK_NULL_HANDLE) fns.vkDestroyFence(device, s->fence, nullptr);
            if (s->pool != VK_NULL_HANDLE) fns.vkDestroyCommandPool(device, s->pool, nullptr);
        }
        pipelines.reset();
        memory.reset();
        upload.reset();
        fns.vkDestroyDevice(device, nullptr);
    }
    instance.reset();
}

}  // namespace ferro::vk

namespace ferro::vk {
namespace {
ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    *out = &kPlugin;
    return nullptr;
}
}  // namespace
}  // namespace ferro::vk

FERRO_PLUGIN_EXPORT(ferro::vk::query)
