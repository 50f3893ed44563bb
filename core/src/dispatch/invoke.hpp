// Calling a plan's executor: what eager calls (execute.cpp) and program runs (capture/) share.
#pragma once

#include "dispatch/attrs.hpp"
#include "dispatch/plan_cache.hpp"
#include "dispatch/plugin_call.hpp"
#include "dispatch/session.hpp"
#include "registry/engine.hpp"

#include <fmt/format.h>

namespace ferro::host {

// The executor's view of a plan's workspace: `bytes` of `workspace`, or none when it is null.
inline ferro_buffer_view workspace_view(const Storage* workspace, uint64_t bytes) {
    if (workspace == nullptr) return {sizeof(ferro_buffer_view), 0, nullptr, 0, 0, nullptr};
    return {sizeof(ferro_buffer_view), 0, workspace->buffer(), 0, bytes, workspace->address()};
}

// The executor's arguments over `views`: the inputs, then the outputs, the plan's residuals
// (`n_residuals`) last among them.
inline ferro_exec_args exec_args(const CachedPlan& plan, const AttrValues& attrs, ferro_tensor_view* views, size_t n_in,
                                 size_t n_out, size_t n_residuals, ferro_buffer_view workspace, ferro_session_impl* session) {
    ferro_exec_args args{sizeof args,
                         static_cast<uint32_t>(n_in),
                         static_cast<uint32_t>(n_out),
                         0,
                         attrs.data(),
                         views,
                         views + n_in,
                         workspace,
                         session,
                         0,
                         0,
                         nullptr};
    // Since 1.10 residuals have a field of their own; 1.8 and 1.9 modules find them after the
    // outputs, counted in n_outputs, as those minors said.
    if (n_residuals > 0 && plan.module()->abi_minor() >= 10) {
        args.n_outputs = static_cast<uint32_t>(n_out - n_residuals);
        args.n_residuals = static_cast<uint32_t>(n_residuals);
        args.residuals = views + n_in + args.n_outputs;
    }
    return args;
}

// Runs the plan's executor (its session or its context entry point) in `session`; a failure
// is thrown as an Error naming `op`.
[[gnu::always_inline]] inline void invoke_executor(const CachedPlan& plan, const std::string& op, const Engine& engine,
                                                   const ferro_host_api* host, ferro_session_impl* session,
                                                   const ferro_exec_args& args) {
    ferro_status st;
    if (plan.iface().execute_in_session != nullptr) {
        st = call_plugin(op, "execute", [&] { return plan.iface().execute_in_session(plan.self(), host, &args); });
    } else {
        const void* context = nullptr;
        if (engine.iface().native_context == nullptr) {
            throw Error(FERRO_UNIMPLEMENTED,
                        fmt::format("{}: engine '{}' offers no native context for a context executor", op, engine.name()));
        }
        throw_if_error(engine.iface().native_context(engine.self(), session->engine_session, &context));
        st = call_plugin(op, "execute", [&] { return plan.iface().execute_in_context(plan.self(), host, &args, context); });
    }
    if (st != nullptr) rethrow(st, op, "execute", host);
}

}  // namespace ferro::host
