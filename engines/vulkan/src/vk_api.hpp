// The Vulkan entry points the engine uses, loaded at run time from libvulkan.so.1 through
// vkGetInstanceProcAddr / vkGetDeviceProcAddr. The plugin does not link the loader, so it
// loads (and reports 0 devices with the reason) on a machine without one.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace ferro::vk {

// clang-format off
#define FERRO_VK_GLOBAL_FUNCTIONS(X)        \
    X(vkCreateInstance)                     \
    X(vkEnumerateInstanceVersion)           \
    X(vkEnumerateInstanceLayerProperties)   \
    X(vkEnumerateInstanceExtensionProperties)
// clang-format on

// clang-format off
#define FERRO_VK_INSTANCE_FUNCTIONS(X)          \
    X(vkDestroyInstance)                        \
    X(vkEnumeratePhysicalDevices)               \
    X(vkGetPhysicalDeviceProperties)            \
    X(vkGetPhysicalDeviceProperties2)           \
    X(vkGetPhysicalDeviceFeatures2)             \
    X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkGetPhysicalDeviceMemoryProperties)      \
    X(vkEnumerateDeviceExtensionProperties)     \
    X(vkCreateDevice)                           \
    X(vkGetDeviceProcAddr)
// clang-format on

// clang-format off
#define FERRO_VK_DEBUG_FUNCTIONS(X)    \
    X(vkCreateDebugUtilsMessengerEXT)  \
    X(vkDestroyDebugUtilsMessengerEXT)
// clang-format on

// clang-format off
#define FERRO_VK_DEVICE_FUNCTIONS(X)   \
    X(vkDestroyDevice)                 \
    X(vkDeviceWaitIdle)                \
    X(vkGetDeviceQueue)                \
    X(vkQueueSubmit)                   \
    X(vkAllocateMemory)                \
    X(vkFreeMemory)                    \
    X(vkMapMemory)                     \
    X(vkUnmapMemory)                   \
    X(vkCreateBuffer)                  \
    X(vkDestroyBuffer)                 \
    X(vkGetBufferMemoryRequirements)   \
    X(vkBindBufferMemory)              \
    X(vkGetBufferDeviceAddress)        \
    X(vkCreateCommandPool)             \
    X(vkDestroyCommandPool)            \
    X(vkAllocateCommandBuffers)        \
    X(vkResetCommandPool)              \
    X(vkBeginCommandBuffer)            \
    X(vkEndCommandBuffer)              \
    X(vkCmdBindPipeline)               \
    X(vkCmdPushConstants)              \
    X(vkCmdDispatch)                   \
    X(vkCmdPipelineBarrier)            \
    X(vkCmdCopyBuffer)                 \
    X(vkCreateFence)                   \
    X(vkDestroyFence)                  \
    X(vkWaitForFences)                 \
    X(vkResetFences)                   \
    X(vkGetFenceStatus)                \
    X(vkCreateShaderModule)            \
    X(vkDestroyShaderModule)           \
    X(vkCreatePipelineLayout)          \
    X(vkDestroyPipelineLayout)         \
    X(vkCreateComputePipelines)        \
    X(vkDestroyPipeline)
// clang-format on

#define FERRO_VK_DECLARE(name) PFN_##name name = nullptr;

// Process-wide: the loader library and its global entry points. Loaded once, on first use,
// and kept for the life of the process (ICDs do not all survive being unloaded and reloaded).
struct Loader {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
    FERRO_VK_GLOBAL_FUNCTIONS(FERRO_VK_DECLARE)
    std::string error;  // why loading failed; empty when it worked
};

// The loader, or one whose `error` says why there is none.
const Loader& loader();

struct InstanceFunctions {
    FERRO_VK_INSTANCE_FUNCTIONS(FERRO_VK_DECLARE)
    FERRO_VK_DEBUG_FUNCTIONS(FERRO_VK_DECLARE)  // null unless VK_EXT_debug_utils is enabled
};

struct DeviceFunctions {
    FERRO_VK_DEVICE_FUNCTIONS(FERRO_VK_DECLARE)
};

#undef FERRO_VK_DECLARE

// Every instance-level entry point; false (with `missing` naming one) when the loader lacks
// a required one.
bool load_instance_functions(VkInstance instance, InstanceFunctions& out, std::string& missing);
bool load_device_functions(const InstanceFunctions& in, VkDevice device, DeviceFunctions& out, std::string& missing);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)".
std::string result_name(VkResult r);

}  // namespace ferro::vk
