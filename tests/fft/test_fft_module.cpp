// The fft plugin seen from the ABI, with a stub host: it describes its 18 ops, and its module
// factory accepts the cpu engine's context and declines any other engine with the reason.
#include "stub_host.hpp"

#include <ferro/cpu_context.h>
#include <ferro/plugin.h>
#include <ferro/family/fft.hpp>

#include <dlfcn.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

using ferro::test::StubHost;

TEST_CASE("fft module: 18 ops, a module for the cpu engine, a declined one with the reason elsewhere", "[fft]") {
    const char* dir = std::getenv("FERRO_TEST_BUILD_DIR");
    REQUIRE(dir != nullptr);
    void* lib = dlopen((std::string(dir) + "/lib/ferro/plugins/libferro_fft.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    auto query = reinterpret_cast<ferro_plugin_query_fn>(dlsym(lib, FERRO_PLUGIN_ENTRY_NAME));
    REQUIRE(query != nullptr);
    StubHost host;
    const ferro_plugin_desc* desc = nullptr;
    REQUIRE(query(&host.api, &desc) == nullptr);
    REQUIRE(desc->n_families == 1);
    const ferro_family_desc& family = desc->families[0];
    CHECK(std::string(family.id) == "fft");
    REQUIRE(family.n_ops == 18);
    const char* names[] = {"fft",    "ifft", "rfft",  "irfft", "hfft",   "ihfft", "fft2",   "ifft2", "rfft2",
                           "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn"};
    CHECK(std::string(family.version) == ferro::family::fft::kVersion);  // the contract's, which providers check
    for (uint32_t i = 0; i < family.n_ops; ++i) {
        CHECK(std::string(family.ops[i].name) == names[i]);
        CHECK(std::string(family.ops[i].name) == ferro::family::fft::op_name(static_cast<ferro::family::fft::Op>(i)));
        CHECK(family.ops[i].vjp != nullptr);
        CHECK(family.ops[i].jvp != nullptr);
    }

    ferro_device_props props{};
    props.struct_size = sizeof props;
    char reason[256] = {};
    for (const char* abi : {"ferro.vulkan.ctx.v1", FERRO_CPU_CONTEXT_ABI}) {
        const bool cpu = std::string(abi) == FERRO_CPU_CONTEXT_ABI;
        const ferro_engine_target target{sizeof(ferro_engine_target), 0,   cpu ? "cpu" : "vulkan:0",
                                         cpu ? "cpu" : "vulkan",      abi, &props};
        const ferro_module_create_args args{sizeof(ferro_module_create_args), sizeof reason, &target, reason};
        ferro_module_instance module{};
        module.struct_size = sizeof module;
        REQUIRE(family.create_module(&host.api, &args, &module) == nullptr);
        if (cpu) {
            REQUIRE(module.iface != nullptr);
            module.iface->destroy(module.self);
        } else {
            CHECK(module.iface == nullptr);
            CHECK_THAT(reason, Catch::Contains("the FFTW module runs on host memory with the cpu engine's context") &&
                                   Catch::Contains("engine vulkan:0 has ferro.vulkan.ctx.v1"));
        }
    }
    // No dlclose: FFTW's planner state lives as long as the process (the module never calls
    // fftw_cleanup, which would break an application's own FFTW plans), and unloading the
    // library would turn it into leaks.
}
