// The plugin search order of DESIGN §10 and the candidate file pattern.
#include "corpus.hpp"

#include "runtime/search_path.hpp"

#include <filesystem>
#include <fstream>

using namespace ferro::test;

namespace {
struct ScopedEnv {
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        ::setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (old_.empty()) ::unsetenv(name_);
        else ::setenv(name_, old_.c_str(), 1);
    }
    const char* name_;
    std::string old_;
};
}  // namespace

TEST_CASE("search path: explicit paths, then FERRO_PLUGIN_PATH, then next to libferro", "[loader]") {
    ScopedEnv env("FERRO_PLUGIN_PATH", "/env/one:/env/two::/explicit/a");
    const auto dirs = ferro::host::resolve_search_path({"/explicit/a", "/explicit/b"}, true, true);
    REQUIRE(dirs.size() == 5);  // the duplicate /explicit/a and the empty entry are dropped
    CHECK(dirs[0].path == "/explicit/a");
    CHECK(dirs[0].origin == "runtime option");
    CHECK(dirs[1].path == "/explicit/b");
    CHECK(dirs[2].path == "/env/one");
    CHECK(dirs[2].origin == "FERRO_PLUGIN_PATH");
    CHECK(dirs[3].path == "/env/two");
    CHECK(dirs[4].origin == "next to libferro");
    CHECK_FALSE(dirs[0].exists);
    // This test binary lives in build/bin, so the default dir is the build's plugin dir.
    CHECK(std::filesystem::equivalent(dirs[4].path, plugin_dir()));
    CHECK(dirs[4].exists);
}

TEST_CASE("search path: the environment and default dir can be switched off", "[loader]") {
    ScopedEnv env("FERRO_PLUGIN_PATH", "/env/one");
    const auto dirs = ferro::host::resolve_search_path({"/explicit"}, false, false);
    REQUIRE(dirs.size() == 1);
    CHECK(dirs[0].path == "/explicit");
}

TEST_CASE("search path: only libferro_*.so files are candidates, sorted by name", "[loader]") {
    const auto dir = std::filesystem::temp_directory_path() / "ferro_candidates_test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "libferro_dir.so");
    for (const char* name : {"libferro_b.so", "libferro_a.so", "libother.so", "libferro_c.so.1", "ferro_x.so", "libferro_.so"}) {
        std::ofstream(dir / name) << "x";
    }
    const auto files = ferro::host::plugin_candidates(dir);
    REQUIRE(files.size() == 2);
    CHECK(files[0].filename() == "libferro_a.so");
    CHECK(files[1].filename() == "libferro_b.so");
    std::filesystem::remove_all(dir);
}
