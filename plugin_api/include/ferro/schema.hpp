// ferro plugin ABI — header-only helpers for writing op schemas: attribute specs with their
// defaults. The strings passed in must live as long as the plugin library (literals do).
//
// Since: 1.0 (header-only; no ABI change). accepts_cpu_context: 2026-11-30.
#pragma once

#include "ferro/cpu_context.h"
#include "ferro/family.h"
#include "ferro/plugin.h"
#include "ferro/plugin.hpp"

#include <cstring>
#include <span>
#include <string>

namespace ferro::plugin {

inline ferro_attr_spec spec_i64(const char* name, int64_t def, const char* doc) {
    ferro_attr_spec s{sizeof s, FERRO_ATTR_I64, 0, 0, name, {}, doc};
    s.default_value.type = FERRO_ATTR_I64;
    s.default_value.v.i64 = def;
    return s;
}
inline ferro_attr_spec spec_f64(const char* name, double def, const char* doc) {
    ferro_attr_spec s{sizeof s, FERRO_ATTR_F64, 0, 0, name, {}, doc};
    s.default_value.type = FERRO_ATTR_F64;
    s.default_value.v.f64 = def;
    return s;
}
inline ferro_attr_spec spec_bool(const char* name, bool def, const char* doc) {
    ferro_attr_spec s{sizeof s, FERRO_ATTR_BOOL, 0, 0, name, {}, doc};
    s.default_value.type = FERRO_ATTR_BOOL;
    s.default_value.v.boolean = def ? 1 : 0;
    return s;
}
// def NULL: the attribute is optional and defaults to None.
inline ferro_attr_spec spec_str(const char* name, const char* def, const char* doc) {
    ferro_attr_spec s{sizeof s, FERRO_ATTR_STR, def ? 0u : FERRO_ATTR_FLAG_OPTIONAL, 0, name, {}, doc};
    s.default_value.type = def ? FERRO_ATTR_STR : FERRO_ATTR_NONE;
    s.default_value.v.str = def;
    return s;
}
// A call must give it.
inline ferro_attr_spec spec_required(const char* name, uint32_t type, const char* doc) {
    return {sizeof(ferro_attr_spec), type, FERRO_ATTR_FLAG_REQUIRED, 0, name, {}, doc};
}
// None by default.
inline ferro_attr_spec spec_optional(const char* name, uint32_t type, const char* doc) {
    return {sizeof(ferro_attr_spec), type, FERRO_ATTR_FLAG_OPTIONAL, 0, name, {}, doc};
}

// An op schema with its name (unqualified: "softplus"), one-line doc, arity (n_inputs may be
// FERRO_VARIADIC) and infer; set attributes, dtypes, differentiability masks and rules on the
// result by name.
inline ferro_op_schema op_schema(const char* name, const char* doc, int32_t n_inputs, int32_t n_outputs,
                                 ferro_status (*infer)(const ferro_host_api*, ferro_infer_args*)) {
    ferro_op_schema s{};
    s.struct_size = sizeof s;
    s.name = name;
    s.doc = doc;
    s.n_inputs = n_inputs;
    s.min_inputs = n_inputs >= 0 ? n_inputs : 0;
    s.n_outputs = n_outputs;
    s.infer = infer;
    return s;
}

// For module factories of host-memory modules (LAPACK, FFTW): true when the target engine
// offers the cpu engine's native context; otherwise writes why `module` declines it and
// returns false.
inline bool accepts_cpu_context(const ferro_module_create_args* args, const char* module) {
    const ferro_engine_target* target = args->target;
    if (target->context_abi != nullptr && std::strcmp(target->context_abi, FERRO_CPU_CONTEXT_ABI) == 0) return true;
    std::string reason = module;
    reason += " runs on host memory with the cpu engine's context (" FERRO_CPU_CONTEXT_ABI "); engine ";
    reason += target->name;
    reason += " has ";
    reason += target->context_abi != nullptr ? target->context_abi : "none";
    write_reason(args->decline_reason, args->decline_capacity, reason);
    return false;
}

// A plugin descriptor of this build's ABI with its name, version and description; the caller
// adds what the plugin provides.
inline ferro_plugin_desc plugin_desc(const char* name, const char* version, const char* description) {
    ferro_plugin_desc d{};
    d.struct_size = sizeof d;
    d.abi_major = FERRO_ABI_MAJOR;
    d.abi_minor = FERRO_ABI_MINOR;
    d.name = name;
    d.version = version;
    d.description = description;
    return d;
}

// The descriptor of a plugin that defines one family named like itself (linalg, einsum, fft):
// keep it in a function-local static and return get() from the plugin's query. The family's
// version is the plugin's unless `family_version` (its contract's, which module providers of
// other plugins check) is given. `rule_calls`: the ops other than core ops that the family's
// rules call (ABI 1.12's FERRO_EXT_RULE_CALLS; borrowed, keep it static).
class OneFamilyPlugin {
public:
    OneFamilyPlugin(const char* name, const char* version, const char* plugin_description, const char* family_description,
                    uint32_t n_ops, const ferro_op_schema* ops, ferro_create_module_fn create_module,
                    const char* family_version = nullptr, std::span<const char* const> rule_calls = {}) {
        family_.struct_size = sizeof family_;
        family_.n_ops = n_ops;
        family_.id = name;
        family_.version = family_version != nullptr ? family_version : version;
        family_.description = family_description;
        family_.ops = ops;
        family_.create_module = create_module;
        plugin_ = plugin_desc(name, version, plugin_description);
        plugin_.n_families = 1;
        plugin_.families = &family_;
        if (!rule_calls.empty()) {
            rule_calls_.base = {sizeof rule_calls_, FERRO_EXT_RULE_CALLS, nullptr};
            rule_calls_.family_id = name;
            rule_calls_.n_ops = static_cast<uint32_t>(rule_calls.size());
            rule_calls_.ops = rule_calls.data();
            plugin_.extensions = &rule_calls_.base;
        }
    }
    OneFamilyPlugin(const OneFamilyPlugin&) = delete;
    OneFamilyPlugin& operator=(const OneFamilyPlugin&) = delete;
    const ferro_plugin_desc* get() const { return &plugin_; }

private:
    ferro_family_desc family_{};
    ferro_rule_calls_ext rule_calls_{};
    ferro_plugin_desc plugin_{};
};

// The descriptor of a plugin that adds one module provider to a family another plugin defines
// (fft_vulkan, fft_cuda, linalg_cuda): keep it in a function-local static and return get().
class ModuleProviderPlugin {
public:
    ModuleProviderPlugin(const char* name, const char* version, const char* plugin_description, const char* family,
                         const char* provider_description, ferro_create_module_fn create_module) {
        provider_.struct_size = sizeof provider_;
        provider_.family_id = family;
        provider_.description = provider_description;
        provider_.create_module = create_module;
        plugin_ = plugin_desc(name, version, plugin_description);
        plugin_.n_module_providers = 1;
        plugin_.module_providers = &provider_;
    }
    ModuleProviderPlugin(const ModuleProviderPlugin&) = delete;
    ModuleProviderPlugin& operator=(const ModuleProviderPlugin&) = delete;
    const ferro_plugin_desc* get() const { return &plugin_; }

private:
    ferro_module_provider_desc provider_{};
    ferro_plugin_desc plugin_{};
};

// Why a module for engines with native context `context_abi` (needing host ABI 1.`minor`)
// cannot serve `target`, or "" when it can. `module` names it: "the cuFFT module".
inline std::string context_decline(const ferro_host_api* host, const ferro_engine_target* target, const char* module,
                                   const char* context_abi, const char* kind, uint32_t minor, const char* needs) {
    if (target->context_abi == nullptr || std::strcmp(target->context_abi, context_abi) != 0) {
        return std::string(module) + " runs on " + kind + " engines (" + context_abi + "); engine " + target->name + " has " +
               (target->context_abi != nullptr ? target->context_abi : "no native context");
    }
    if (host->abi_minor < minor) {
        return std::string(module) + " needs host ABI 1." + std::to_string(minor) + " (" + needs + "); the host has 1." +
               std::to_string(host->abi_minor);
    }
    return {};
}

}  // namespace ferro::plugin
