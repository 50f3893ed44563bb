// The plugin descriptor checker, fed descriptors a fuzzer assembles the way a plugin does:
// families with ops and attribute specs, module providers and engines, with every count, flag,
// type tag, struct_size, default value, identifier and function pointer (NULL or a stub)
// fuzzed, arrays as long as their counts say (a descriptor's own lengths are its promise). A
// descriptor the checker accepts is then registered in a runtime (its factories and probes are
// stubs that decline, fail or report devices that cannot be created) and unloaded: what the
// checker lets through must be safe for the registry.
#include "fuzz_values.hpp"

#include "loader/descriptor_check.hpp"
#include "loader/load_error.hpp"
#include "registry/registration.hpp"
#include "runtime/runtime.hpp"

#include <deque>
#include <string>
#include <vector>

namespace {

ferro_status infer_stub(const ferro_host_api*, ferro_infer_args* args) {
    args->n_outputs = 0;
    return nullptr;
}
ferro_status vjp_stub(const ferro_host_api*, const ferro_vjp_args*) { return nullptr; }
ferro_status jvp_stub(const ferro_host_api*, const ferro_jvp_args*) { return nullptr; }
ferro_status decline(const ferro_host_api*, const ferro_module_create_args*, ferro_module_instance*) { return nullptr; }
ferro_status fail(const ferro_host_api* host, const ferro_module_create_args*, ferro_module_instance*) {
    return host->status_make(FERRO_UNAVAILABLE, "fuzz factory fails");
}
uint32_t probe_devices = 0;
ferro_status probe(const ferro_host_api*, ferro_probe_result* out) {
    out->device_count = probe_devices;
    return nullptr;
}
ferro_status create_fails(const ferro_host_api* host, uint32_t, ferro_engine_instance*) {
    return host->status_make(FERRO_UNAVAILABLE, "fuzz device is broken");
}

// Storage that outlives the descriptor pointing into it (one input's worth).
struct Arena {
    std::deque<std::string> strings;
    std::deque<std::vector<ferro_attr_spec>> specs;
    std::deque<std::vector<ferro_op_schema>> ops;
    std::deque<std::vector<int64_t>> arrays;
    std::vector<ferro_family_desc> families;
    std::vector<ferro_module_provider_desc> providers;
    std::vector<ferro_engine_desc> engines;
    const ferro_dtype dtypes[2] = {FERRO_DTYPE_F64, FERRO_DTYPE_F32};

    // An identifier most of the time, else any short string, sometimes NULL.
    const char* name(FuzzedDataProvider& in) {
        switch (in.ConsumeIntegralInRange(0, 9)) {
            case 0: return nullptr;
            case 1:
            case 2: return strings.emplace_back(in.ConsumeRandomLengthString(8)).c_str();
            default: return in.PickValueInArray<const char*>({"a", "b", "fuzz", "core", "linalg", "x_1", "cpu"});
        }
    }
    uint32_t size_of(FuzzedDataProvider& in, uint32_t real) {
        return ferro::fuzz::rarely(in, 16) ? in.ConsumeIntegralInRange<uint32_t>(0, real + 8) : real;
    }
};

ferro_attr_spec attr(FuzzedDataProvider& in, Arena& a) {
    ferro_attr_spec s{};
    s.struct_size = a.size_of(in, sizeof s);
    s.type = in.ConsumeIntegralInRange<uint32_t>(0, 8);
    s.flags = in.ConsumeIntegralInRange<uint32_t>(0, 4);
    s.name = a.name(in);
    s.doc = in.ConsumeBool() ? "doc" : nullptr;
    s.default_value.type = in.ConsumeIntegralInRange<uint32_t>(0, 8);
    s.default_value.count = in.ConsumeIntegralInRange<uint32_t>(0, 3);
    switch (s.default_value.type) {
        case FERRO_ATTR_STR: s.default_value.v.str = in.ConsumeBool() ? a.name(in) : nullptr; break;
        case FERRO_ATTR_I64_ARRAY:
        case FERRO_ATTR_F64_ARRAY: {
            const std::vector<int64_t>& v = a.arrays.emplace_back(s.default_value.count, 1);
            s.default_value.v.i64_array = ferro::fuzz::rarely(in, 8) ? nullptr : v.data();
            break;
        }
        default: s.default_value.v.i64 = ferro::fuzz::small_or_extreme(in);
    }
    return s;
}

ferro_op_schema op(FuzzedDataProvider& in, Arena& a) {
    ferro_op_schema s{};
    s.struct_size = a.size_of(in, sizeof s);
    s.name = a.name(in);
    s.doc = "fuzz op";
    s.n_inputs = in.ConsumeIntegralInRange(-2, 3);
    s.min_inputs = in.ConsumeIntegralInRange(-1, 3);
    s.n_outputs = in.ConsumeIntegralInRange(-2, 3);
    std::vector<ferro_attr_spec>& specs = a.specs.emplace_back();
    for (int n = in.ConsumeIntegralInRange(0, 3); n > 0; --n) specs.push_back(attr(in, a));
    s.n_attrs = ferro::fuzz::rarely(in, 8) ? in.ConsumeIntegralInRange<uint32_t>(0, 1) : static_cast<uint32_t>(specs.size());
    s.n_attrs = std::min<uint32_t>(s.n_attrs, static_cast<uint32_t>(specs.size()));
    s.attrs = specs.empty() || ferro::fuzz::rarely(in, 16) ? nullptr : specs.data();
    s.n_dtypes = in.ConsumeIntegralInRange<uint32_t>(0, 2);
    s.dtypes = ferro::fuzz::rarely(in, 16) ? nullptr : a.dtypes;
    s.infer = ferro::fuzz::rarely(in, 16) ? nullptr : infer_stub;
    s.diff_inputs = in.ConsumeIntegralInRange<uint64_t>(0, 3);
    s.diff_outputs = in.ConsumeIntegralInRange<uint64_t>(0, 3);
    s.save_inputs = in.ConsumeIntegralInRange<uint64_t>(0, 3);
    s.vjp = in.ConsumeBool() ? vjp_stub : nullptr;
    s.jvp = in.ConsumeBool() ? jvp_stub : nullptr;
    return s;
}

ferro_plugin_desc descriptor(FuzzedDataProvider& in, Arena& a) {
    ferro_plugin_desc d{};
    d.struct_size = a.size_of(in, sizeof d);
    d.abi_major = ferro::fuzz::rarely(in, 16) ? in.ConsumeIntegral<uint32_t>() : FERRO_ABI_MAJOR;
    d.abi_minor = in.ConsumeIntegralInRange<uint32_t>(0, FERRO_ABI_MINOR + 2);
    d.name = a.name(in);
    d.version = in.ConsumeBool() ? "1.0" : nullptr;
    for (int n = in.ConsumeIntegralInRange(0, 2); n > 0; --n) {
        ferro_family_desc f{};
        f.struct_size = a.size_of(in, sizeof f);
        f.id = a.name(in);
        f.version = "1.0";
        std::vector<ferro_op_schema>& ops = a.ops.emplace_back();
        for (int k = in.ConsumeIntegralInRange(0, 3); k > 0; --k) ops.push_back(op(in, a));
        f.n_ops = static_cast<uint32_t>(ops.size());
        f.ops = ops.empty() ? nullptr : ops.data();
        f.create_module = in.PickValueInArray<ferro_create_module_fn>({decline, fail, nullptr});
        a.families.push_back(f);
    }
    for (int n = in.ConsumeIntegralInRange(0, 1); n > 0; --n) {
        ferro_module_provider_desc p{};
        p.struct_size = a.size_of(in, sizeof p);
        p.family_id = a.name(in);
        p.create_module = in.PickValueInArray<ferro_create_module_fn>({decline, fail, nullptr});
        a.providers.push_back(p);
    }
    for (int n = in.ConsumeIntegralInRange(0, 1); n > 0; --n) {
        ferro_engine_desc e{};
        e.struct_size = a.size_of(in, sizeof e);
        e.kind = a.name(in);
        e.context_abi = in.ConsumeBool() ? "fuzz.ctx.v1" : nullptr;
        e.probe = ferro::fuzz::rarely(in, 8) ? nullptr : probe;
        e.create = ferro::fuzz::rarely(in, 8) ? nullptr : create_fails;
        a.engines.push_back(e);
    }
    d.n_families = static_cast<uint32_t>(a.families.size());
    d.families = a.families.empty() ? nullptr : a.families.data();
    d.n_module_providers = static_cast<uint32_t>(a.providers.size());
    d.module_providers = a.providers.empty() ? nullptr : a.providers.data();
    d.n_engines = static_cast<uint32_t>(a.engines.size());
    d.engines = a.engines.empty() ? nullptr : a.engines.data();
    probe_devices = in.ConsumeIntegralInRange<uint32_t>(0, 2);
    return d;
}

ferro::host::Runtime& runtime() {
    static ferro::host::Runtime rt([] {
        ferro::host::RuntimeOptions o;
        o.autoload = false;
        o.use_environment_path = false;
        o.use_default_dir = false;
        o.log_level = FERRO_LOG_OFF;
        return o;
    }());
    return rt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    Arena arena;
    const ferro_plugin_desc desc = descriptor(in, arena);
    try {
        ferro::host::check_abi(desc);
        ferro::host::check_descriptor(desc);
    } catch (const ferro::host::LoadError&) {
        return 0;
    }
    ferro::host::Runtime& rt = runtime();
    const ferro::host::RegistrationContext ctx{rt.host_api(), rt.logger(), rt.id()};
    try {
        rt.reconfigure([&](ferro::host::Snapshot& s) {
            ferro::host::register_plugin(s, ferro::host::LoadedPlugin{nullptr, &desc}, "fuzz", ctx);
        });
    } catch (const ferro::host::LoadError&) {
        return 0;  // a conflict with the built-ins, a failing probe: a diagnostic, as for a file
    }
    rt.reconfigure([&](ferro::host::Snapshot& s) { ferro::host::remove_plugin(s, desc.name); });
    return 0;
}
