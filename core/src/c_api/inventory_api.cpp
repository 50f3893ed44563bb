// extern "C" shims: the inventory, a read-only view of one pinned snapshot.
#include "c_api/handles.hpp"

#include <ferro/ferro.h>

using ferro::c_api::require;
using ferro::c_api::require_index;

namespace {

ferro_inventory_impl* make_inventory(const ferro::Runtime& rt) {
    auto inv = std::make_unique<ferro_inventory_impl>();
    inv->snapshot = rt.snapshot();
    for (const auto& [name, engine] : inv->snapshot->engines) {
        std::string owner = "(built in)";
        for (const auto& p : inv->snapshot->plugins) {
            for (const auto& e : p.engines) {
                if (e == name) owner = p.name;
            }
        }
        inv->engine_plugins.push_back(owner);
    }
    for (const auto& p : inv->snapshot->plugins) {
        for (const auto& k : p.engine_kinds) {
            inv->engine_kinds.push_back({p.name, k.kind, k.reason, k.device_count});
        }
    }
    inv->search_dirs = rt.search_path();
    for (const auto& d : inv->search_dirs) inv->search_dir_paths.push_back(d.path.string());
    return inv.release();
}

}  // namespace

FERRO_API ferro_status ferro_runtime_inventory(const ferro_runtime* runtime,
                                               ferro_inventory** out_inventory) {
    return ferro::guard([&] {
        require(runtime, "ferro_runtime_inventory", "runtime");
        require(out_inventory, "ferro_runtime_inventory", "out_inventory");
        *out_inventory = make_inventory(runtime->runtime);
    });
}

FERRO_API void ferro_inventory_destroy(ferro_inventory* inventory) { delete inventory; }

FERRO_API uint64_t ferro_inventory_epoch(const ferro_inventory* inventory) {
    return inventory != nullptr ? inventory->snapshot->epoch : 0;
}

FERRO_API uint32_t ferro_inventory_plugin_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->plugins.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_plugin(const ferro_inventory* inventory, uint32_t index,
                                              ferro_plugin_info* out) {
    return ferro::guard([&] {
        require(inventory, "ferro_inventory_plugin", "inventory");
        require(out, "ferro_inventory_plugin", "out");
        require_index(index, inventory->snapshot->plugins.size(), "ferro_inventory_plugin");
        const auto& p = inventory->snapshot->plugins[index];
        *out = {sizeof *out, p.abi_major, p.abi_minor, p.builtin, p.name.c_str(),
                p.version.c_str(), p.description.c_str(), p.path.c_str(),
                static_cast<uint32_t>(p.families.size()), static_cast<uint32_t>(p.engines.size())};
    });
}

FERRO_API uint32_t ferro_inventory_diagnostic_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->diagnostics.size())
                                : 0;
}

FERRO_API ferro_status ferro_inventory_diagnostic(const ferro_inventory* inventory,
                                                  uint32_t index, ferro_diagnostic_info* out) {
    return ferro::guard([&] {
        require(inventory, "ferro_inventory_diagnostic", "inventory");
        require(out, "ferro_inventory_diagnostic", "out");
        require_index(index, inventory->snapshot->diagnostics.size(), "ferro_inventory_diagnostic");
        const auto& d = inventory->snapshot->diagnostics[index];
        *out = {sizeof *out, d.code, d.file.c_str(), ferro::load_stage_name(d.stage),
                d.message.c_str()};
    });
}

FERRO_API uint32_t ferro_inventory_engine_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->engines.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_engine(const ferro_inventory* inventory, uint32_t index,
                                              ferro_engine_info* out) {
    return ferro::guard([&] {
        require(inventory, "ferro_inventory_engine", "inventory");
        require(out, "ferro_inventory_engine", "out");
        require_index(index, inventory->snapshot->engines.size(), "ferro_inventory_engine");
        const ferro::Engine& e = *inventory->snapshot->engines.nth(index)->second;
        *out = {sizeof *out, e.ordinal(), e.name().c_str(), e.kind().c_str(),
                inventory->engine_plugins[index].c_str(), e.props().name,
                e.props().memory_bytes, e.props().score, e.props().flags};
    });
}

FERRO_API uint32_t ferro_inventory_engine_kind_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->engine_kinds.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_engine_kind(const ferro_inventory* inventory,
                                                   uint32_t index, ferro_engine_kind_info* out) {
    return ferro::guard([&] {
        require(inventory, "ferro_inventory_engine_kind", "inventory");
        require(out, "ferro_inventory_engine_kind", "out");
        require_index(index, inventory->engine_kinds.size(), "ferro_inventory_engine_kind");
        const auto& k = inventory->engine_kinds[index];
        *out = {sizeof *out, k.device_count, k.plugin.c_str(), k.kind.c_str(), k.reason.c_str()};
    });
}

FERRO_API uint32_t ferro_inventory_op_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->ops.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_op(const ferro_inventory* inventory, uint32_t index,
                                          ferro_op_info* out) {
    return ferro::guard([&] {
        require(inventory, "ferro_inventory_op", "inventory");
        require(out, "ferro_inventory_op", "out");
        require_index(index, inventory->snapshot->ops.size(), "ferro_inventory_op");
        const ferro::OpEntry& op = inventory->snapshot->ops.nth(index)->second;
        const ferro_op_schema& s = *op.schema;
        *out = {sizeof *out, s.n_inputs, s.n_outputs, s.n_attrs, op.qualified_name.c_str(),
                op.family_id.c_str(), s.doc != nullptr ? s.doc : "", s.vjp != nullptr,
                s.jvp != nullptr};
    });
}

FERRO_API uint32_t ferro_inventory_search_dir_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->search_dirs.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_search_dir(const ferro_inventory* inventory,
                                                  uint32_t index, ferro_search_dir_info* out) {
    return ferro::guard([&] {
        require(inventory, "ferro_inventory_search_dir", "inventory");
        require(out, "ferro_inventory_search_dir", "out");
        require_index(index, inventory->search_dirs.size(), "ferro_inventory_search_dir");
        const auto& d = inventory->search_dirs[index];
        *out = {sizeof *out, d.exists, inventory->search_dir_paths[index].c_str(),
                d.origin.c_str()};
    });
}
