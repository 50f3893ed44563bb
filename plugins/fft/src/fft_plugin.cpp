// libferro_fft.so: the fft family (numpy.fft semantics) and its cpu module on FFTW. Other
// engines get no module from this file (VkFFT and cuFFT modules come as their own plugins).
#include "fft.hpp"

#include <ferro/cpu_context.h>
#include <ferro/rules.hpp>
#include <ferro/schema.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <thread>

namespace ferro::fft {
namespace {

// A session executor that takes the engine's native context from its session (the cpu
// engine's pool and BLAS thread holds) and calls the vendor library with it.
ferro_status execute_in_session(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] {
        const void* native_context = nullptr;
        plugin::check(host, host->session_native_context(args->session, &native_context));
        execute(*static_cast<const Plan*>(self), *args, native_context);
    });
}

void destroy(void* self) { destroy_plan(static_cast<Plan*>(self)); }

constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, execute_in_session, nullptr, destroy};

// The module's state: the engine's thread budget.
struct Module {
    int threads;
};

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        if (args->op_index >= static_cast<uint32_t>(Op::count)) {
            throw plugin::Error(FERRO_INTERNAL, "fft: prepare for an unknown op index " + std::to_string(args->op_index));
        }
        const Transform t = describe(static_cast<Op>(args->op_index), args->attrs, args->inputs[0]);
        uint64_t workspace = 0;
        Plan* plan = make_plan(t, args->inputs[0], static_cast<Module*>(self)->threads, &workspace);
        out->workspace_bytes = workspace;
        out->retained_bytes = 1024;  // the Plan and FFTW's plan (FFTW does not say how big)
        out->iface = &plan_iface;
        out->self = plan;
    });
}

void destroy_module(void* self) { delete static_cast<Module*>(self); }

// Two sample calls per op: the defaults on a small batch, and padding or truncation on another
// axis with another norm (ferro-inspect check).
ferro_status examples(void*, const ferro_host_api* host, ferro_examples_args* args) {
    return plugin::guard(host, [&] {
        static constexpr int64_t one_d_shape[] = {3, 10}, one_d_odd[] = {4, 7}, n_d_shape[] = {2, 3, 4};
        static constexpr int64_t s_two[] = {5, 3}, axes_two[] = {2, 0};
        const plugin::Rules r(host);
        const bool one_d = args->op_index <= static_cast<uint32_t>(Op::ihfft);
        const uint32_t n = std::min<uint32_t>(args->capacity, 2);
        for (uint32_t i = 0; i < n; ++i) {
            ferro_example& e = args->examples[i];
            e = {};
            const std::span<const int64_t> shape =
                one_d ? (i == 0 ? std::span<const int64_t>(one_d_shape) : one_d_odd) : std::span<const int64_t>(n_d_shape);
            e.inputs[0] = r.rand(shape, args->dtype, 31 + i, args->engine).release();
            e.n_inputs = 1;
            if (i == 1 && one_d) {
                e.attrs[0] = plugin::attr_i64("n", 9);
                e.attrs[1] = plugin::attr_i64("axis", 0);
                e.attrs[2] = plugin::attr_str("norm", "ortho");
                e.n_attrs = 3;
                e.what = "axis 0 of 4 x 7, n = 9 (zero-padded), ortho";
            } else if (i == 1) {
                e.attrs[0] = plugin::attr_i64s("s", s_two);
                e.attrs[1] = plugin::attr_i64s("axes", axes_two);
                e.attrs[2] = plugin::attr_str("norm", "forward");
                e.n_attrs = 3;
                e.what = "2 x 3 x 4 over axes (2, 0), s = (5, 3): padded and truncated, forward";
            } else {
                e.what = one_d ? "3 x 10, defaults" : "2 x 3 x 4, defaults";
            }
            args->n_examples = i + 1;
        }
    });
}

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, examples};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        if (!plugin::accepts_cpu_context(args, "the FFTW module")) return;
        init_fftw();
        // An engine that does not say (a host before 1.10) gets the hardware's threads.
        const ferro_engine_target& target = *args->target;
        const unsigned said = FERRO_HAS_FIELD(&target, ferro_engine_target, threads) ? target.threads : 0;
        const unsigned threads = said > 0 ? said : std::max(1u, std::thread::hardware_concurrency());
        out->self = new Module{static_cast<int>(threads)};
        out->iface = &module_iface;
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    static const plugin::OneFamilyPlugin desc(
        "fft", "0.1.0", "fft family: FFTW module for the cpu engine",
        "discrete Fourier transforms: fft, ifft, rfft, irfft, hfft, ihfft in 1, 2 and N dimensions (numpy.fft and scipy.fft "
        "semantics)",
        static_cast<uint32_t>(Op::count), schemas(), create_module, kVersion, rule_calls());
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::fft

FERRO_PLUGIN_EXPORT(ferro::fft::query)
