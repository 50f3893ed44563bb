// The Vulkan instance and the physical devices the engine can use: shared by probe (count and
// say why not) and create (one engine per usable device, best first).
#pragma once

#include "vk_api.hpp"

#include <ferro/host.h>

#include <memory>
#include <string>
#include <vector>

namespace ferro::vk {

struct Instance {
    const ferro_host_api* host = nullptr;
    VkInstance handle = VK_NULL_HANDLE;
    InstanceFunctions fns;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    bool validation = false;  // VK_LAYER_KHRONOS_validation is on; its messages are logged

    Instance() = default;
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;
    ~Instance();
};

// A Vulkan 1.2 instance. FERRO_VULKAN_VALIDATION=1 enables VK_LAYER_KHRONOS_validation (and
// fails when the layer is missing): every message it sends is logged through the host at
// warn (performance, warnings) or error level with source "vulkan". Null, with `why`, when no
// instance can be made.
std::unique_ptr<Instance> create_instance(const ferro_host_api* host, bool allow_validation, std::string& why);

struct PhysicalDevice {
    VkPhysicalDevice handle = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties props{};
    uint32_t queue_family = 0;  // the first with compute
    bool float64 = false;       // shaderFloat64: f64 and c128 kernels
    bool int8_storage = false;  // storageBuffer8BitAccess and shaderInt8: bool tensors
};

// The devices the engine can run on, discrete GPUs first, then integrated, virtual, software
// (lavapipe) and others, each group in the driver's order. Devices it cannot use are left out
// and named in `skipped` with the reason (no compute queue, Vulkan < 1.2, no
// bufferDeviceAddress or shaderInt64).
std::vector<PhysicalDevice> usable_devices(const Instance& instance, std::string& skipped);

}  // namespace ferro::vk
