// Paths of the loader fixture corpus and a runtime that sees only what a test gives it.
#pragma once

#include "runtime/runtime.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

namespace ferro::test {

// The build tree under test (ctest sets FERRO_TEST_BUILD_DIR).
inline std::string build_dir() {
    const char* value = std::getenv("FERRO_TEST_BUILD_DIR");
    REQUIRE(value != nullptr);
    return value;
}
inline std::string plugin_dir() { return build_dir() + "/lib/ferro/plugins"; }
inline std::string corpus_dir() { return build_dir() + "/tests/fixtures/corpus"; }
inline std::string corpus_file(const std::string& name) {
    return corpus_dir() + "/libferro_fixture_" + name + ".so";
}

// A runtime with no search path and no autoload: tests load exactly what they name.
inline RuntimeOptions isolated_options() {
    RuntimeOptions options;
    options.use_environment_path = false;
    options.use_default_dir = false;
    options.autoload = false;
    options.log_level = FERRO_LOG_OFF;
    return options;
}

}  // namespace ferro::test
