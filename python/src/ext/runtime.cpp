// Runtimes (ferro.Runtime) and what one snapshot holds (ferro.plugins(), ferro.engines(), ...).
#include "common.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

namespace ferro_py {
namespace {

constexpr std::array<const char*, kCoreOpCount> kCoreOpNames = {"core.add", "core.sub", "core.mul", "core.div", "core.matmul",
                                                                "core.pow", "core.eq",  "core.ne",  "core.lt",  "core.le",
                                                                "core.gt",  "core.ge",  "core.neg", "core.copy"};

std::mutex default_mutex;
RuntimeRef default_rt;

// An mpi4py communicator as the C API's type-erased handle: the address and size of its MPI_Comm
// (the host copies those bytes; the runtime works on a duplicate of the communicator).
ferro_communicator communicator_of(nb::handle comm) {
    ferro_communicator c{};
    c.struct_size = sizeof c;
    if (comm.is_none()) return c;
    nb::module_ mpi = nb::module_::import_("mpi4py.MPI");
    if (!nb::isinstance(comm, mpi.attr("Comm"))) {
        throw nb::type_error(("Runtime: communicator must be an mpi4py.MPI.Comm, got " +
                              nb::cast<std::string>(nb::str(comm.type().attr("__name__"))))
                                 .c_str());
    }
    c.kind = FERRO_COMMUNICATOR_MPI;
    c.handle = reinterpret_cast<const void*>(nb::cast<uintptr_t>(mpi.attr("_addressof")(comm)));
    c.bytes = nb::cast<uint64_t>(mpi.attr("_sizeof")(comm));
    return c;
}

RuntimeRef create_runtime(const std::vector<std::string>& plugin_paths, bool use_environment_path, bool use_default_dir,
                          bool autoload, std::optional<uint32_t> log_level, nb::handle communicator = nb::none()) {
    std::vector<const char*> paths;
    for (const auto& p : plugin_paths) paths.push_back(p.c_str());
    ferro_runtime_options options;
    ferro_runtime_options_init(&options);
    options.n_plugin_paths = static_cast<uint32_t>(paths.size());
    options.plugin_paths = paths.data();
    options.use_environment_path = use_environment_path;
    options.use_default_dir = use_default_dir;
    options.autoload = autoload;
    if (log_level) {
        options.log_level_set = 1;
        options.log_level = *log_level;
    }
    options.communicator = communicator_of(communicator);
    ferro_runtime* rt = nullptr;
    {
        nb::gil_scoped_release unlocked;  // loading plugins probes files: may take a while
        check(ferro_runtime_create(&options, &rt));
    }
    return std::make_shared<RuntimeState>(rt);
}

nb::object attr_to_python(const ferro_attr_value& v) {
    switch (v.type) {
        case FERRO_ATTR_I64: return nb::int_(v.v.i64);
        case FERRO_ATTR_F64: return nb::float_(v.v.f64);
        case FERRO_ATTR_BOOL: return nb::bool_(v.v.boolean != 0);
        case FERRO_ATTR_STR: return v.v.str != nullptr ? nb::object(nb::str(v.v.str)) : nb::none();
        case FERRO_ATTR_I64_ARRAY: {
            nb::list l;
            for (uint32_t i = 0; i < v.count; ++i) l.append(v.v.i64_array[i]);
            return nb::tuple(l);
        }
        case FERRO_ATTR_F64_ARRAY: {
            nb::list l;
            for (uint32_t i = 0; i < v.count; ++i) l.append(v.v.f64_array[i]);
            return nb::tuple(l);
        }
        default: return nb::none();
    }
}

const char* attr_type_name(uint32_t type) {
    switch (type) {
        case FERRO_ATTR_I64: return "int";
        case FERRO_ATTR_F64: return "float";
        case FERRO_ATTR_BOOL: return "bool";
        case FERRO_ATTR_STR: return "str";
        case FERRO_ATTR_I64_ARRAY: return "int[]";
        case FERRO_ATTR_F64_ARRAY: return "float[]";
        default: return "none";
    }
}

nb::str text(const char* s) { return nb::str(s != nullptr ? s : ""); }

template <class Info> Info init_info() {
    Info info{};
    info.struct_size = sizeof info;
    return info;
}

nb::list dtype_list(const ferro_dtype* dtypes, uint32_t n) {
    nb::list l;
    for (uint32_t i = 0; i < n; ++i) l.append(nb::str(dtype_name(dtypes[i])));
    return l;
}

nb::list bits(uint64_t mask, int32_t n) {
    nb::list l;
    for (int32_t i = 0; i < std::min<int32_t>(n, 64); ++i) {
        if ((mask >> i) & 1u) l.append(i);
    }
    return l;
}

nb::dict op_entry(const ferro_inventory* inv, uint32_t index) {
    auto info = init_info<ferro_op_info>();
    check(ferro_inventory_op(inv, index, &info));
    auto detail = init_info<ferro_op_detail_info>();
    check(ferro_inventory_op_detail(inv, index, &detail));
    nb::list attrs;
    for (uint32_t a = 0; a < info.n_attrs; ++a) {
        auto attr = init_info<ferro_op_attr_info>();
        check(ferro_inventory_op_attr(inv, index, a, &attr));
        nb::dict d;
        d["name"] = text(attr.name);
        d["type"] = attr_type_name(attr.type);
        d["doc"] = text(attr.doc);
        d["required"] = (attr.flags & FERRO_ATTR_FLAG_REQUIRED) != 0;
        d["optional"] = (attr.flags & FERRO_ATTR_FLAG_OPTIONAL) != 0;
        d["default"] = attr_to_python(attr.default_value);
        attrs.append(d);
    }
    nb::dict d;
    d["name"] = text(info.name);
    d["family"] = text(info.family);
    d["doc"] = text(info.doc);
    d["n_inputs"] = info.n_inputs;
    d["min_inputs"] = detail.min_inputs;
    d["n_outputs"] = info.n_outputs;
    d["has_vjp"] = info.has_vjp != 0;
    d["has_jvp"] = info.has_jvp != 0;
    d["dtypes"] = dtype_list(detail.dtypes, detail.n_dtypes);
    const int32_t width = info.n_inputs < 0 ? 64 : info.n_inputs;
    d["diff_inputs"] = detail.diff_inputs == ~uint64_t{0} && info.n_inputs < 0 ? nb::object(nb::str("all"))
                                                                               : nb::object(bits(detail.diff_inputs, width));
    d["diff_outputs"] = bits(detail.diff_outputs, info.n_outputs < 0 ? 64 : info.n_outputs);
    d["attrs"] = attrs;
    return d;
}

// Every table of one snapshot, as lists of dicts (the Python side names them).
nb::dict inventory(const RuntimeRef& rt) {
    ferro_inventory* raw = nullptr;
    check(ferro_runtime_inventory(rt->get(), &raw));
    std::unique_ptr<ferro_inventory, void (*)(ferro_inventory*)> inv(raw, ferro_inventory_destroy);
    nb::dict out;
    out["epoch"] = ferro_inventory_epoch(raw);
    nb::list plugins;
    for (uint32_t i = 0; i < ferro_inventory_plugin_count(raw); ++i) {
        auto p = init_info<ferro_plugin_info>();
        check(ferro_inventory_plugin(raw, i, &p));
        nb::dict d;
        d["name"] = text(p.name);
        d["version"] = text(p.version);
        d["description"] = text(p.description);
        d["path"] = text(p.path);
        d["builtin"] = p.builtin != 0;
        d["abi"] = nb::make_tuple(p.abi_major, p.abi_minor);
        d["n_families"] = p.n_families;
        d["n_engines"] = p.n_engines;
        d["module_families"] = text(p.module_families);
        plugins.append(d);
    }
    out["plugins"] = plugins;
    nb::list diagnostics;
    for (uint32_t i = 0; i < ferro_inventory_diagnostic_count(raw); ++i) {
        auto p = init_info<ferro_diagnostic_info>();
        check(ferro_inventory_diagnostic(raw, i, &p));
        nb::dict d;
        d["code"] = nb::str(ferro_status_code_name(p.code));
        d["file"] = text(p.file);
        d["stage"] = text(p.stage);
        d["message"] = text(p.message);
        diagnostics.append(d);
    }
    out["diagnostics"] = diagnostics;
    nb::list engines;
    for (uint32_t i = 0; i < ferro_inventory_engine_count(raw); ++i) {
        auto p = init_info<ferro_engine_info>();
        check(ferro_inventory_engine(raw, i, &p));
        auto detail = init_info<ferro_engine_detail_info>();
        check(ferro_inventory_engine_detail(raw, i, &detail));
        nb::dict d;
        d["name"] = text(p.name);
        d["kind"] = text(p.kind);
        d["plugin"] = text(p.plugin);
        d["device"] = text(p.device);
        d["memory_bytes"] = p.memory_bytes;
        d["score"] = p.score;
        d["flags"] = p.flags;
        d["dtypes"] = dtype_list(detail.dtypes, detail.n_dtypes);
        d["details"] = text(detail.details);
        engines.append(d);
    }
    out["engines"] = engines;
    nb::list kinds;
    for (uint32_t i = 0; i < ferro_inventory_engine_kind_count(raw); ++i) {
        auto p = init_info<ferro_engine_kind_info>();
        check(ferro_inventory_engine_kind(raw, i, &p));
        nb::dict d;
        d["kind"] = text(p.kind);
        d["plugin"] = text(p.plugin);
        d["device_count"] = p.device_count;
        d["reason"] = text(p.reason);
        kinds.append(d);
    }
    out["engine_kinds"] = kinds;
    nb::list families;
    for (uint32_t i = 0; i < ferro_inventory_family_count(raw); ++i) {
        auto p = init_info<ferro_family_info>();
        check(ferro_inventory_family(raw, i, &p));
        nb::dict d;
        d["id"] = text(p.id);
        d["version"] = text(p.version);
        d["description"] = text(p.description);
        d["plugin"] = text(p.plugin);
        d["n_ops"] = p.n_ops;
        families.append(d);
    }
    out["families"] = families;
    nb::list modules;
    for (uint32_t i = 0; i < ferro_inventory_module_count(raw); ++i) {
        auto p = init_info<ferro_module_info>();
        check(ferro_inventory_module(raw, i, &p));
        nb::dict d;
        d["family"] = text(p.family);
        d["engine"] = text(p.engine);
        d["plugin"] = text(p.plugin);
        d["available"] = p.available != 0;
        d["reason"] = text(p.reason);
        modules.append(d);
    }
    out["modules"] = modules;
    nb::list ops;
    for (uint32_t i = 0; i < ferro_inventory_op_count(raw); ++i) ops.append(op_entry(raw, i));
    out["ops"] = ops;
    nb::list dirs;
    for (uint32_t i = 0; i < ferro_inventory_search_dir_count(raw); ++i) {
        auto p = init_info<ferro_search_dir_info>();
        check(ferro_inventory_search_dir(raw, i, &p));
        nb::dict d;
        d["path"] = text(p.path);
        d["origin"] = text(p.origin);
        d["exists"] = p.exists != 0;
        dirs.append(d);
    }
    out["search_dirs"] = dirs;
    return out;
}

nb::dict plan_cache_stats(const RuntimeRef& rt) {
    auto s = init_info<ferro_plan_cache_stats>();
    check(ferro_runtime_plan_cache_stats(rt->get(), &s));
    nb::dict d;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    d["evictions"] = s.evictions;
    d["entries"] = s.entries;
    d["bytes"] = s.bytes;
    d["max_entries"] = s.max_entries;
    d["max_bytes"] = s.max_bytes;
    return d;
}

nb::dict engine_memory(const RuntimeRef& rt, const std::string& engine) {
    auto s = init_info<ferro_engine_memory_stats>();
    check(ferro_runtime_engine_memory(rt->get(), engine.c_str(), &s));
    nb::dict d;
    d["live_buffers"] = s.live_buffers;
    d["live_bytes"] = s.live_bytes;
    d["allocations"] = s.allocations;
    d["peak_bytes"] = s.peak_bytes;
    return d;
}

}  // namespace

RuntimeState::RuntimeState(ferro_runtime* rt) : rt_(rt) {
    for (size_t i = 0; i < kCoreOpCount; ++i) {
        const ferro_status st = ferro_op_find(rt_, kCoreOpNames[i], &core_[i]);
        if (st != nullptr) {
            ferro_runtime_destroy(rt_);
            check(st);
        }
    }
}

RuntimeState::~RuntimeState() { ferro_runtime_destroy(rt_); }

ferro_op RuntimeState::find(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = ops_.find(name);
    if (it != ops_.end()) return it->second;
    ferro_op op = nullptr;
    check(ferro_op_find(rt_, name.c_str(), &op));
    ops_.emplace(name, op);
    return op;
}

RuntimeRef default_runtime() {
    std::lock_guard lock(default_mutex);
    if (!default_rt) default_rt = create_runtime({}, true, true, true, std::nullopt);
    return default_rt;
}

void release_default_runtime() {
    RuntimeRef dropped;
    std::lock_guard lock(default_mutex);
    dropped.swap(default_rt);
}

void bind_runtime(nb::module_& m) {
    nb::class_<RuntimeState>(m, "Runtime",
                             "A ferro runtime: the plugins it loaded, its engines, plan cache and autodiff tape. "
                             "ferro.runtime() is the default one (plugins from the search path).")
        .def(nb::new_([](const std::vector<std::string>& plugin_paths, bool use_environment_path, bool use_default_dir,
                         bool autoload, std::optional<uint32_t> log_level, nb::handle communicator) {
                 return create_runtime(plugin_paths, use_environment_path, use_default_dir, autoload, log_level, communicator);
             }),
             nb::arg("plugin_paths") = std::vector<std::string>{}, nb::arg("use_environment_path") = true,
             nb::arg("use_default_dir") = true, nb::arg("autoload") = true, nb::arg("log_level") = nb::none(),
             nb::arg("communicator").none() = nb::none(),
             "plugin_paths are searched first, then FERRO_PLUGIN_PATH (use_environment_path) and lib/ferro/plugins "
             "next to libferro (use_default_dir); autoload loads every plugin found; log_level: 0 trace .. 5 off "
             "(None: FERRO_LOG_LEVEL, else warn); communicator: an mpi4py.MPI.Comm for the comm family's "
             "collectives (None: MPI_COMM_WORLD under mpirun, else this process alone).")
        .def_prop_ro("epoch", [](const RuntimeState& rt) { return ferro_runtime_epoch(rt.get()); })
        .def_prop_ro("id", [](const RuntimeState& rt) { return ferro_runtime_id(rt.get()); })
        .def(
            "load_plugin",
            [](RuntimeState& rt, const std::string& path) {
                nb::gil_scoped_release unlocked;
                check(ferro_runtime_load_plugin(rt.get(), path.c_str()));
            },
            nb::arg("path"), "Loads one plugin file (a file already loaded changes nothing).")
        .def(
            "scan",
            [](RuntimeState& rt) {
                uint32_t loaded = 0, failed = 0;
                {
                    nb::gil_scoped_release unlocked;
                    check(ferro_runtime_scan(rt.get(), &loaded, &failed));
                }
                return nb::make_tuple(loaded, failed);
            },
            "Loads every plugin on the search path not loaded yet: (loaded, failed).")
        .def(
            "unload_plugin",
            [](RuntimeState& rt, const std::string& name) { check(ferro_runtime_unload_plugin(rt.get(), name.c_str())); },
            nb::arg("name"))
        .def(
            "rank_size",
            [](RuntimeState& rt) {
                int64_t rank = 0, size = 0;
                check(ferro_runtime_rank_size(rt.get(), &rank, &size));
                return nb::make_tuple(rank, size);
            },
            "(rank, size) of this process in the runtime's communicator (comm family).")
        .def("plan_cache_stats", [](const RuntimeRef& rt) { return plan_cache_stats(rt); })
        .def("plan_cache_clear", [](RuntimeState& rt) { ferro_runtime_plan_cache_clear(rt.get()); })
        .def(
            "engine_memory", [](const RuntimeRef& rt, const std::string& engine) { return engine_memory(rt, engine); },
            nb::arg("engine") = "cpu")
        .def(
            "engine_memory_reset_peak",
            [](RuntimeState& rt, const std::string& engine) {
                check(ferro_runtime_engine_memory_reset_peak(rt.get(), engine.c_str()));
            },
            nb::arg("engine") = "cpu")
        .def("_inventory", [](const RuntimeRef& rt) { return inventory(rt); });

    m.def("default_runtime", &default_runtime, "The default runtime, made on first use.");
    m.def("_release_default_runtime", &release_default_runtime);
    m.def("version", [] { return std::string(ferro_version()); });
    m.def("abi_version", [] {
        uint32_t major = 0, minor = 0;
        ferro_abi_version(&major, &minor);
        return nb::make_tuple(major, minor);
    });
}

}  // namespace ferro_py
