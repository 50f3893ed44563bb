// ferro — what a runtime holds, for the C++ API: plugins, engines (and why an engine kind has
// no device), ops, load diagnostics and the plugin search path, all from one snapshot.
// Included by ferro.hpp; Runtime::inventory() returns it.
#pragma once

#include <ferro/ferro.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ferro {

// What the runtime has: plugins, engines, ops, diagnostics, search path (one snapshot).
struct PluginInfo { std::string name, version, description, path; uint32_t abi_major, abi_minor; bool builtin; };
struct EngineInfo { std::string name, kind, plugin, device; uint64_t memory_bytes; };
struct EngineKindInfo { std::string plugin, kind, reason; uint32_t device_count; };
struct OpInfo { std::string name, family, doc; int32_t n_inputs, n_outputs; bool has_vjp, has_jvp; };
struct DiagnosticInfo { std::string file, stage, message; uint32_t code; };
struct SearchDirInfo { std::string path, origin; bool exists; };
struct Inventory {
    uint64_t epoch = 0;
    std::vector<PluginInfo> plugins;
    std::vector<EngineInfo> engines;
    std::vector<EngineKindInfo> engine_kinds;
    std::vector<OpInfo> ops;
    std::vector<DiagnosticInfo> diagnostics;
    std::vector<SearchDirInfo> search_path;
};

inline Inventory Runtime::inventory() const {
    ferro_inventory* raw = nullptr;
    check(ferro_runtime_inventory(rt_.get(), &raw));
    std::unique_ptr<ferro_inventory, void (*)(ferro_inventory*)> inv(raw, ferro_inventory_destroy);
    Inventory out;
    out.epoch = ferro_inventory_epoch(raw);
    for (uint32_t i = 0; i < ferro_inventory_plugin_count(raw); ++i) {
        ferro_plugin_info p{};
        check(ferro_inventory_plugin(raw, i, &p));
        out.plugins.push_back({p.name, p.version, p.description, p.path, p.abi_major, p.abi_minor, p.builtin != 0});
    }
    for (uint32_t i = 0; i < ferro_inventory_engine_count(raw); ++i) {
        ferro_engine_info e{};
        check(ferro_inventory_engine(raw, i, &e));
        out.engines.push_back({e.name, e.kind, e.plugin, e.device, e.memory_bytes});
    }
    for (uint32_t i = 0; i < ferro_inventory_engine_kind_count(raw); ++i) {
        ferro_engine_kind_info k{};
        check(ferro_inventory_engine_kind(raw, i, &k));
        out.engine_kinds.push_back({k.plugin, k.kind, k.reason, k.device_count});
    }
    for (uint32_t i = 0; i < ferro_inventory_op_count(raw); ++i) {
        ferro_op_info o{};
        check(ferro_inventory_op(raw, i, &o));
        out.ops.push_back({o.name, o.family, o.doc, o.n_inputs, o.n_outputs, o.has_vjp != 0, o.has_jvp != 0});
    }
    for (uint32_t i = 0; i < ferro_inventory_diagnostic_count(raw); ++i) {
        ferro_diagnostic_info d{};
        check(ferro_inventory_diagnostic(raw, i, &d));
        out.diagnostics.push_back({d.file, d.stage, d.message, d.code});
    }
    for (uint32_t i = 0; i < ferro_inventory_search_dir_count(raw); ++i) {
        ferro_search_dir_info s{};
        check(ferro_inventory_search_dir(raw, i, &s));
        out.search_path.push_back({s.path, s.origin, s.exists != 0});
    }
    return out;
}

}  // namespace ferro
