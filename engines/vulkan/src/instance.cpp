#include "instance.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ferro::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool validation_requested() {
    const char* env = std::getenv("FERRO_VULKAN_VALIDATION");
    return env != nullptr && std::strcmp(env, "0") != 0 && *env != '\0';
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    const auto* instance = static_cast<const Instance*>(user);
    const uint32_t level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? FERRO_LOG_ERROR : FERRO_LOG_WARN;
    const std::string message =
        std::string("validation: ") + (data != nullptr && data->pMessage != nullptr ? data->pMessage : "?");
    instance->host->log(instance->host, level, "vulkan", message.c_str());
    return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(Instance* instance) {
    VkDebugUtilsMessengerCreateInfoEXT info{};
    info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    info.pfnUserCallback = on_message;
    info.pUserData = instance;
    return info;
}

bool has_layer(const Loader& l, const char* name) {
    uint32_t n = 0;
    if (l.vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkLayerProperties> layers(n);
    if (l.vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
    return std::any_of(layers.begin(), layers.end(),
                       [&](const VkLayerProperties& p) { return std::strcmp(p.layerName, name) == 0; });
}

// Discrete GPUs first; lavapipe (a CPU device) after every real one.
int rank_of(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
        default: return 4;
    }
}

}  // namespace

Instance::~Instance() {
    if (handle == VK_NULL_HANDLE) return;
    if (messenger != VK_NULL_HANDLE) fns.vkDestroyDebugUtilsMessengerEXT(handle, messenger, nullptr);
    fns.vkDestroyInstance(handle, nullptr);
}

std::unique_ptr<Instance> create_instance(const ferro_host_api* host, bool allow_validation, std::string& why) {
    const Loader& l = loader();
    if (!l.error.empty()) {
        why = l.error;
        return nullptr;
    }
    uint32_t version = 0;
    if (l.vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_2) {
        why = "the Vulkan loader supports version " + std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
              std::to_string(VK_API_VERSION_MINOR(version)) + "; the engine needs 1.2";
        return nullptr;
    }
    auto instance = std::make_unique<Instance>();
    instance->host = host;
    instance->validation = allow_validation && validation_requested();
    if (instance->validation && !has_layer(l, kValidationLayer)) {
        why = std::string("FERRO_VULKAN_VALIDATION is set but ") + kValidationLayer +
              " is not installed (Debian: vulkan-validationlayers)";
        return nullptr;
    }
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "ferro";
    app.pEngineName = "ferro";
    app.apiVersion = VK_API_VERSION_1_2;
    const char* layers[] = {kValidationLayer};
    const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkDebugUtilsMessengerCreateInfoEXT debug = messenger_info(instance.get());
    VkInstanceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pApplicationInfo = &app;
    if (instance->validation) {
        info.pNext = &debug;  // also reports on instance creation and destruction
        info.enabledLayerCount = 1;
        info.ppEnabledLayerNames = layers;
        info.enabledExtensionCount = 1;
        info.ppEnabledExtensionNames = extensions;
    }
    const VkResult r = l.vkCreateInstance(&info, nullptr, &instance->handle);
    if (r != VK_SUCCESS) {
        instance->handle = VK_NULL_HANDLE;
        why = "vkCreateInstance failed: " + result_name(r);
        if (r == VK_ERROR_INCOMPATIBLE_DRIVER) why += ": no Vulkan driver (ICD) was found";
        return nullptr;
    }
    std::string missing;
    if (!load_instance_functions(instance->handle, instance->fns, missing)) {
        // Without vkDestroyInstance the instance cannot be released: say so instead of leaking.
        why = "the Vulkan loader lacks " + missing;
        auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(l.vkGetInstanceProcAddr(instance->handle, "vkDestroyInstance"));
        if (destroy != nullptr) destroy(instance->handle, nullptr);
        instance->handle = VK_NULL_HANDLE;
        return nullptr;
    }
    if (instance->validation) {
        if (instance->fns.vkCreateDebugUtilsMessengerEXT == nullptr ||
            instance->fns.vkCreateDebugUtilsMessengerEXT(instance->handle, &debug, nullptr, &instance->messenger) != VK_SUCCESS) {
            why = "cannot create the validation messenger (VK_EXT_debug_utils)";
            return nullptr;
        }
    }
    return instance;
}

std::vector<PhysicalDevice> usable_devices(const Instance& instance, std::string& skipped) {
    const InstanceFunctions& f = instance.fns;
    uint32_t n = 0;
    std::vector<VkPhysicalDevice> handles;
    if (f.vkEnumeratePhysicalDevices(instance.handle, &n, nullptr) == VK_SUCCESS) {
        handles.resize(n);
        if (f.vkEnumeratePhysicalDevices(instance.handle, &n, handles.data()) != VK_SUCCESS) handles.clear();
        handles.resize(std::min<size_t>(n, handles.size()));
    }
    std::vector<PhysicalDevice> usable;
    const auto skip = [&](const VkPhysicalDeviceProperties& p, const std::string& why) {
        skipped += (skipped.empty() ? "" : "; ") + std::string(p.deviceName) + ": " + why;
    };
    for (VkPhysicalDevice h : handles) {
        PhysicalDevice d;
        d.handle = h;
        f.vkGetPhysicalDeviceProperties(h, &d.props);
        if (d.props.apiVersion < VK_API_VERSION_1_2) {
            skip(d.props, "Vulkan " + std::to_string(VK_API_VERSION_MAJOR(d.props.apiVersion)) + "." +
                              std::to_string(VK_API_VERSION_MINOR(d.props.apiVersion)) + " (the engine needs 1.2)");
            continue;
        }
        uint32_t nq = 0;
        f.vkGetPhysicalDeviceQueueFamilyProperties(h, &nq, nullptr);
        std::vector<VkQueueFamilyProperties> queues(nq);
        f.vkGetPhysicalDeviceQueueFamilyProperties(h, &nq, queues.data());
        const auto compute = std::find_if(queues.begin(), queues.end(), [](const VkQueueFamilyProperties& q) {
            return (q.queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && q.queueCount > 0;
        });
        if (compute == queues.end()) {
            skip(d.props, "no compute queue");
            continue;
        }
        d.queue_family = static_cast<uint32_t>(compute - queues.begin());
        VkPhysicalDeviceVulkan12Features v12{};
        v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
        VkPhysicalDeviceFeatures2 features{};
        features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
        features.pNext = &v12;
        f.vkGetPhysicalDeviceFeatures2(h, &features);
        if (!v12.bufferDeviceAddress) {
            skip(d.props, "no bufferDeviceAddress");
            continue;
        }
        if (!features.features.shaderInt64) {
            skip(d.props, "no shaderInt64");
            continue;
        }
        d.float64 = features.features.shaderFloat64 != VK_FALSE;
        d.int8_storage = v12.storageBuffer8BitAccess != VK_FALSE && v12.shaderInt8 != VK_FALSE;
        usable.push_back(d);
    }
    std::stable_sort(usable.begin(), usable.end(), [](const PhysicalDevice& a, const PhysicalDevice& b) {
        return rank_of(a.props.deviceType) < rank_of(b.props.deviceType);
    });
    return usable;
}

}  // namespace ferro::vk
