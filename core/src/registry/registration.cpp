#include "registry/registration.hpp"

#include "loader/descriptor_check.hpp"
#include "loader/load_error.hpp"
#include "loader/plugin_loader.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ferro::host {
namespace {

// Runs plugin code; an exception escaping it (an ABI violation) becomes a LoadError at `stage`.
template <class Fn> auto call_plugin(LoadStage stage, const std::string& what, Fn&& fn) {
    try {
        return fn();
    } catch (const LoadError&) {
        throw;
    } catch (...) {
        throw LoadError(stage, FERRO_INTERNAL, escaped_exception_message(what));
    }
}

std::string engine_name(const std::string& kind, uint32_t ordinal) {
    return kind == "cpu" ? kind : fmt::format("{}:{}", kind, ordinal);
}

const PluginRecord* owner_of_engine_kind(const Snapshot& s, const std::string& kind) {
    for (const auto& p : s.plugins) {
        for (const auto& e : p.engine_kinds) {
            if (e.kind == kind) return &p;
        }
    }
    return nullptr;
}

// Two files provide the same thing: the one loaded first keeps it (DESIGN §10's search order).
[[noreturn]] void conflict(const std::string& what, const PluginRecord* first) {
    throw LoadError(LoadStage::register_, FERRO_ALREADY_EXISTS,
                    fmt::format("{} is already provided by plugin '{}' ({}), loaded first; this file is not "
                                "registered (the first file on the search path wins: runtime option paths, then "
                                "FERRO_PLUGIN_PATH, then the directory next to libferro, files by name within a "
                                "directory)",
                                what, first->name, first->builtin ? "built in" : first->path));
}

void check_no_conflicts(const Snapshot& draft, const ferro_plugin_desc& desc) {
    if (const auto* other = draft.find_plugin(desc.name)) conflict(fmt::format("plugin name '{}'", desc.name), other);
    for (uint32_t i = 0; i < desc.n_families; ++i) {
        auto it = draft.families.find(desc.families[i].id);
        if (it != draft.families.end()) {
            conflict(fmt::format("family '{}'", desc.families[i].id), draft.find_plugin(it->second.plugin));
        }
    }
    for (uint32_t i = 0; i < desc.n_engines; ++i) {
        if (const auto* other = owner_of_engine_kind(draft, desc.engines[i].kind)) {
            conflict(fmt::format("engine kind '{}'", desc.engines[i].kind), other);
        }
    }
}

// Probes one engine kind and creates an engine per device. A device that cannot be created is
// recorded (and logged) but does not fail the plugin; a failing probe does.
EngineAvailability add_engines(Snapshot& draft, PluginRecord& record, const ferro_engine_desc& desc, const LibraryPtr& library,
                               const RegistrationContext& ctx) {
    EngineAvailability availability{desc.kind, 0, {}};
    ferro_probe_result probe{};
    probe.struct_size = sizeof probe;
    const std::string what = fmt::format("engine '{}': probe", desc.kind);
    log_stage(ctx.logger, LoadStage::probe, record.path);
    if (ferro_status st = call_plugin(LoadStage::probe, what, [&] { return desc.probe(ctx.host, &probe); })) {
        throw_load_error(LoadStage::probe, st, what);
    }
    probe.reason[sizeof probe.reason - 1] = '\0';
    availability.reason = probe.reason;
    for (uint32_t ordinal = 0; ordinal < probe.device_count; ++ordinal) {
        const std::string name = engine_name(desc.kind, ordinal);
        try {
            ferro_engine_instance inst{};
            inst.struct_size = sizeof inst;
            const std::string create = fmt::format("engine '{}': create", name);
            log_stage(ctx.logger, LoadStage::create, record.path);
            if (ferro_status st = call_plugin(LoadStage::create, create, [&] { return desc.create(ctx.host, ordinal, &inst); })) {
                throw_load_error(LoadStage::create, st, create);
            }
            auto engine = call_plugin(LoadStage::create, create, [&] {
                return std::make_shared<Engine>(name, desc, ordinal, inst, library, ctx.runtime_id);
            });
            draft.engines[name] = std::move(engine);
            record.engines.push_back(name);
            ++availability.device_count;
        } catch (const LoadError& e) {
            availability.reason += (availability.reason.empty() ? "" : "; ") + std::string(e.what());
            ctx.logger.logf(FERRO_LOG_WARN, "loader", "{}: engine '{}' unavailable: {}", record.name, name, e.what());
        }
    }
    return availability;
}

void add_families(Snapshot& draft, PluginRecord& record, const ferro_plugin_desc& desc, const LibraryPtr& library,
                  const RegistrationContext& ctx) {
    for (uint32_t i = 0; i < desc.n_families; ++i) {
        const ferro_family_desc& f = desc.families[i];
        const std::span<const char* const> rule_calls = family_rule_calls(desc, f.id);
        const std::span<const ferro_op> rule_ops = rule_calls.empty() ? std::span<const ferro_op>{} : ctx.rule_ops(rule_calls);
        FamilySlot slot{f.id, f.version, f.description ? f.description : "", record.name, &f, library, {}, rule_calls};
        draft.families.emplace(f.id, std::move(slot));
        for (uint32_t k = 0; k < f.n_ops; ++k) {
            const std::string qualified = fmt::format("{}.{}", f.id, f.ops[k].name);
            OpEntry entry{qualified, f.id, k, &f.ops[k], {}, nullptr, rule_ops};
            for (const ferro_op_view& v : family_views(desc, f.id)) {
                if (v.op == k) entry.views.push_back(v);
            }
            draft.ops.emplace(qualified, std::move(entry));
        }
        if (f.create_module != nullptr) {
            draft.module_sources.push_back({f.id, record.name, f.create_module, library, desc.abi_minor});
        }
        record.families.push_back(f.id);
    }
    for (uint32_t i = 0; i < desc.n_module_providers; ++i) {
        const auto& m = desc.module_providers[i];
        draft.module_sources.push_back({m.family_id, record.name, m.create_module, library, desc.abi_minor});
        record.module_families.push_back(m.family_id);
        record.module_families_text += (record.module_families_text.empty() ? "" : ",") + std::string(m.family_id);
    }
}

ModuleSlot create_module(const ModuleSource& source, const FamilySlot& family, const Engine& engine,
                         const RegistrationContext& ctx) {
    ModuleSlot slot{source.plugin, nullptr, {}};
    char reason[512] = {};
    ferro_module_create_args args{sizeof args, sizeof reason, &engine.target(), reason, family.desc};
    ferro_module_instance inst{};
    inst.struct_size = sizeof inst;
    const std::string what =
        fmt::format("{}: create_module for family '{}' on engine '{}'", source.plugin, source.family_id, engine.name());
    try {
        if (ferro_status st = call_plugin(LoadStage::register_, what, [&] { return source.create(ctx.host, &args, &inst); })) {
            throw_load_error(LoadStage::register_, st, what);
        }
        if (inst.iface == nullptr) {
            slot.decline_reason = reason[0] != '\0' ? reason : "declined (no reason given)";
            ctx.logger.logf(FERRO_LOG_DEBUG, "registry", "{}: declined: {}", what, slot.decline_reason);
            return slot;
        }
        if (inst.iface->struct_size < FERRO_STRUCT_SIZE_UP_TO(ferro_module_iface, destroy) || inst.iface->prepare == nullptr ||
            inst.iface->destroy == nullptr) {
            throw LoadError(LoadStage::register_, FERRO_INVALID_ARGUMENT,
                            what + " returned a module table with a NULL or truncated entry");
        }
        slot.module = std::make_shared<Module>(inst, source.library, source.plugin, source.abi_minor);
    } catch (const LoadError& e) {
        slot.decline_reason = e.what();
        ctx.logger.logf(FERRO_LOG_WARN, "registry", "{}", e.what());
    }
    return slot;
}

}  // namespace

void register_plugin(Snapshot& draft, const LoadedPlugin& plugin, const std::string& path, const RegistrationContext& ctx) {
    const ferro_plugin_desc& desc = *plugin.desc;
    check_no_conflicts(draft, desc);
    PluginRecord record;
    record.name = desc.name;
    record.version = desc.version;
    record.description = desc.description ? desc.description : "";
    record.path = path;
    record.abi_major = desc.abi_major;
    record.abi_minor = desc.abi_minor;
    record.builtin = path.empty();
    record.library = plugin.library;
    record.desc = &desc;
    for (uint32_t i = 0; i < desc.n_engines; ++i) {
        record.engine_kinds.push_back(add_engines(draft, record, desc.engines[i], plugin.library, ctx));
    }
    add_families(draft, record, desc, plugin.library, ctx);
    draft.plugins.push_back(std::move(record));
    create_missing_modules(draft, ctx);
}

void create_missing_modules(Snapshot& draft, const RegistrationContext& ctx) {
    for (auto& [id, family] : draft.families) {
        for (const auto& [engine_name, engine] : draft.engines) {
            auto& slots = family.modules[engine_name];
            for (const auto& source : draft.module_sources) {
                if (source.family_id != id) continue;
                const bool asked =
                    std::any_of(slots.begin(), slots.end(), [&](const ModuleSlot& s) { return s.plugin == source.plugin; });
                if (asked) continue;
                log_stage(ctx.logger, LoadStage::create, source.plugin);  // the family's module factory
                slots.push_back(create_module(source, family, *engine, ctx));
            }
        }
    }
}

bool remove_plugin(Snapshot& draft, const std::string& name) {
    auto record = std::find_if(draft.plugins.begin(), draft.plugins.end(), [&](const PluginRecord& p) { return p.name == name; });
    if (record == draft.plugins.end()) return false;
    for (const auto& engine : record->engines) {
        draft.engines.erase(engine);
        for (auto& [id, family] : draft.families) family.modules.erase(engine);
    }
    for (const auto& id : record->families) {
        draft.families.erase(id);
        for (auto it = draft.ops.begin(); it != draft.ops.end();) {
            it = it->second.family_id == id ? draft.ops.erase(it) : std::next(it);
        }
    }
    std::erase_if(draft.module_sources, [&](const ModuleSource& s) { return s.plugin == name; });
    for (auto& [id, family] : draft.families) {
        for (auto& [engine, slots] : family.modules) {
            std::erase_if(slots, [&](const ModuleSlot& s) { return s.plugin == name; });
        }
    }
    draft.plugins.erase(record);
    return true;
}

}  // namespace ferro::host
