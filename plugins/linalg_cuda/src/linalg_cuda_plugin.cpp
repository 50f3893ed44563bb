// libferro_linalg_cuda.so: a module of the linalg family (defined by libferro_linalg.so) for
// cuda engines, on cuSOLVER and cuBLAS. It runs solve, inv, det, slogdet, cholesky, qr, eigh,
// eigvalsh, svd, svdvals, triangular_solve, lu_factor, lu, lu_solve and solve_with_lu with the cpu module's
// semantics and messages; the family's other ops are declined with the reason (never run on
// the cpu behind the caller's back). Gradients are the family's own rules, which run through
// the host on whatever engine the tensors are on.
#include "plan.hpp"
#include "solver.hpp"

#include <ferro/cuda_context.h>
#include <ferro/family_binding.hpp>
#include <ferro/plugin.hpp>
#include <ferro/schema.hpp>

#include <cstring>
#include <memory>
#include <optional>
#include <string>

namespace ferro::linalg::cuda {
namespace {

ferro_status execute_in_session(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] { execute(*static_cast<const CudaPlan*>(self), host, *args); });
}

void destroy_plan(void* self) { delete static_cast<CudaPlan*>(self); }

constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, execute_in_session, nullptr, destroy_plan};

// The module: the linalg family's ops bound by name, and cuBLAS and cuSOLVER's functions.
struct Module {
    plugin::FamilyBinding<Op> family;
    const ferro::cuda::CudaLibraries* lib = nullptr;
};

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        const Module& m = *static_cast<const Module*>(self);
        const std::optional<Op> op = m.family.op(args->op_index);
        if (!op || !supported(*op)) {
            plugin::write_reason(args->decline_reason, args->decline_capacity,
                                 "the cuSOLVER module does not implement " + m.family.qualified(args->op_index) +
                                     " (it runs solve, inv, det, slogdet, cholesky, qr, eigh, eigvalsh, svd, svdvals, "
                                     "triangular_solve, lu_factor, lu, lu_solve and solve_with_lu); move the tensors to "
                                     "the cpu for it");
            return;
        }
        auto plan = std::make_unique<CudaPlan>(make_cuda_plan(*op, *args));
        plan->lib = m.lib;
        out->workspace_bytes = plan->workspace_bytes;
        out->retained_bytes = sizeof(CudaPlan);
        out->iface = &plan_iface;
        out->self = plan.release();
    });
}

void destroy_module(void* self) { delete static_cast<Module*>(self); }

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, nullptr};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        const std::string why = plugin::context_decline(host, args->target, "the cuSOLVER module", FERRO_CUDA_CONTEXT_ABI, "cuda",
                                                        5, "session_native_context");
        auto m = std::make_unique<Module>();
        std::string missing = why;
        if (missing.empty()) missing = m->family.bind(args, kId, kMajor, static_cast<uint32_t>(Op::count), op_name);
        if (missing.empty()) m->lib = ferro::cuda::cuda_libraries(missing);
        if (!missing.empty()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity,
                                 why.empty() ? "the cuSOLVER module: " + missing : why);
            return;
        }
        out->self = m.release();
        out->iface = &module_iface;
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    static const plugin::ModuleProviderPlugin desc("linalg_cuda", "0.1.0", "linalg family: cuSOLVER module for cuda engines",
                                                   "linalg", "cuSOLVER module for cuda engines", create_module);
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::linalg::cuda

FERRO_PLUGIN_EXPORT(ferro::linalg::cuda::query)
