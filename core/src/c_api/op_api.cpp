// extern "C" shims: op calls and the plan cache.
#include "c_api/handles.hpp"
#include "host_api/host_api.hpp"

#include <ferro/ferro.h>

#include <fmt/format.h>

#include <algorithm>

using ferro::host::c_api::require;

FERRO_API ferro_status ferro_op_find(ferro_runtime* runtime, const char* name, ferro_op* out_op) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_op_find", "runtime");
        require(name, "ferro_op_find", "name");
        require(out_op, "ferro_op_find", "out_op");
        *out_op = ferro::host::find_op(runtime->runtime, name, "op_find");
    });
}

FERRO_API ferro_status ferro_op_call(ferro_runtime* runtime, ferro_op op, ferro_op_call_args* args) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_op_call", "runtime");
        require(op, "ferro_op_call", "op");
        require(args, "ferro_op_call", "args");
        ferro::host::call_op(runtime->runtime, *op, *args);
    });
}

FERRO_API ferro_status ferro_op_bind(ferro_runtime* runtime, ferro_op op, const ferro_named_attr* attrs, uint32_t n_attrs,
                                     ferro_bound_call* out_call) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_op_bind", "runtime");
        require(op, "ferro_op_bind", "op");
        require(out_call, "ferro_op_bind", "out_call");
        if (n_attrs > 0) require(attrs, "ferro_op_bind", "attrs");
        ferro::host::check_op_runtime(*op, runtime->runtime, "ferro_op_bind: " + op->name);
        runtime->runtime.dispatcher().check_attrs(*op, attrs, n_attrs);
        *out_call = new ferro_bound_call_impl(*op, attrs, n_attrs);
    });
}

FERRO_API ferro_status ferro_bound_call_run(ferro_bound_call call, ferro_op_call_args* args) {
    return ferro::host::guard([&] {
        require(call, "ferro_bound_call_run", "call");
        require(args, "ferro_bound_call_run", "args");
        ferro::host::require_struct_size(args->struct_size, ferro::host::kOpCallArgsMinSize, "ferro_bound_call_run", "args");
        const std::string& op = call->op.name;
        if (args->n_attrs > 0) {
            throw ferro::host::Error(FERRO_INVALID_ARGUMENT,
                                     op + ": a bound call's attributes are fixed at bind (n_attrs must be 0)");
        }
        if (args->n_inputs > 0) require(args->inputs, op.c_str(), "inputs");
        const auto into = ferro::host::into_of(op, *args);
        ferro::host::Dispatcher& dispatcher = call->op.runtime->dispatcher();
        ferro::host::Outputs outs = dispatcher.run(*call, {args->inputs, args->n_inputs}, into);
        if (!into.empty()) {
            args->n_outputs = args->n_into;
            return;
        }
        ferro::host::give_outputs(op, outs, *args);
    });
}

FERRO_API void ferro_bound_call_destroy(ferro_bound_call call) { delete call; }

FERRO_API ferro_status ferro_call(ferro_runtime* runtime, const char* name, const ferro_named_attr* attrs, uint32_t n_attrs,
                                  const ferro_tensor* inputs, uint32_t n_inputs, ferro_tensor* outputs, uint32_t outputs_capacity,
                                  uint32_t* out_n_outputs) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_call", "runtime");
        require(name, "ferro_call", "name");
        if (n_attrs > 0) require(attrs, "ferro_call", "attrs");
        if (n_inputs > 0) require(inputs, "ferro_call", "inputs");
        require(outputs, "ferro_call", "outputs");
        // The same path as ferro_op_call, through the runtime's handle for `name`.
        ferro_op_call_args args{sizeof args, n_attrs, attrs, n_inputs, outputs_capacity, inputs, outputs, 0, 0};
        ferro::host::call_op(runtime->runtime, runtime->runtime.op(name), args);
        if (out_n_outputs != nullptr) *out_n_outputs = args.n_outputs;
    });
}

namespace {

// One-output call of a core op, resolving its handle once per process and runtime.
ferro_status call1(ferro_runtime* rt, const char* op, std::initializer_list<ferro_tensor> in,
                   std::span<const ferro_named_attr> attrs, ferro_tensor* out) {
    return ferro::host::guard([&] {
        require(rt, op, "runtime");
        require(out, op, "out");
        ferro::host::Outputs outs = rt->runtime.call(op, attrs, {in.begin(), in.size()});
        *out = outs.at(0).release_ownership();
    });
}

}  // namespace

FERRO_API ferro_status ferro_add(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out) {
    return call1(rt, "core.add", {a, b}, {}, out);
}
FERRO_API ferro_status ferro_sub(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out) {
    return call1(rt, "core.sub", {a, b}, {}, out);
}
FERRO_API ferro_status ferro_mul(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out) {
    return call1(rt, "core.mul", {a, b}, {}, out);
}
FERRO_API ferro_status ferro_div(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out) {
    return call1(rt, "core.div", {a, b}, {}, out);
}
FERRO_API ferro_status ferro_matmul(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out) {
    return call1(rt, "core.matmul", {a, b}, {}, out);
}
FERRO_API ferro_status ferro_sum(ferro_runtime* rt, ferro_tensor a, const int64_t* axes, uint32_t n_axes, ferro_bool keepdim,
                                 ferro_tensor* out) {
    ferro_named_attr attrs[2] = {};
    attrs[0].name = "axes";
    attrs[0].value.type = axes == nullptr && n_axes == 0 ? FERRO_ATTR_NONE : FERRO_ATTR_I64_ARRAY;
    attrs[0].value.count = n_axes;
    attrs[0].value.v.i64_array = axes;
    attrs[1].name = "keepdim";
    attrs[1].value.type = FERRO_ATTR_BOOL;
    attrs[1].value.v.boolean = keepdim;
    return call1(rt, "core.sum", {a}, attrs, out);
}

FERRO_API ferro_status ferro_runtime_plan_cache_stats(const ferro_runtime* runtime, ferro_plan_cache_stats* out) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_runtime_plan_cache_stats", "runtime");
        require(out, "ferro_runtime_plan_cache_stats", "out");
        ferro::host::require_struct_size(out->struct_size, sizeof *out, "ferro_runtime_plan_cache_stats", "out");
        const auto s = const_cast<ferro_runtime*>(runtime)->runtime.plan_cache_stats();
        *out = {sizeof *out, 0, s.hits, s.misses, s.evictions, s.entries, s.bytes, s.max_entries, s.max_bytes};
    });
}

FERRO_API ferro_status ferro_runtime_engine_memory(const ferro_runtime* runtime, const char* engine,
                                                   ferro_engine_memory_stats* out) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_runtime_engine_memory", "runtime");
        require(engine, "ferro_runtime_engine_memory", "engine");
        require(out, "ferro_runtime_engine_memory", "out");
        ferro::host::require_struct_size(out->struct_size, FERRO_STRUCT_SIZE_UP_TO(ferro_engine_memory_stats, allocations),
                                         "ferro_runtime_engine_memory", "out");
        const auto s = runtime->runtime.engine(engine)->memory_stats();
        const uint32_t size = out->struct_size;
        out->reserved = 0;
        out->live_buffers = s.live_buffers;
        out->live_bytes = s.live_bytes;
        out->allocations = s.allocations;
        if (FERRO_HAS_FIELD(out, ferro_engine_memory_stats, peak_bytes)) out->peak_bytes = s.peak_bytes;
        out->struct_size = size;
    });
}

FERRO_API ferro_status ferro_runtime_engine_memory_reset_peak(const ferro_runtime* runtime, const char* engine) {
    return ferro::host::guard([&] {
        require(runtime, "ferro_runtime_engine_memory_reset_peak", "runtime");
        require(engine, "ferro_runtime_engine_memory_reset_peak", "engine");
        runtime->runtime.engine(engine)->reset_peak();
    });
}

FERRO_API void ferro_runtime_plan_cache_clear(ferro_runtime* runtime) {
    if (runtime != nullptr) runtime->runtime.clear_plans();
}

FERRO_API ferro_status ferro_op_examples(ferro_runtime* runtime, const char* op, const char* engine, ferro_dtype dtype,
                                         ferro_example* out, uint32_t capacity, uint32_t* n_out) {
    return ferro::host::guard([&] {
        const char* fn = "ferro_op_examples";
        require(runtime, fn, "runtime");
        require(op, fn, "op");
        require(engine, fn, "engine");
        require(n_out, fn, "n_out");
        if (capacity > 0) require(out, fn, "out");
        *n_out = 0;
        const ferro::host::SnapshotPtr snap = runtime->runtime.snapshot();
        const auto entry = snap->ops.find(op);
        if (entry == snap->ops.end())
            throw ferro::host::Error(FERRO_NOT_FOUND, fmt::format("{}: {}", fn, snap->missing_op_message(op)));
        if (snap->engines.find(engine) == snap->engines.end()) {
            throw ferro::host::Error(FERRO_NOT_FOUND, fmt::format("{}: no engine named '{}'", fn, engine));
        }
        const ferro::host::FamilySlot& family = snap->families.at(entry->second.family_id);
        // The cpu engine's module first: every family has its reference implementation there.
        const ferro::host::Module* module = nullptr;
        auto consider = [&](const std::vector<ferro::host::ModuleSlot>& slots) {
            for (const auto& slot : slots) {
                if (module != nullptr || !slot.module) continue;
                const ferro_module_iface& iface = slot.module->iface();
                if (FERRO_HAS_FIELD(&iface, ferro_module_iface, examples) && iface.examples != nullptr)
                    module = slot.module.get();
            }
        };
        if (auto cpu = family.modules.find("cpu"); cpu != family.modules.end()) consider(cpu->second);
        for (const auto& [name, slots] : family.modules) consider(slots);
        if (module == nullptr) return;
        std::fill(out, out + capacity, ferro_example{});
        // On failure, whatever inputs the hook made so far are released here, not leaked.
        auto release_all = [&] {
            for (uint32_t i = 0; i < capacity; ++i) {
                for (ferro_tensor t : out[i].inputs) ferro_tensor_release(t);
                out[i] = ferro_example{};
            }
        };
        ferro_examples_args args{sizeof args, entry->second.index, dtype, capacity, engine, out, 0, 0};
        ferro_status st = nullptr;
        try {
            st = module->iface().examples(module->self(), runtime->runtime.host_api(), &args);
        } catch (...) {
            release_all();
            throw ferro::host::Error(FERRO_INTERNAL,
                                     fmt::format("{}: the examples hook of '{}' threw an exception; no exception may "
                                                 "cross the plugin ABI",
                                                 fn, module->provider()));
        }
        if (st != nullptr) release_all();
        ferro::host::throw_if_error(st);
        if (args.n_examples > capacity) {
            release_all();
            throw ferro::host::Error(FERRO_INTERNAL, fmt::format("{}: '{}' wrote {} examples into room for {}", fn,
                                                                 module->provider(), args.n_examples, capacity));
        }
        for (uint32_t i = 0; i < args.n_examples; ++i) {
            if (out[i].n_inputs > FERRO_EXAMPLE_MAX_INPUTS || out[i].n_attrs > FERRO_EXAMPLE_MAX_ATTRS) {
                release_all();
                throw ferro::host::Error(
                    FERRO_INTERNAL,
                    fmt::format("{}: '{}' example {} has {} inputs and {} attributes (at most {} and {})", fn, module->provider(),
                                i, out[i].n_inputs, out[i].n_attrs, FERRO_EXAMPLE_MAX_INPUTS, FERRO_EXAMPLE_MAX_ATTRS));
            }
        }
        *n_out = args.n_examples;
    });
}
