// Shared by the vulkan suites: a runtime with libferro_engine_vulkan.so and the validation
// layer on (FERRO_VULKAN_VALIDATION=1 from ctest), whose log captures every message the
// engine sends (a validation message fails the test), and the skip rule: with no usable
// Vulkan device a test exits with 77, which ctest reports as skipped.
#pragma once

#include "ferro_test.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

namespace ferro::test {

struct VulkanLog {
    std::mutex mutex;
    std::vector<std::string> messages;  // warnings and errors from source "vulkan"

    static void sink(void* user, uint32_t level, const char* source, const char* message) {
        auto* log = static_cast<VulkanLog*>(user);
        if (level < FERRO_LOG_WARN || std::string(source) != "vulkan") return;
        const std::lock_guard<std::mutex> lock(log->mutex);
        log->messages.emplace_back(message);
    }
};

inline std::string vulkan_plugin() { return build_dir() + "/lib/ferro/plugins/libferro_engine_vulkan.so"; }

// A runtime with the vulkan engine (and the einsum plugin), logging into `log`, with the
// validation layer on unless the environment says otherwise.
inline Runtime vulkan_runtime(VulkanLog& log) {
    setenv("FERRO_VULKAN_VALIDATION", "1", 0);
    setenv("MESA_SHADER_CACHE_DISABLE", "true", 0);
    Runtime::Options o;
    o.use_environment_path = false;
    o.use_default_dir = false;
    o.log_level = FERRO_LOG_WARN;
    o.log_callback = VulkanLog::sink;
    o.log_user = &log;
    Runtime rt(o);
    rt.load_plugin(vulkan_plugin());
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_einsum.so");
    return rt;
}

// The probe's answer for kind "vulkan": device count and reason.
inline EngineKindInfo vulkan_kind(const Runtime& rt) {
    for (const EngineKindInfo& k : rt.inventory().engine_kinds) {
        if (k.kind == "vulkan") return k;
    }
    return {};
}

// Ends the test as skipped (ctest SKIP_RETURN_CODE 77) when there is no vulkan:0.
inline void require_vulkan_device(const Runtime& rt) {
    const EngineKindInfo k = vulkan_kind(rt);
    if (k.device_count > 0) return;
    std::fprintf(stderr, "skipped: no Vulkan device (%s)\n", k.reason.c_str());
    std::fflush(stderr);
    _exit(77);
}

// No validation message (nor any other engine warning) was logged.
inline void check_no_vulkan_messages(VulkanLog& log) {
    const std::lock_guard<std::mutex> lock(log.mutex);
    std::string all;
    for (const std::string& m : log.messages) all += m + "\n";
    INFO(all);
    CHECK(log.messages.empty());
}

}  // namespace ferro::test
