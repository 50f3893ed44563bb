// extern "C" shims: the inventory, a read-only view of one pinned snapshot.
#include "c_api/handles.hpp"

#include <ferro/ferro.h>

#include <algorithm>
#include <cstring>

using ferro::host::c_api::require;
using ferro::host::c_api::require_index;

namespace {

ferro_inventory_impl* make_inventory(const ferro::host::Runtime& rt) {
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
    for (const auto& [id, family] : inv->snapshot->families) {
        for (const auto& [engine, slots] : family.modules) {
            for (const auto& slot : slots) inv->modules.push_back({&id, &engine, &slot});
        }
    }
    inv->search_dirs = rt.search_path();
    for (const auto& d : inv->search_dirs) inv->search_dir_paths.push_back(d.path.string());
    return inv.release();
}

// The shared shape of an inventory accessor: check the arguments, then fill *out from row
// `index` of the rows `rows(inventory)` selects.
// The smallest out-struct a caller may pass: a caller built against an older minor passes the
// size it knows, and gets the fields it knows.
template <class Out> constexpr std::size_t min_out_size() { return sizeof(Out); }
template <> constexpr std::size_t min_out_size<ferro_op_detail_info>() {
    return FERRO_STRUCT_SIZE_UP_TO(ferro_op_detail_info, dtypes);  // 1.10
}

template <class Out, class Rows, class Fill>
ferro_status entry(const ferro_inventory* inventory, uint32_t index, Out* out, const char* function, Rows&& rows, Fill&& fill) {
    return ferro::host::guard([&] {
        require(inventory, function, "inventory");
        require(out, function, "out");
        ferro::host::require_struct_size(out->struct_size, min_out_size<Out>(), function, "out");
        const auto& all = rows(*inventory);
        require_index(index, all.size(), function);
        fill(all, *out);
    });
}

}  // namespace

FERRO_API ferro_status ferro_runtime_inventory(const ferro_runtime* runtime, ferro_inventory** out_inventory) {
    return ferro::host::guard([&] {
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

FERRO_API ferro_status ferro_inventory_plugin(const ferro_inventory* inventory, uint32_t index, ferro_plugin_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_plugin",
        [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->plugins; },
        [&](const auto& rows, ferro_plugin_info& o) {
            const auto& p = rows[index];
            o = {sizeof o,
                 p.abi_major,
                 p.abi_minor,
                 p.builtin,
                 p.name.c_str(),
                 p.version.c_str(),
                 p.description.c_str(),
                 p.path.c_str(),
                 static_cast<uint32_t>(p.families.size()),
                 static_cast<uint32_t>(p.engines.size()),
                 p.module_families_text.c_str()};
        });
}

FERRO_API uint32_t ferro_inventory_diagnostic_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->diagnostics.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_diagnostic(const ferro_inventory* inventory, uint32_t index, ferro_diagnostic_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_diagnostic",
        [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->diagnostics; },
        [&](const auto& rows, ferro_diagnostic_info& o) {
            const auto& d = rows[index];
            o = {sizeof o, d.code, d.file.c_str(), ferro::host::load_stage_name(d.stage), d.message.c_str()};
        });
}

FERRO_API uint32_t ferro_inventory_engine_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->engines.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_engine(const ferro_inventory* inventory, uint32_t index, ferro_engine_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_engine",
        [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->engines; },
        [&](const auto& rows, ferro_engine_info& o) {
            const ferro::host::Engine& e = *rows.nth(index)->second;
            o = {sizeof o,
                 e.ordinal(),
                 e.name().c_str(),
                 e.kind().c_str(),
                 inventory->engine_plugins[index].c_str(),
                 e.props().name,
                 e.props().memory_bytes,
                 e.props().score,
                 e.props().flags};
        });
}

FERRO_API uint32_t ferro_inventory_engine_kind_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->engine_kinds.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_engine_kind(const ferro_inventory* inventory, uint32_t index,
                                                   ferro_engine_kind_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_engine_kind",
        [](const ferro_inventory_impl& i) -> const auto& { return i.engine_kinds; },
        [&](const auto& rows, ferro_engine_kind_info& o) {
            const auto& k = rows[index];
            o = {sizeof o, k.device_count, k.plugin.c_str(), k.kind.c_str(), k.reason.c_str()};
        });
}

FERRO_API uint32_t ferro_inventory_op_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->ops.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_op(const ferro_inventory* inventory, uint32_t index, ferro_op_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_op", [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->ops; },
        [&](const auto& rows, ferro_op_info& o) {
            const ferro::host::OpEntry& op = rows.nth(index)->second;
            const ferro_op_schema& s = *op.schema;
            o = {sizeof o,
                 s.n_inputs,
                 s.n_outputs,
                 s.n_attrs,
                 op.qualified_name.c_str(),
                 op.family_id.c_str(),
                 s.doc != nullptr ? s.doc : "",
                 s.vjp != nullptr,
                 s.jvp != nullptr};
        });
}

FERRO_API uint32_t ferro_inventory_search_dir_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->search_dirs.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_search_dir(const ferro_inventory* inventory, uint32_t index, ferro_search_dir_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_search_dir",
        [](const ferro_inventory_impl& i) -> const auto& { return i.search_dirs; },
        [&](const auto& rows, ferro_search_dir_info& o) {
            o = {sizeof o, rows[index].exists, inventory->search_dir_paths[index].c_str(), rows[index].origin.c_str()};
        });
}

FERRO_API ferro_status ferro_inventory_op_attr(const ferro_inventory* inventory, uint32_t op_index, uint32_t attr_index,
                                               ferro_op_attr_info* out) {
    return entry(
        inventory, op_index, out, "ferro_inventory_op_attr",
        [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->ops; },
        [&](const auto& rows, ferro_op_attr_info& o) {
            const ferro_op_schema& s = *rows.nth(op_index)->second.schema;
            require_index(attr_index, s.n_attrs, "ferro_inventory_op_attr");
            const ferro_attr_spec& a = s.attrs[attr_index];
            o = {sizeof o, a.type, a.flags, 0, a.name, a.doc != nullptr ? a.doc : "", a.default_value};
        });
}

FERRO_API ferro_status ferro_inventory_op_detail(const ferro_inventory* inventory, uint32_t op_index, ferro_op_detail_info* out) {
    return entry(
        inventory, op_index, out, "ferro_inventory_op_detail",
        [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->ops; },
        [&](const auto& rows, ferro_op_detail_info& o) {
            const ferro::host::OpEntry& e = rows.nth(op_index)->second;
            const ferro_op_schema& s = *e.schema;
            const uint32_t size = o.struct_size;  // the caller's: fill what it knows
            ferro_op_detail_info full{sizeof full,
                                      s.min_inputs,
                                      s.diff_inputs,
                                      s.diff_outputs,
                                      s.n_dtypes,
                                      0,
                                      s.dtypes,
                                      static_cast<uint32_t>(e.views.size()),
                                      0,
                                      e.views.data()};
            std::memcpy(&o, &full, std::min<size_t>(size, sizeof full));
            o.struct_size = size;
        });
}

FERRO_API ferro_status ferro_inventory_engine_detail(const ferro_inventory* inventory, uint32_t engine_index,
                                                     ferro_engine_detail_info* out) {
    return entry(
        inventory, engine_index, out, "ferro_inventory_engine_detail",
        [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->engines; },
        [&](const auto& rows, ferro_engine_detail_info& o) {
            const ferro_device_props& p = rows.nth(engine_index)->second->props();
            o = {sizeof o, std::min<uint32_t>(p.n_dtypes, 16), p.dtypes, p.details};
        });
}

FERRO_API uint32_t ferro_inventory_module_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->modules.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_module(const ferro_inventory* inventory, uint32_t index, ferro_module_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_module", [](const ferro_inventory_impl& i) -> const auto& { return i.modules; },
        [&](const auto& rows, ferro_module_info& o) {
            const auto& m = rows[index];
            o = {sizeof o,          m.slot->module != nullptr, m.family->c_str(),
                 m.engine->c_str(), m.slot->plugin.c_str(),    m.slot->decline_reason.c_str()};
        });
}

FERRO_API uint32_t ferro_inventory_family_count(const ferro_inventory* inventory) {
    return inventory != nullptr ? static_cast<uint32_t>(inventory->snapshot->families.size()) : 0;
}

FERRO_API ferro_status ferro_inventory_family(const ferro_inventory* inventory, uint32_t index, ferro_family_info* out) {
    return entry(
        inventory, index, out, "ferro_inventory_family",
        [](const ferro_inventory_impl& i) -> const auto& { return i.snapshot->families; },
        [&](const auto& rows, ferro_family_info& o) {
            const ferro::host::FamilySlot& f = rows.nth(index)->second;
            o = {sizeof o,        f.desc != nullptr ? f.desc->n_ops : 0, f.id.c_str(), f.version.c_str(), f.description.c_str(),
                 f.plugin.c_str()};
        });
}
