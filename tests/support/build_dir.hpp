// The build tree under test: ctest sets FERRO_TEST_BUILD_DIR for every suite.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

namespace ferro::test {

inline std::string build_dir() {
    const char* value = std::getenv("FERRO_TEST_BUILD_DIR");
    REQUIRE(value != nullptr);
    return value;
}

inline std::string corpus_dir() { return build_dir() + "/tests/fixtures/corpus"; }
inline std::string corpus_file(const std::string& name) { return corpus_dir() + "/libferro_fixture_" + name + ".so"; }

}  // namespace ferro::test
