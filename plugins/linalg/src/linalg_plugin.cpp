// libferro_linalg.so: the linalg family (numpy.linalg / torch.linalg semantics) and its cpu
// module on LAPACK. Other engines get no module from this file: their prepare would need
// their own solver library (cuSOLVER comes as libferro_linalg_cuda.so).
#include "linalg.hpp"
#include "rules.hpp"

#include <ferro/cpu_context.h>
#include <ferro/schema.hpp>

#include <cstring>
#include <memory>
#include <string>

namespace ferro::linalg {
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

void destroy_plan(void* self) { delete static_cast<Plan*>(self); }

constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, execute_in_session, nullptr, destroy_plan};

ferro_status prepare(void*, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        if (args->op_index >= static_cast<uint32_t>(Op::count)) {
            throw plugin::Error(FERRO_INTERNAL, "linalg: prepare for an unknown op index " + std::to_string(args->op_index));
        }
        auto plan = std::make_unique<Plan>(make_plan(static_cast<Op>(args->op_index), *args));
        out->workspace_bytes = static_cast<uint64_t>(plan->scratch_bytes);
        out->retained_bytes = sizeof(Plan);
        out->iface = &plan_iface;
        out->self = plan.release();
    });
}

void destroy_module(void*) {}

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, examples};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        if (!plugin::accepts_cpu_context(args, "the LAPACK module")) return;
        out->iface = &module_iface;
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    static const plugin::OneFamilyPlugin desc(
        "linalg", "0.1.0", "linalg family: LAPACK (OpenBLAS) module for the cpu engine",
        "dense linear algebra: solve, inverse, determinants, Cholesky, QR, eigh, SVD (numpy.linalg semantics)",
        static_cast<uint32_t>(Op::count), schemas(), create_module, kVersion, kRuleCalls);
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::linalg

FERRO_PLUGIN_EXPORT(ferro::linalg::query)
