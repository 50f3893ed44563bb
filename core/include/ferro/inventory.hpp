// ferro — what a runtime holds, for the C++ API: plugins, engines (and why an engine kind has
// no device), ops, load diagnostics and the plugin search path, all from one snapshot.
// Included by ferro.hpp; Runtime::inventory() returns it.
#pragma once

#include <ferro/ferro.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ferro {

// What the runtime has: plugins, engines, ops, diagnostics, search path (one snapshot).
struct PluginInfo {
    std::string name, version, description, path;
    uint32_t abi_major, abi_minor;
    bool builtin;
    std::vector<std::string> module_families;  // families it adds modules to without defining them
};
struct EngineInfo {
    std::string name, kind, plugin, device;
    uint64_t memory_bytes;
    int32_t score = 0;
    uint32_t flags = 0;         // FERRO_ENGINE_*
    std::vector<DType> dtypes;  // what its kernels support
    std::string details;        // driver, compute capability, threads, ...
};
struct EngineKindInfo {
    std::string plugin, kind, reason;
    uint32_t device_count;
};
struct OpAttrInfo {
    std::string name, doc;
    uint32_t type = 0, flags = 0;  // FERRO_ATTR_*, FERRO_ATTR_FLAG_*
    std::string default_text;      // the default as text: "-1", "\"backward\"", "[-2, -1]", "None"; "" when required
};
// Output `output` shares the storage of input `input` (always, or only when the input's layout
// allows: may_copy).
struct OpViewInfo {
    uint32_t output, input;
    bool may_copy;
};
struct OpInfo {
    std::string name, family, doc;
    int32_t n_inputs, n_outputs;
    bool has_vjp, has_jvp;
    int32_t min_inputs = 0;
    uint64_t diff_inputs = 0, diff_outputs = 0;  // bit i: input (output) i is differentiable
    std::vector<DType> dtypes;
    std::vector<OpAttrInfo> attrs;
    std::vector<OpViewInfo> views;
};
struct FamilyInfo {
    std::string id, version, description, plugin;
    uint32_t n_ops;
};
// A family's module on one engine, or why there is none.
struct ModuleInfo {
    std::string family, engine, plugin, reason;
    bool available;
};
struct DiagnosticInfo {
    std::string file, stage, message;
    uint32_t code;
};
struct SearchDirInfo {
    std::string path, origin;
    bool exists;
};
struct Inventory {
    uint64_t epoch = 0;
    std::vector<PluginInfo> plugins;
    std::vector<EngineInfo> engines;
    std::vector<EngineKindInfo> engine_kinds;
    std::vector<OpInfo> ops;
    std::vector<FamilyInfo> families;
    std::vector<ModuleInfo> modules;
    std::vector<DiagnosticInfo> diagnostics;
    std::vector<SearchDirInfo> search_path;
};

namespace detail {
// An attribute's default, written as a call would give it.
inline std::string attr_text(const ferro_op_attr_info& a) {
    const ferro_attr_value& v = a.default_value;
    if ((a.flags & FERRO_ATTR_FLAG_REQUIRED) != 0) return "";
    switch (v.type) {
        case FERRO_ATTR_I64: return std::to_string(v.v.i64);
        case FERRO_ATTR_F64: {
            std::string t = std::to_string(v.v.f64);
            while (t.size() > 1 && t.back() == '0' && t[t.size() - 2] != '.') t.pop_back();
            return t;
        }
        case FERRO_ATTR_BOOL: return v.v.boolean ? "true" : "false";
        case FERRO_ATTR_STR: return std::string("\"") + (v.v.str != nullptr ? v.v.str : "") + "\"";
        case FERRO_ATTR_I64_ARRAY: {
            std::string t = "[";
            for (uint32_t i = 0; i < v.count; ++i) t += (i ? ", " : "") + std::to_string(v.v.i64_array[i]);
            return t + "]";
        }
        case FERRO_ATTR_F64_ARRAY: {
            std::string t = "[";
            for (uint32_t i = 0; i < v.count; ++i) t += (i ? ", " : "") + std::to_string(v.v.f64_array[i]);
            return t + "]";
        }
        default: return "None";
    }
}
}  // namespace detail

inline Inventory Runtime::inventory() const {
    ferro_inventory* raw = nullptr;
    check(ferro_runtime_inventory(rt_.get(), &raw));
    std::unique_ptr<ferro_inventory, void (*)(ferro_inventory*)> inv(raw, ferro_inventory_destroy);
    Inventory out;
    out.epoch = ferro_inventory_epoch(raw);
    for (uint32_t i = 0; i < ferro_inventory_plugin_count(raw); ++i) {
        ferro_plugin_info p{};
        p.struct_size = sizeof p;
        check(ferro_inventory_plugin(raw, i, &p));
        PluginInfo info{p.name, p.version, p.description, p.path, p.abi_major, p.abi_minor, p.builtin != 0, {}};
        for (std::string_view rest = p.module_families; !rest.empty();) {
            const size_t comma = rest.find(',');
            info.module_families.emplace_back(rest.substr(0, comma));
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
        out.plugins.push_back(std::move(info));
    }
    for (uint32_t i = 0; i < ferro_inventory_engine_count(raw); ++i) {
        ferro_engine_info e{};
        e.struct_size = sizeof e;
        check(ferro_inventory_engine(raw, i, &e));
        ferro_engine_detail_info d{};
        d.struct_size = sizeof d;
        check(ferro_inventory_engine_detail(raw, i, &d));
        EngineInfo info{e.name, e.kind, e.plugin, e.device, e.memory_bytes, e.score, e.flags, {}, d.details};
        for (uint32_t k = 0; k < d.n_dtypes; ++k) info.dtypes.push_back(static_cast<DType>(d.dtypes[k]));
        out.engines.push_back(std::move(info));
    }
    for (uint32_t i = 0; i < ferro_inventory_engine_kind_count(raw); ++i) {
        ferro_engine_kind_info k{};
        k.struct_size = sizeof k;
        check(ferro_inventory_engine_kind(raw, i, &k));
        out.engine_kinds.push_back({k.plugin, k.kind, k.reason, k.device_count});
    }
    for (uint32_t i = 0; i < ferro_inventory_op_count(raw); ++i) {
        ferro_op_info o{};
        o.struct_size = sizeof o;
        check(ferro_inventory_op(raw, i, &o));
        ferro_op_detail_info d{};
        d.struct_size = sizeof d;
        check(ferro_inventory_op_detail(raw, i, &d));
        OpInfo op{o.name,        o.family,       o.doc, o.n_inputs, o.n_outputs, o.has_vjp != 0, o.has_jvp != 0, d.min_inputs,
                  d.diff_inputs, d.diff_outputs, {},    {},         {}};
        for (uint32_t k = 0; k < d.n_dtypes; ++k) op.dtypes.push_back(static_cast<DType>(d.dtypes[k]));
        for (uint32_t k = 0; k < d.n_views; ++k) {
            const ferro_op_view& v = d.views[k];
            op.views.push_back({v.output, v.input, (v.flags & FERRO_OP_VIEW_MAY_COPY) != 0});
        }
        for (uint32_t k = 0; k < o.n_attrs; ++k) {
            ferro_op_attr_info a{};
            a.struct_size = sizeof a;
            check(ferro_inventory_op_attr(raw, i, k, &a));
            op.attrs.push_back({a.name, a.doc, a.type, a.flags, detail::attr_text(a)});
        }
        out.ops.push_back(std::move(op));
    }
    for (uint32_t i = 0; i < ferro_inventory_family_count(raw); ++i) {
        ferro_family_info f{};
        f.struct_size = sizeof f;
        check(ferro_inventory_family(raw, i, &f));
        out.families.push_back({f.id, f.version, f.description, f.plugin, f.n_ops});
    }
    for (uint32_t i = 0; i < ferro_inventory_module_count(raw); ++i) {
        ferro_module_info m{};
        m.struct_size = sizeof m;
        check(ferro_inventory_module(raw, i, &m));
        out.modules.push_back({m.family, m.engine, m.plugin, m.reason, m.available != 0});
    }
    for (uint32_t i = 0; i < ferro_inventory_diagnostic_count(raw); ++i) {
        ferro_diagnostic_info d{};
        d.struct_size = sizeof d;
        check(ferro_inventory_diagnostic(raw, i, &d));
        out.diagnostics.push_back({d.file, d.stage, d.message, d.code});
    }
    for (uint32_t i = 0; i < ferro_inventory_search_dir_count(raw); ++i) {
        ferro_search_dir_info s{};
        s.struct_size = sizeof s;
        check(ferro_inventory_search_dir(raw, i, &s));
        out.search_path.push_back({s.path, s.origin, s.exists != 0});
    }
    return out;
}

}  // namespace ferro
