// Paths of the loader fixture corpus and a runtime that sees only what a test gives it.
#pragma once

#include "build_dir.hpp"
#include "runtime/runtime.hpp"

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

}  // namespace ferro::test
