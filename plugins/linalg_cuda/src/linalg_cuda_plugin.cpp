// libferro_linalg_cuda.so: a module of the linalg family (defined by libferro_linalg.so) for
// cuda engines, on cuSOLVER and cuBLAS. It runs solve, inv, det, slogdet, cholesky, qr, eigh,
// eigvalsh, svd, svdvals, triangular_solve, lu_factor, lu, lu_solve and solve_with_lu with the cpu module's
// semantics and messages; the family's other ops are declined with the reason (never run on
// the cpu behind the caller's back). Gradients are the family's own rules, which run through
// the host on whatever engine the tensors are on.
#include "plan.hpp"
#include "solver.hpp"

#include <ferro/cuda_context.h>
#include <ferro/plugin.hpp>
#include <ferro/schema.hpp>

#include <cstring>
#include <memory>
#include <string>

namespace ferro::linalg::cuda {
namespace {

ferro_status execute_in_session(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] { execute(*static_cast<const CudaPlan*>(self), host, *args); });
}

void destroy_plan(void* self) { delete static_cast<CudaPlan*>(self); }

constexpr ferro_plan_iface plan_iface{sizeof(ferro_plan_iface), 0, execute_in_session, nullptr, destroy_plan};

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        if (args->op_index >= static_cast<uint32_t>(Op::count)) {
            throw plugin::Error(FERRO_INTERNAL, "linalg (cuda): prepare for an unknown op index " + std::to_string(args->op_index));
        }
        const auto op = static_cast<Op>(args->op_index);
        if (!supported(op)) {
            plugin::write_reason(args->decline_reason, args->decline_capacity,
                                 "the cuSOLVER module does not implement " + op_label(op) +
                                     " (it runs solve, inv, det, slogdet, cholesky, qr, eigh, eigvalsh, svd, svdvals, "
                                     "triangular_solve, lu_factor, lu, lu_solve and solve_with_lu); move the tensors to "
                                     "the cpu for it");
            return;
        }
        auto plan = std::make_unique<CudaPlan>(make_cuda_plan(op, *args));
        plan->lib = static_cast<const ferro::cuda::CudaLibraries*>(self);
        out->workspace_bytes = plan->workspace_bytes;
        out->retained_bytes = sizeof(CudaPlan);
        out->iface = &plan_iface;
        out->self = plan.release();
    });
}

void destroy_module(void*) {}

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, nullptr};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        const std::string why = plugin::context_decline(host, args->target, "the cuSOLVER module", FERRO_CUDA_CONTEXT_ABI, "cuda", 5,
                                                        "session_native_context");
        std::string missing;
        const ferro::cuda::CudaLibraries* lib = why.empty() ? ferro::cuda::cuda_libraries(missing) : nullptr;
        if (!why.empty() || lib == nullptr) {
            plugin::write_reason(args->decline_reason, args->decline_capacity, why.empty() ? "the cuSOLVER module: " + missing : why);
            return;
        }
        out->self = const_cast<ferro::cuda::CudaLibraries*>(lib);  // the module's state: the functions, shared by its plans
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
