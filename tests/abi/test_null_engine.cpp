// The null engine plugin, driven directly through its entry point with a stub host: it loads,
// speaks ABI 1, reports no device with a reason, and every engine entry is UNIMPLEMENTED.
#include "stub_host.hpp"

#include <ferro/plugin.h>

#include <dlfcn.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>

using ferro::test::StubHost;
using ferro::test::take_status;

namespace {

struct Library {
    explicit Library(const std::string& path) : handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
    ~Library() {
        if (handle != nullptr) dlclose(handle);
    }
    void* handle;
};

std::string plugin_path(const char* file) {
    const char* dir = std::getenv("FERRO_TEST_BUILD_DIR");
    REQUIRE(dir != nullptr);
    return std::string(dir) + "/lib/ferro/plugins/" + file;
}

}  // namespace

TEST_CASE("null engine: loads, reports no device and answers UNIMPLEMENTED everywhere", "[abi]") {
    Library lib(plugin_path("libferro_engine_null.so"));
    REQUIRE(lib.handle != nullptr);
    auto query = reinterpret_cast<ferro_plugin_query_fn>(dlsym(lib.handle, FERRO_PLUGIN_ENTRY_NAME));
    REQUIRE(query != nullptr);

    StubHost host;
    const ferro_plugin_desc* desc = nullptr;
    REQUIRE(query(&host.api, &desc) == nullptr);
    REQUIRE(desc != nullptr);
    CHECK(desc->abi_major == FERRO_ABI_MAJOR);
    CHECK(desc->struct_size == sizeof(ferro_plugin_desc));
    CHECK(std::string(desc->name) == "engine_null");
    REQUIRE(desc->n_engines == 1);
    const ferro_engine_desc& engine = desc->engines[0];
    CHECK(std::string(engine.kind) == "null");

    ferro_probe_result probe{};
    probe.struct_size = sizeof probe;
    REQUIRE(engine.probe(&host.api, &probe) == nullptr);
    CHECK(probe.device_count == 0);
    CHECK(std::string(probe.reason).find("no devices") != std::string::npos);

    ferro_engine_instance inst{};
    inst.struct_size = sizeof inst;
    REQUIRE(engine.create(&host.api, 0, &inst) == nullptr);
    REQUIRE(inst.iface != nullptr);
    const ferro_engine_iface& f = *inst.iface;
    CHECK(f.struct_size == sizeof(ferro_engine_iface));

    auto expect_unimplemented = [&](ferro_status st, const char* entry) {
        auto parts = take_status(host.api, st);
        CHECK(parts.code == FERRO_UNIMPLEMENTED);
        CHECK(parts.message.find(entry) != std::string::npos);
    };
    ferro_device_props props{};
    ferro_buffer buffer = nullptr;
    void* address = nullptr;
    ferro_engine_session session = nullptr;
    const void* ctx = nullptr;
    char byte = 0;
    expect_unimplemented(f.properties(inst.self, &props), "properties");
    expect_unimplemented(f.alloc(inst.self, 64, 64, &buffer, &address), "alloc");
    expect_unimplemented(f.copy_h2d(inst.self, &byte, nullptr, 0, 1), "copy_h2d");
    expect_unimplemented(f.copy_d2h(inst.self, nullptr, 0, &byte, 1), "copy_d2h");
    expect_unimplemented(f.session_begin(inst.self, &session), "session_begin");
    expect_unimplemented(f.session_end(inst.self, nullptr, 1), "session_end");
    ferro_fill_args fill{};
    ferro_cast_args cast{};
    ferro_unary_args unary{};
    ferro_binary_args binary{};
    ferro_where_args where{};
    ferro_reduce_args reduce{};
    ferro_copy_args copy{};
    ferro_gemm_args gemm{};
    expect_unimplemented(f.fill(inst.self, nullptr, &fill), "fill");
    expect_unimplemented(f.cast(inst.self, nullptr, &cast), "cast");
    expect_unimplemented(f.unary(inst.self, nullptr, &unary), "unary");
    expect_unimplemented(f.binary(inst.self, nullptr, &binary), "binary");
    expect_unimplemented(f.where(inst.self, nullptr, &where), "where");
    expect_unimplemented(f.reduce(inst.self, nullptr, &reduce), "reduce");
    expect_unimplemented(f.copy_strided(inst.self, nullptr, &copy), "copy_strided");
    expect_unimplemented(f.gemm_batched(inst.self, nullptr, &gemm), "gemm_batched");
    expect_unimplemented(f.native_context(inst.self, nullptr, &ctx), "native_context");
    expect_unimplemented(f.import_memory(inst.self, &byte, 1, &buffer), "import_memory");
    CHECK(buffer == nullptr);
    CHECK(session == nullptr);
    f.destroy(inst.self);
}
