// One vulkan engine: a device with one compute queue, its memory, its pipelines and the
// sessions in flight.
#pragma once

#include "instance.hpp"
#include "memory.hpp"
#include "pipelines.hpp"

#include <ferro/plugin.h>
#include <ferro/vulkan_context.h>

#include <array>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ferro::vk {

struct Engine;

// Where a dispatch's argument block holds a buffer's device address (`at`: bytes into the block).
struct ArgAddress {
    uint32_t at = 0;
    const Allocation* source = nullptr;
};
struct ArgAddresses {
    std::array<ArgAddress, FERRO_FUSED_MAX_OPERANDS> fields;  // a fused program's operands at most
    uint32_t n = 0;
};

// An address a recorded session wrote into its argument memory, so that a later submission can
// point it into another buffer (ferro_engine_iface.recording_submit).
struct RecordedAddress {
    uint32_t chunk = 0;  // index in SessionState::args
    uint32_t at = 0;     // bytes into that chunk
    const Allocation* source = nullptr;
    uint64_t address = 0;
};

// What one session records into and keeps alive until its work has finished. Recycled, unless a
// recording keeps it.
struct SessionState {
    Engine* engine = nullptr;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    std::vector<Allocation*> args;  // argument chunks (upload memory), kept across reuse
    size_t args_index = 0;          // the chunk being filled
    uint64_t args_used = 0;         // bytes used in it
    uint32_t dispatches = 0;
    bool context_used = false;  // commands were recorded outside dispatch()
    bool recording = false;     // begun by session_begin_recording: addresses are noted
    bool kept = false;          // a Recording owns it: finished, it does not go back to the idle list
    bool pending = false;       // submitted, not yet seen finished
    bool finished = false;      // seen finished, its fence not yet reset (settle_locked)
    uint32_t waiters = 0;       // threads waiting on `fence` (engine flight_mutex)
    std::vector<RecordedAddress> addresses;
    ferro_vulkan_context context{};
};

// A recorded session (ferro_engine_recording): its state, command buffer and argument memory,
// and where each parameter's addresses are.
struct Recording {
    struct Patch {
        uint32_t chunk, at, param;
        uint64_t offset;  // of the address past its parameter's first byte, at recording
    };
    SessionState* session = nullptr;
    uint64_t serial = 0;  // of its last submission
    uint32_t n_params = 0;
    std::vector<Patch> patches;
};

struct Engine {
    const ferro_host_api* host = nullptr;
    std::unique_ptr<Instance> instance;
    PhysicalDevice physical;
    std::string name;
    uint64_t device_memory_bytes = 0;
    VkDevice device = VK_NULL_HANDLE;
    DeviceFunctions fns;
    VkQueue queue = VK_NULL_HANDLE;
    std::mutex queue_mutex;          // vkQueueSubmit needs the queue externally synchronised
    std::unique_ptr<Memory> memory;  // tensors and workspaces
    std::unique_ptr<Memory> upload;  // host-visible: kernel arguments and staging
    bool staging = false;            // transfers go through `upload` (tensor memory not mapped)
    std::unique_ptr<Pipelines> pipelines;

    // Submitted sessions in submission order, and buffers whose release waits for them.
    std::mutex flight_mutex;
    struct InFlight {
        uint64_t serial;
        SessionState* session;
    };
    std::deque<InFlight> in_flight;
    std::vector<std::pair<uint64_t, Allocation*>> deferred_release;  // (serial to wait for, buffer)
    uint64_t submitted = 0;
    uint64_t completed = 0;                               // every submission up to this serial has finished
    std::vector<std::unique_ptr<SessionState>> sessions;  // every state made, for destruction
    std::vector<SessionState*> idle_sessions;

    ~Engine();
};

// A status with `code` and "vulkan engine: <message>".
ferro_status make_status(const Engine& e, uint32_t code, const std::string& message);

// Records one compute dispatch into the session: the pipeline, its argument block (copied
// into the session's upload memory, its device address passed as the push constant) and
// `groups` workgroups (x, y, z), then a barrier that orders it before what comes next.
// `addresses`: where the block holds buffer addresses (noted by a recorded session).
ferro_status dispatch(SessionState& s, VkPipeline pipeline, const void* args, uint64_t args_bytes, std::array<uint32_t, 3> groups,
                      const ArgAddresses& addresses);

// Kernel entry points (kernels.cpp).
ferro_status fill(SessionState& s, const ferro_fill_args& a);
ferro_status cast(SessionState& s, const ferro_cast_args& a);
ferro_status unary(SessionState& s, const ferro_unary_args& a);
ferro_status binary(SessionState& s, const ferro_binary_args& a);
ferro_status where(SessionState& s, const ferro_where_args& a);
ferro_status reduce(SessionState& s, const ferro_reduce_args& a);
ferro_status copy_strided(SessionState& s, const ferro_copy_args& a);
ferro_status gemm_batched(SessionState& s, const ferro_gemm_args& a);
ferro_status elementwise_fused(SessionState& s, const ferro_fused_args& a);

}  // namespace ferro::vk
