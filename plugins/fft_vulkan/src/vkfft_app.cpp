// The one file that includes vkFFT.h (Debian's, patched for its glslang at configure time:
// TOOLCHAIN.md §4b). VkFFT calls Vulkan functions by their global names; this plugin does not
// link libvulkan (the engine's loader may be anywhere, or absent), so those names are
// file-local function pointers here, filled from the engine's loader. Several engines, or
// runtimes, may have their own loaders: each application keeps its own table and installs
// it into the globals under the one mutex every VkFFT call here runs under.
#include "vkfft_app.hpp"

#include <ferro/plugin.hpp>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <mutex>
#include <string>

// clang-format off
#define FERRO_VKFFT_FUNCTIONS(X)                                                                       \
    X(vkAllocateCommandBuffers) X(vkAllocateDescriptorSets) X(vkAllocateMemory) X(vkBeginCommandBuffer)   \
    X(vkBindBufferMemory) X(vkCmdBindDescriptorSets) X(vkCmdBindPipeline) X(vkCmdCopyBuffer)              \
    X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdPushConstants) X(vkCreateBuffer)                      \
    X(vkCreateComputePipelines) X(vkCreateDescriptorPool) X(vkCreateDescriptorSetLayout)                   \
    X(vkCreatePipelineLayout) X(vkCreateShaderModule) X(vkDestroyBuffer) X(vkDestroyDescriptorPool)       \
    X(vkDestroyDescriptorSetLayout) X(vkDestroyPipeline) X(vkDestroyPipelineLayout)                       \
    X(vkDestroyShaderModule) X(vkEndCommandBuffer) X(vkFreeCommandBuffers) X(vkFreeMemory)                \
    X(vkGetBufferMemoryRequirements) X(vkGetPhysicalDeviceMemoryProperties)                               \
    X(vkGetPhysicalDeviceProperties) X(vkMapMemory) X(vkQueueSubmit) X(vkResetFences) X(vkUnmapMemory)   \
    X(vkUpdateDescriptorSets) X(vkWaitForFences) X(vkCreateFence) X(vkDestroyFence) X(vkQueueWaitIdle)
// clang-format on

// What VkFFT calls (valid only while vkfft_mutex is held: see install()).
#define FERRO_VK_GLOBAL(name) [[maybe_unused]] static PFN_##name name = nullptr;
FERRO_VKFFT_FUNCTIONS(FERRO_VK_GLOBAL)
#undef FERRO_VK_GLOBAL

#define VKFFT_BACKEND 0
#include <vkFFT.h>

namespace ferro::fft::vulkan {
namespace {

std::mutex vkfft_mutex;  // every VkFFT call, and the globals above

struct VkFunctions {
#define FERRO_VK_MEMBER(name) PFN_##name name = nullptr;
    FERRO_VKFFT_FUNCTIONS(FERRO_VK_MEMBER)
#undef FERRO_VK_MEMBER
};

// Device-level functions straight from the driver; the two physical-device queries from the
// instance.
VkFunctions load_functions(const ferro_vulkan_context& ctx) {
    using Void = void (*)();
    const auto get_device_proc_addr =
        reinterpret_cast<PFN_vkGetDeviceProcAddr>(ctx.get_instance_proc_addr(ctx.instance, "vkGetDeviceProcAddr"));
    auto device = static_cast<VkDevice>(ctx.device);
    VkFunctions f;
    std::string missing;
#define FERRO_VK_LOAD(name)                                                                                               \
    {                                                                                                                     \
        Void p = get_device_proc_addr != nullptr ? reinterpret_cast<Void>(get_device_proc_addr(device, #name)) : nullptr; \
        if (p == nullptr) p = ctx.get_instance_proc_addr(ctx.instance, #name);                                            \
        if (p == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;                                    \
        f.name = reinterpret_cast<PFN_##name>(p);                                                                         \
    }
    FERRO_VKFFT_FUNCTIONS(FERRO_VK_LOAD)
#undef FERRO_VK_LOAD
    if (!missing.empty()) throw plugin::Error(FERRO_INTERNAL, "fft (vulkan): the Vulkan loader lacks " + missing);
    return f;
}

void install(const VkFunctions& f) {
#define FERRO_VK_INSTALL(name) ::name = f.name;
    FERRO_VKFFT_FUNCTIONS(FERRO_VK_INSTALL)
#undef FERRO_VK_INSTALL
}

const char* result_name(VkFFTResult r) {
    switch (r) {
        case VKFFT_ERROR_MALLOC_FAILED: return "MALLOC_FAILED";
        case VKFFT_ERROR_UNSUPPORTED_RADIX: return "UNSUPPORTED_RADIX";
        case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH: return "UNSUPPORTED_FFT_LENGTH";
        case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C: return "UNSUPPORTED_FFT_LENGTH_R2C";
        case VKFFT_ERROR_FAILED_TO_ALLOCATE: return "FAILED_TO_ALLOCATE";
        case VKFFT_ERROR_FAILED_TO_ALLOCATE_MEMORY: return "FAILED_TO_ALLOCATE_MEMORY";
        case VKFFT_ERROR_FAILED_TO_CREATE_BUFFER: return "FAILED_TO_CREATE_BUFFER";
        case VKFFT_ERROR_FAILED_TO_SUBMIT_QUEUE: return "FAILED_TO_SUBMIT_QUEUE";
        case VKFFT_ERROR_FAILED_SHADER_PARSE: return "FAILED_SHADER_PARSE";
        case VKFFT_ERROR_FAILED_SHADER_LINK: return "FAILED_SHADER_LINK";
        case VKFFT_ERROR_FAILED_TO_CREATE_PIPELINE: return "FAILED_TO_CREATE_PIPELINE";
        default: return "see vkFFT.h";
    }
}

[[noreturn]] void fail(const char* what, VkFFTResult r) {
    const bool memory =
        r == VKFFT_ERROR_MALLOC_FAILED || r == VKFFT_ERROR_FAILED_TO_ALLOCATE || r == VKFFT_ERROR_FAILED_TO_ALLOCATE_MEMORY;
    const bool unsupported = r == VKFFT_ERROR_UNSUPPORTED_RADIX || r == VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH ||
                             r == VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C;
    throw plugin::Error(memory        ? FERRO_RESOURCE_EXHAUSTED
                        : unsupported ? FERRO_UNIMPLEMENTED
                                      : FERRO_INTERNAL,
                        std::string("fft (vulkan): VkFFT ") + what + " failed: VkFFTResult " +
                            std::to_string(static_cast<int>(r)) + " (" + result_name(r) + ")");
}

}  // namespace

struct VkfftApp::State {
    VkFunctions fns;
    ferro_vulkan_context lasting{};  // the fields that outlive a call (queue, lock_queue, engine)
    bool inverse = false;
    // VkFFT keeps pointers to these: State never moves.
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    uint64_t buffer_size = 0;  // from the VkBuffer's start: VkFFT's descriptors begin there
    uint64_t offset = 0;
    VkFFTApplication app{};
    bool initialized = false;

    void wait_queue() const {
        lasting.lock_queue(&lasting, 1);
        fns.vkQueueWaitIdle(queue);
        lasting.lock_queue(&lasting, 0);
    }
};

VkfftApp::VkfftApp(const ferro_vulkan_context& ctx, const VkfftShape& shape, const VkfftBuffer& buffer, bool inverse)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.fns = load_functions(ctx);
    s.lasting = ctx;
    s.lasting.command_pool = 0;
    s.lasting.command_buffer = nullptr;
    s.inverse = inverse;
    s.physical = static_cast<VkPhysicalDevice>(ctx.physical_device);
    s.device = static_cast<VkDevice>(ctx.device);
    s.queue = static_cast<VkQueue>(ctx.queue);
    s.pool = reinterpret_cast<VkCommandPool>(ctx.command_pool);  // used while initialising only
    s.buffer = reinterpret_cast<VkBuffer>(buffer.buffer);
    s.buffer_size = buffer.offset + buffer.bytes;
    s.offset = buffer.offset;

    VkFenceCreateInfo fence_info{};
    fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if (VkResult r = s.fns.vkCreateFence(s.device, &fence_info, nullptr, &s.fence); r != VK_SUCCESS) {
        throw plugin::Error(
            r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? FERRO_RESOURCE_EXHAUSTED : FERRO_INTERNAL,
            "fft (vulkan): vkCreateFence failed (VkResult " + std::to_string(r) + ")");
    }
    VkFFTConfiguration c{};
    c.FFTdim = shape.dims;
    for (int i = 0; i < 3; ++i) c.size[i] = shape.size[i];
    c.numberBatches = shape.batches;
    c.performR2C = shape.real ? 1 : 0;
    c.omitDimension[0] = shape.omit_first ? 1 : 0;
    c.doublePrecision = shape.f64 ? 1 : 0;
    c.normalize = 0;                          // the plan scales (numpy's three norms)
    c.makeForwardPlanOnly = inverse ? 0 : 1;  // a plan runs one direction: half the kernels
    c.makeInversePlanOnly = inverse ? 1 : 0;
    c.physicalDevice = &s.physical;
    c.device = &s.device;
    c.queue = &s.queue;
    c.commandPool = &s.pool;
    c.fence = &s.fence;
    // The buffer is given at the first append, not here: VkFFT 1.2.26 writes the descriptor
    // sets of a buffer given at creation before it has made Bluestein's chirp buffers, so
    // prime lengths would bind null buffers. Later appends give the same pointer, so the sets
    // are written exactly once, before any command buffer binds them.
    c.bufferSize = &s.buffer_size;
    c.bufferOffset = s.offset;
    c.useUint64 = s.buffer_size > (uint64_t{1} << 31) ? 1 : 0;

    const std::lock_guard<std::mutex> lock(vkfft_mutex);
    install(s.fns);
    // VkFFT submits its table uploads to the queue and waits for them.
    ctx.lock_queue(&ctx, 1);
    const VkFFTResult r = initializeVkFFT(&s.app, c);
    ctx.lock_queue(&ctx, 0);
    if (r != VKFFT_SUCCESS) {
        s.fns.vkDestroyFence(s.device, s.fence, nullptr);
        fail("initializeVkFFT", r);  // initializeVkFFT cleans up after itself on failure
    }
    s.initialized = true;
}

VkfftApp::~VkfftApp() {
    State& s = *state_;
    if (s.initialized) {
        s.wait_queue();  // sessions that recorded this application may still be running
        const std::lock_guard<std::mutex> lock(vkfft_mutex);
        install(s.fns);
        deleteVkFFT(&s.app);
    }
    if (s.fence != VK_NULL_HANDLE) s.fns.vkDestroyFence(s.device, s.fence, nullptr);
}

void VkfftApp::append(const ferro_vulkan_context& ctx) {
    State& s = *state_;
    auto cmd = static_cast<VkCommandBuffer>(ctx.command_buffer);
    VkFFTLaunchParams launch{};
    launch.commandBuffer = &cmd;
    launch.buffer = &s.buffer;  // always this pointer: VkFFT writes its descriptor sets at the first append only
    launch.bufferOffset = s.offset;
    const std::lock_guard<std::mutex> lock(vkfft_mutex);
    install(s.fns);
    if (const VkFFTResult r = VkFFTAppend(&s.app, s.inverse ? 1 : -1, &launch); r != VKFFT_SUCCESS) fail("append", r);
}

}  // namespace ferro::fft::vulkan
