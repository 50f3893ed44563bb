// libferro_einsum.so: the einsum family. Its one module works on every engine: plans are
// programs of engine primitives (program.hpp) run by a session executor, so the family needs
// nothing from an engine beyond the primitive set and the dtype.
#include "einsum.hpp"

#include <ferro/plugin.hpp>
#include <ferro/schema.hpp>
#include <ferro/rules.hpp>

#include <algorithm>
#include <memory>
#include <string>

namespace ferro::einsum {
namespace {

// ---- einsum.einsum ----
ferro_status execute_einsum(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] { run(*static_cast<const Program*>(self), host, *args); });
}
void destroy_program(void* self) { delete static_cast<Program*>(self); }
constexpr ferro_plan_iface einsum_iface{sizeof(ferro_plan_iface), 0, execute_einsum, nullptr, destroy_program};

// ---- einsum.path: the plan holds the answer; executing writes it out ----
struct PathAnswer {
    Path path;
    PathCost cost;
};
ferro_status execute_path(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] {
        const auto& answer = *static_cast<const PathAnswer*>(self);
        const auto fill = [&](const ferro_tensor_view& out, int64_t element, ferro_scalar value) {
            ferro_tensor_view v = out;
            v.ndim = 0;
            v.byte_offset += static_cast<uint64_t>(element) * 8;
            if (v.data != nullptr) v.data = static_cast<char*>(v.data) + element * 8;
            const ferro_fill_args f{sizeof f, 0, v, value};
            plugin::check(host, host->session_fill(args->session, &f));
        };
        for (size_t s = 0; s < answer.path.size(); ++s) {
            fill(args->outputs[0], static_cast<int64_t>(2 * s), {0, 0, answer.path[s].first});
            fill(args->outputs[0], static_cast<int64_t>(2 * s + 1), {0, 0, answer.path[s].second});
        }
        fill(args->outputs[1], 0, {answer.cost.flops, 0, 0});
        fill(args->outputs[2], 0, {answer.cost.largest, 0, 0});
    });
}
void destroy_path(void* self) { delete static_cast<PathAnswer*>(self); }
constexpr ferro_plan_iface path_iface{sizeof(ferro_plan_iface), 0, execute_path, nullptr, destroy_path};

// A module per engine: it remembers the engine's dtypes to decline the others with a reason.
struct Module {
    std::string engine;
    std::vector<ferro_dtype> dtypes;
};

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        const auto& module = *static_cast<const Module*>(self);
        const std::span<const ferro_signature> in(args->inputs, args->n_inputs);
        const ferro_dtype dtype = result_dtype(in);
        if (std::find(module.dtypes.begin(), module.dtypes.end(), dtype) == module.dtypes.end()) {
            plugin::write_reason(args->decline_reason, args->decline_capacity,
                                 std::string("engine ") + module.engine + " has no " + plugin::dtype_attr_name(dtype) +
                                     " kernels");
            return;
        }
        const Expression e = expression_of(args->attrs, in);
        const PathOptions options = path_options_of(args->attrs, static_cast<int>(args->n_inputs));
        if (args->op_index == static_cast<uint32_t>(Op::path)) {
            std::vector<std::span<const int64_t>> shapes;
            for (const auto& s : in) shapes.push_back(plugin::shape_of(s));
            const Network net = network_of(e, label_sizes(e, shapes));
            auto answer = std::make_unique<PathAnswer>();
            answer->path = choose_path(net, options);
            answer->cost = path_cost(net, answer->path);
            out->retained_bytes = sizeof(PathAnswer) + answer->path.size() * sizeof(answer->path[0]);
            out->iface = &path_iface;
            out->self = answer.release();
            return;
        }
        std::unique_ptr<Program> program;
        if (args->op_index == static_cast<uint32_t>(Op::steps)) {
            program = std::make_unique<Program>(compile_steps(e, in, options));  // its workspace is the output
        } else {
            int64_t* strides = FERRO_HAS_FIELD(args, ferro_prepare_args, output_strides) ? args->output_strides : nullptr;
            program = std::make_unique<Program>(compile(e, in, options, strides));
            out->workspace_bytes = program->workspace_bytes;
        }
        if (host->log_enabled(host, FERRO_LOG_DEBUG)) {
            plugin::log(host, FERRO_LOG_DEBUG, "einsum",
                        std::to_string(e.inputs.size()) + " operands: " + std::to_string(program->steps.size()) +
                            " primitive steps, " + std::to_string(program->cost.flops) + " flops, workspace " +
                            std::to_string(program->workspace_bytes >> 20) + " MiB");
        }
        out->retained_bytes = sizeof(Program) + program->steps.size() * (sizeof(Step) + 9 * 3 * sizeof(int64_t));
        out->iface = &einsum_iface;
        out->self = program.release();
    });
}

void destroy_module(void* self) { delete static_cast<Module*>(self); }

// Sample calls (ferro-inspect check): a matrix product, a batched one, a diagonal, and a
// three-operand chain whose path the optimiser chooses; einsum.path and einsum.steps get the chain.
ferro_status examples(void*, const ferro_host_api* host, ferro_examples_args* args) {
    return plugin::guard(host, [&] {
        struct Sample {
            const char* subscripts;
            std::initializer_list<std::initializer_list<int64_t>> shapes;
            const char* what;
        };
        static const Sample samples[] = {
            {"ij,jk->ik", {{3, 4}, {4, 5}}, "matrix product"},
            {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 2}}, "batched matrix product"},
            {"ii->i", {{4, 4}}, "diagonal"},
            {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}, "three-operand chain"},
        };
        const plugin::Rules r(host);
        const bool path = args->op_index != static_cast<uint32_t>(Op::einsum);  // path, steps: the chain
        int64_t seed = 41;
        for (size_t i = path ? 3 : 0; i < std::size(samples) && args->n_examples < args->capacity; ++i) {
            ferro_example& e = args->examples[args->n_examples];
            e = {};
            for (const auto& shape : samples[i].shapes) {
                e.inputs[e.n_inputs++] = r.rand({shape.begin(), shape.size()}, args->dtype, seed++, args->engine).release();
            }
            e.attrs[e.n_attrs++] = plugin::attr_str("subscripts", samples[i].subscripts);
            e.what = samples[i].what;
            ++args->n_examples;
        }
    });
}

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface), 0, prepare, destroy_module, examples};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        auto module = std::make_unique<Module>();
        module->engine = args->target->name;
        if (const ferro_device_props* props = args->target->props) {
            module->dtypes.assign(props->dtypes, props->dtypes + std::min<uint32_t>(props->n_dtypes, 16));
        }
        out->iface = &module_iface;
        out->self = module.release();
    });
}

ferro_status query(const ferro_host_api*, const ferro_plugin_desc** out) {
    static const plugin::OneFamilyPlugin desc(
        "einsum", "0.1.0", "einsum family: one module for every engine, built on the engine primitives",
        "einsum over any number of operands: contraction-path optimisers and pairwise gemm on any engine",
        static_cast<uint32_t>(Op::count), schemas(), create_module);
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::einsum

FERRO_PLUGIN_EXPORT(ferro::einsum::query)
