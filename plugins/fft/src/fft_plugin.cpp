// libferro_fft.so: the fft family (numpy.fft semantics) and its cpu module on FFTW. Other
// engines get no module from this file (VkFFT and cuFFT modules come as their own plugins).
#include "fft.hpp"

#include <ferro/cpu_context.h>
#include <ferro/schema.hpp>

#include <cstring>
#include <string>

namespace ferro::fft {
namespace {

ferro_status execute_in_context(void* self, const ferro_host_api* host, const ferro_exec_args* args,
                                const void* native_context) {
    return plugin::guard(host, [&] { execute(*static_cast<const Plan*>(self), *args, native_context); });
}

void destroy(void* self) { destroy_plan(static_cast<Plan*>(self)); }

constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, nullptr, execute_in_context, destroy};

ferro_status prepare(void*, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        if (args->op_index >= static_cast<uint32_t>(Op::count)) {
            throw plugin::Error(FERRO_INTERNAL, "fft: prepare for an unknown op index " + std::to_string(args->op_index));
        }
        const Transform t = describe(static_cast<Op>(args->op_index), args->attrs, args->inputs[0]);
        uint64_t workspace = 0;
        Plan* plan = make_plan(t, args->inputs[0], &workspace);
        out->workspace_bytes = workspace;
        out->retained_bytes = 1024;  // the Plan and FFTW's plan (FFTW does not say how big)
        out->iface = &plan_iface;
        out->self = plan;
    });
}

void destroy_module(void*) {}

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        const ferro_engine_target* target = args->target;
        if (target->context_abi == nullptr || std::strcmp(target->context_abi, FERRO_CPU_CONTEXT_ABI) != 0) {
            plugin::write_reason(args->decline_reason, args->decline_capacity,
                                 std::string("the FFTW module runs on host memory with the cpu engine's context (") +
                                     FERRO_CPU_CONTEXT_ABI + "); engine " + target->name + " has " +
                                     (target->context_abi ? target->context_abi : "none"));
            return;
        }
        init_fftw();
        out->iface = &module_iface;
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    static const plugin::OneFamilyPlugin desc(
        "fft", "0.1.0", "fft family: FFTW module for the cpu engine",
        "discrete Fourier transforms: fft, ifft, rfft, irfft, hfft, ihfft in 1, 2 and N dimensions (numpy.fft semantics)",
        static_cast<uint32_t>(Op::count), schemas(), create_module);
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::fft

FERRO_PLUGIN_EXPORT(ferro::fft::query)
