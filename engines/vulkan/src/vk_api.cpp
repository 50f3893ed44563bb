#include "vk_api.hpp"

#include <cstdlib>

#include <dlfcn.h>

namespace ferro::vk {
namespace {

// FERRO_VULKAN_LIBRARY names another loader (tests use a path that does not exist to check
// the no-loader answer).
Loader load() {
    Loader l;
    const char* env = std::getenv("FERRO_VULKAN_LIBRARY");
    const std::string path = env != nullptr && *env != '\0' ? env : "libvulkan.so.1";
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* why = dlerror();
        l.error = "no Vulkan loader: cannot load " + path + (why != nullptr ? std::string(" (") + why + ")" : std::string());
        return l;
    }
    l.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
    if (l.vkGetInstanceProcAddr == nullptr) {
        l.error = path + " has no vkGetInstanceProcAddr";
        return l;
    }
#define FERRO_VK_LOAD_GLOBAL(name) l.name = reinterpret_cast<PFN_##name>(l.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
    FERRO_VK_GLOBAL_FUNCTIONS(FERRO_VK_LOAD_GLOBAL)
#undef FERRO_VK_LOAD_GLOBAL
    if (l.vkCreateInstance == nullptr || l.vkEnumerateInstanceExtensionProperties == nullptr ||
        l.vkEnumerateInstanceLayerProperties == nullptr) {
        l.error = path + " lacks the Vulkan 1.0 global entry points";
    } else if (l.vkEnumerateInstanceVersion == nullptr) {
        l.error = path + " is a Vulkan 1.0 loader; the engine needs Vulkan 1.2";
    }
    return l;
}

}  // namespace

const Loader& loader() {
    static const Loader l = load();
    return l;
}

bool load_instance_functions(VkInstance instance, InstanceFunctions& out, std::string& missing) {
    const auto get = loader().vkGetInstanceProcAddr;
#define FERRO_VK_LOAD_INSTANCE(name)                               \
    out.name = reinterpret_cast<PFN_##name>(get(instance, #name)); \
    if (out.name == nullptr) {                                     \
        missing = #name;                                           \
        return false;                                              \
    }
    FERRO_VK_INSTANCE_FUNCTIONS(FERRO_VK_LOAD_INSTANCE)
#undef FERRO_VK_LOAD_INSTANCE
#define FERRO_VK_LOAD_OPTIONAL(name) out.name = reinterpret_cast<PFN_##name>(get(instance, #name));
    FERRO_VK_DEBUG_FUNCTIONS(FERRO_VK_LOAD_OPTIONAL)
#undef FERRO_VK_LOAD_OPTIONAL
    return true;
}

bool load_device_functions(const InstanceFunctions& in, VkDevice device, DeviceFunctions& out, std::string& missing) {
#define FERRO_VK_LOAD_DEVICE(name)                                                  \
    out.name = reinterpret_cast<PFN_##name>(in.vkGetDeviceProcAddr(device, #name)); \
    if (out.name == nullptr) {                                                      \
        missing = #name;                                                            \
        return false;                                                               \
    }
    FERRO_VK_DEVICE_FUNCTIONS(FERRO_VK_LOAD_DEVICE)
#undef FERRO_VK_LOAD_DEVICE
    return true;
}

std::string result_name(VkResult r) {
    const char* name = "unknown VkResult";
    switch (r) {
#define FERRO_VK_RESULT(x) \
    case x: name = #x; break;
        FERRO_VK_RESULT(VK_SUCCESS)
        FERRO_VK_RESULT(VK_NOT_READY)
        FERRO_VK_RESULT(VK_TIMEOUT)
        FERRO_VK_RESULT(VK_INCOMPLETE)
        FERRO_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
        FERRO_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        FERRO_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
        FERRO_VK_RESULT(VK_ERROR_DEVICE_LOST)
        FERRO_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
        FERRO_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
        FERRO_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
        FERRO_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
        FERRO_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
        FERRO_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
        FERRO_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
        FERRO_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
        FERRO_VK_RESULT(VK_ERROR_UNKNOWN)
        FERRO_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
        FERRO_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        FERRO_VK_RESULT(VK_ERROR_FRAGMENTATION)
        FERRO_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef FERRO_VK_RESULT
        default: break;
    }
    return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

}  // namespace ferro::vk
