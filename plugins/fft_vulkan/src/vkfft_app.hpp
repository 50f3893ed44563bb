// One VkFFT application: the kernels of one transform shape, compiled once, bound to one
// persistent buffer. vkfft_app.cpp is the only file that includes vkFFT.h (it is a 33,000-line
// header that takes half a minute to compile).
#pragma once

#include <ferro/vulkan_context.h>

#include <cstdint>
#include <memory>

namespace ferro::fft::vulkan {

// VkFFT's view of the buffer: `dims` transformed axes, size[0] the contiguous one, then
// `batches` such blocks one after the other. r2c/c2r use VkFFT's in-place layout: rows of
// size[0] reals padded to 2 (size[0] / 2 + 1).
struct VkfftShape {
    uint32_t dims = 1;  // 1..3
    uint64_t size[3] = {1, 1, 1};
    uint64_t batches = 1;
    bool real = false;        // r2c forward, c2r inverse
    bool omit_first = false;  // size[0] is laid out but not transformed
    bool f64 = false;
};

// Where the plan's buffer lives (from ferro_vulkan_context::buffer_info).
struct VkfftBuffer {
    uint64_t buffer = 0;  // VkBuffer
    uint64_t offset = 0;  // bytes
    uint64_t bytes = 0;
};

class VkfftApp {
public:
    // Compiles the kernels of one direction, forward (exponent -1) or inverse (+1, unscaled),
    // and uploads VkFFT's tables, submitting to the context's queue under the engine's queue
    // lock. Throws plugin::Error (RESOURCE_EXHAUSTED when out of memory).
    VkfftApp(const ferro_vulkan_context& ctx, const VkfftShape& shape, const VkfftBuffer& buffer, bool inverse);
    // Waits for the queue (recorded transforms may still run), then frees VkFFT's objects.
    ~VkfftApp();
    VkfftApp(const VkfftApp&) = delete;
    VkfftApp& operator=(const VkfftApp&) = delete;

    // Records the transform into ctx.command_buffer. Thread-safe.
    void append(const ferro_vulkan_context& ctx);

    struct State;  // VkFFT's application and the function table it calls through

private:
    std::unique_ptr<State> state_;
};

}  // namespace ferro::fft::vulkan
