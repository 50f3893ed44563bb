// Paths of the loader fixture corpus and a runtime that sees only what a test gives it.
#pragma once

#include "build_dir.hpp"
#include "runtime/runtime.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace ferro::test {

inline std::string plugin_dir() { return build_dir() + "/lib/ferro/plugins"; }

// A runtime with no search path and no autoload: tests load exactly what they name.
inline host::RuntimeOptions isolated_options() {
    host::RuntimeOptions options;
    options.use_environment_path = false;
    options.use_default_dir = false;
    options.autoload = false;
    options.log_level = FERRO_LOG_OFF;
    return options;
}

// The lines a runtime logs to its callback (options.log_callback = capture_log, log_user = the
// CapturedLog), as "<level> <source>: <message>".
struct CapturedLog {
    std::mutex mutex;
    std::vector<std::string> lines;
};
inline void capture_log(void* user, uint32_t level, const char* source, const char* message) {
    auto* c = static_cast<CapturedLog*>(user);
    const std::lock_guard lock(c->mutex);
    c->lines.push_back(std::string(host::log_level_name(level)) + " " + source + ": " + message);
}

}  // namespace ferro::test
