// libferro_einsum.so: the einsum family. Its one module works on every engine: plans are
// programs of engine primitives (program.hpp) run by a session executor, so the family needs
// nothing from an engine beyond the primitive set and the dtype.
#include "einsum.hpp"

#include <ferro/cpu_context.h>
#include <ferro/plugin.hpp>
#include <ferro/rules.hpp>
#include <ferro/schema.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <utility>

namespace ferro::einsum {
namespace {

// ---- einsum.einsum ----
ferro_status execute_einsum(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] { run(*static_cast<const Program*>(self), host, *args); });
}
void destroy_program(void* self) { delete static_cast<Program*>(self); }
constexpr ferro_plan_iface einsum_iface{sizeof(ferro_plan_iface), 0, execute_einsum, nullptr, destroy_program};

// Writes `value` to element `element` of a 1-D tensor of 8-byte elements (an f64 or i64 output),
// through the session: the output may live on any engine.
void fill_element(const ferro_host_api* host, const ferro_exec_args& args, const ferro_tensor_view& out, int64_t element,
                  ferro_scalar value) {
    ferro_tensor_view v = out;
    v.ndim = 0;
    v.byte_offset += static_cast<uint64_t>(element) * 8;
    if (v.data != nullptr) v.data = static_cast<char*>(v.data) + element * 8;
    const ferro_fill_args f{sizeof f, 0, v, value};
    plugin::check(host, host->session_fill(args.session, &f));
}

// A path as opt_einsum's linear pairs, flat: [i0, j0, i1, j1, ...] (an i64 output).
void write_path(const ferro_host_api* host, const ferro_exec_args& args, const ferro_tensor_view& out, const Path& path) {
    for (size_t s = 0; s < path.size(); ++s) {
        fill_element(host, args, out, static_cast<int64_t>(2 * s), {0, 0, path[s].first});
        fill_element(host, args, out, static_cast<int64_t>(2 * s + 1), {0, 0, path[s].second});
    }
}

// ---- einsum.einsum under a memory limit or a slice count: slice by slice ----

// Calls comm.allreduce on `x` (into `x` itself when in_place), the runtime's communicator's.
plugin::TensorRef allreduce(const ferro_host_api* host, ferro_tensor x, const char* op, bool in_place) {
    ferro_op allreduce = nullptr;
    plugin::check(host, host->op_find(host, "comm.allreduce", &allreduce));
    const ferro_named_attr attrs[1] = {plugin::attr_str("op", op)};
    ferro_tensor out = nullptr;
    ferro_op_call_args call{};
    call.struct_size = sizeof call;
    call.n_attrs = 1;
    call.attrs = attrs;
    call.n_inputs = 1;
    call.inputs = &x;
    call.outputs_capacity = 1;
    call.outputs = &out;
    if (in_place) call.into = &x, call.n_into = 1;
    plugin::check(host, host->op_call(host, allreduce, &call));
    return plugin::TensorRef(host, out);
}

// Every rank must run the same plan (a path search under max_seconds may differ between
// processes): one MIN allreduce of (digest, -digest) gives its least and greatest value.
void check_same_plan(const ferro_host_api* host, uint64_t digest) {
    const int64_t d = static_cast<int64_t>(digest >> 1), both[2] = {d, -d}, shape[1] = {2};
    ferro_tensor t = nullptr;
    plugin::check(host, host->tensor_from_host(host, "cpu", FERRO_DTYPE_I64, 1, shape, both, &t));
    const plugin::TensorRef mine(host, t);
    const plugin::TensorRef reduced = allreduce(host, mine.get(), "min", false);
    int64_t got[2] = {};
    plugin::check(host, host->tensor_to_host(reduced.get(), got, sizeof got));
    if (got[0] != -got[1]) {
        throw plugin::Error(FERRO_FAILED_PRECONDITION,
                            "einsum: distribute: the ranks planned different sliced contractions (a path search under "
                            "max_seconds can differ between processes); give every rank the same path (path or order), or "
                            "no max_seconds");
    }
}

// This rank's share of the slices, contiguous (run_slices leaves zeros in the parts other ranks
// compute), then the allreduce sums every rank's into the whole.
void run_distributed(const SlicedProgram& p, const ferro_host_api* host, const ferro_exec_args& args) {
    check_same_plan(host, p.digest);
    const int64_t n = p.slicing.slices;
    run_slices(p, host, args, n * p.rank / p.ranks, n * (p.rank + 1) / p.ranks);
    allreduce(host, args.outputs[0].tensor, "sum", true);
}

ferro_status execute_sliced(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] {
        const auto& p = *static_cast<const SlicedProgram*>(self);
        if (p.ranks > 1) {
            run_distributed(p, host, *args);
        } else {
            run_slices(p, host, *args, 0, p.slicing.slices);
        }
    });
}
void destroy_sliced(void* self) { delete static_cast<SlicedProgram*>(self); }
constexpr ferro_plan_iface sliced_iface{sizeof(ferro_plan_iface), 0, execute_sliced, nullptr, destroy_sliced};

// The program for a call: the plain one, or a sliced one when memory_limit is below the plain
// one's workspace or slices asks for more than one. The plain one lays its output out as its
// last step writes it (into output_strides, when given); a sliced one writes it row-major.
struct Planned {
    std::unique_ptr<Program> plain;
    std::unique_ptr<SlicedProgram> sliced;
};
Planned plan_einsum(const Expression& e, std::span<const ferro_signature> in, const PathOptions& options,
                    const SliceOptions& slicing, int64_t* output_strides) {
    std::vector<int64_t> strides(FERRO_MAX_NDIM, 1);
    if (output_strides != nullptr) std::copy(output_strides, output_strides + FERRO_MAX_NDIM, strides.begin());
    Planned planned;
    planned.plain = std::make_unique<Program>(compile(e, in, options, strides.data()));
    const Program& plain = *planned.plain;
    const bool over = slicing.memory_limit > 0 && plain.workspace_bytes > slicing.memory_limit;
    const std::vector<int64_t> sizes = label_sizes(e, shapes_of(in));
    const bool empty = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
    if (!(over || slicing.min_slices > 1) || empty) {
        if (output_strides != nullptr) std::copy(strides.begin(), strides.end(), output_strides);
        return planned;
    }
    // The fewest flops' path, and (unless the path was given) the smallest intermediates' one,
    // which may need fewer slices or none: the cheaper once sliced.
    std::vector<Path> paths{plain.path};
    if (!options.has_explicit_path && options.optimize != "greedy") {
        PathOptions smallest = options;
        smallest.objective = smallest.random.objective = Objective::size;
        Path path = choose_path(network_of(e, sizes), smallest);
        if (path != plain.path) paths.push_back(std::move(path));
    }
    for (const Path& path : paths) {
        try {
            auto sliced = std::make_unique<SlicedProgram>(compile_sliced(e, in, path, slicing, plain.workspace_bytes));
            if (!planned.sliced || sliced->slicing.cost() < planned.sliced->slicing.cost()) planned.sliced = std::move(sliced);
        } catch (const plugin::Error&) {
            if (&path == &paths.back() && !planned.sliced) throw;  // no path fits: the last one's error
        }
    }
    planned.plain.reset();
    return planned;
}

// ---- einsum.einsum recorded by the tape (ABI 1.8): the program keeps its steps' values in
// residual 0 and writes its path to residual 1, so the VJP rule lays the values out as it did.
struct RecordedProgram {
    Program program;
    ferro_signature residuals[2];  // the values (1-D, the program's dtype), the path (i64)
};
ferro_status execute_recorded(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] {
        const auto& recorded = *static_cast<const RecordedProgram*>(self);
        run(recorded.program, host, *args);
        write_path(host, *args, args->residuals[1], recorded.program.path);
    });
}
void destroy_recorded(void* self) { delete static_cast<RecordedProgram*>(self); }
constexpr ferro_plan_iface recorded_iface{sizeof(ferro_plan_iface), 0, execute_recorded, nullptr, destroy_recorded};

// Whether a recorded einsum keeps its steps' values: where the VJP rule walks the contraction
// tree (kTreeMinOperands operands or more, two or more of them recorded) and the values are the
// tree's, which needs every label of size 1 or more and no operand broadcasting a label (size 1
// or stride 0: the program sums such a label early or leaves it out).
bool keeps_values(const Expression& e, std::span<const ferro_signature> in, uint64_t recorded_inputs) {
    if (in.size() < kTreeMinOperands) return false;
    size_t wanted = 0;
    for (size_t i = 0; i < in.size(); ++i) wanted += (recorded_inputs & FERRO_MASK_BIT(i)) != 0 ? 1 : 0;
    if (wanted < 2) return false;
    const std::vector<std::span<const int64_t>> shapes = shapes_of(in);
    const std::vector<int64_t> sizes = label_sizes(e, shapes);
    if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return false;
    for (size_t i = 0; i < in.size(); ++i) {
        for (size_t ax = 0; ax < e.inputs[i].size(); ++ax) {
            const bool broadcast = shapes[i][ax] == 1 || in[i].strides[ax] == 0;
            if (broadcast && sizes[static_cast<size_t>(e.inputs[i][ax])] != 1) return false;
        }
    }
    return true;
}

std::unique_ptr<RecordedProgram> compile_recorded_plan(const Expression& e, std::span<const ferro_signature> in,
                                                       const PathOptions& options, int64_t* output_strides) {
    auto recorded = std::make_unique<RecordedProgram>();
    recorded->program = compile_recorded(e, in, options, output_strides);
    const Program& p = recorded->program;
    ferro_signature& values = recorded->residuals[0];
    values = {};
    values.struct_size = sizeof values;
    values.dtype = p.dtype;
    values.ndim = 1;
    values.shape[0] = static_cast<int64_t>(p.residual_bytes / (FERRO_DTYPE_BITS(p.dtype) / 8));
    values.strides[0] = 1;
    ferro_signature& path = recorded->residuals[1];
    path = values;
    path.dtype = FERRO_DTYPE_I64;
    path.shape[0] = static_cast<int64_t>(2 * p.path.size());
    return recorded;
}

// ---- einsum.path: the plan holds the answer; executing writes it out ----
struct PathAnswer {
    Path path;
    PathCost cost;
    std::vector<int64_t> keys;  // every label's
    std::vector<bool> sliced;   // per label
    int64_t slices = 1;
    double sliced_flops = 0;
    uint64_t workspace_bytes = 0;
};
ferro_status execute_path(void* self, const ferro_host_api* host, const ferro_exec_args* args) {
    return plugin::guard(host, [&] {
        const auto& answer = *static_cast<const PathAnswer*>(self);
        const ferro_tensor_view* out = args->outputs;
        write_path(host, *args, out[0], answer.path);
        fill_element(host, *args, out[1], 0, {answer.cost.flops, 0, 0});
        fill_element(host, *args, out[2], 0, {answer.cost.largest, 0, 0});
        for (size_t l = 0; l < answer.keys.size(); ++l) {
            fill_element(host, *args, out[3], static_cast<int64_t>(2 * l), {0, 0, answer.keys[l]});
            fill_element(host, *args, out[3], static_cast<int64_t>(2 * l + 1), {0, 0, answer.sliced[l] ? 1 : 0});
        }
        fill_element(host, *args, out[4], 0, {0, 0, answer.slices});
        fill_element(host, *args, out[5], 0, {answer.sliced_flops, 0, 0});
        fill_element(host, *args, out[6], 0, {static_cast<double>(answer.workspace_bytes), 0, 0});
    });
}
std::unique_ptr<PathAnswer> answer_path(const Expression& e, std::span<const ferro_signature> in, const PathOptions& options,
                                        const SliceOptions& slicing) {
    auto answer = std::make_unique<PathAnswer>();
    answer->keys = e.keys;
    answer->sliced.assign(e.keys.size(), false);
    const Planned planned = plan_einsum(e, in, options, slicing, nullptr);
    if (planned.plain) {
        answer->path = planned.plain->path;
        answer->cost = planned.plain->cost;
        answer->sliced_flops = answer->cost.flops;
        answer->workspace_bytes = planned.plain->workspace_bytes;
        return answer;
    }
    const SlicedProgram& p = *planned.sliced;
    answer->path = p.direct.path;
    answer->cost = p.unsliced;
    for (int l : p.slicing.labels) answer->sliced[static_cast<size_t>(l)] = true;
    answer->slices = p.slicing.slices;
    answer->sliced_flops = p.slicing.flops;
    answer->workspace_bytes = p.workspace_bytes;
    return answer;
}
void destroy_path(void* self) { delete static_cast<PathAnswer*>(self); }
constexpr ferro_plan_iface path_iface{sizeof(ferro_plan_iface), 0, execute_path, nullptr, destroy_path};

// A module per engine: it remembers the engine's dtypes to decline the others with a reason,
// and the runtime's rank and size once a distributed call asked (comm.info).
struct Module {
    std::string engine;
    bool host_memory = false;  // the cpu engine's context: sessions run as they are enqueued
    int64_t threads = 1;       // the engine's thread budget
    std::vector<ferro_dtype> dtypes;
    mutable std::mutex mutex;
    mutable int64_t rank = -1, size = 0;

    std::pair<int64_t, int64_t> rank_size(const ferro_host_api* host) const {
        const std::lock_guard lock(mutex);
        if (rank < 0) {
            ferro_op info = nullptr;
            plugin::check(host, host->op_find(host, "comm.info", &info));
            const plugin::TensorRef answer = plugin::Rules(host).call(info, std::span<const ferro_tensor>{}, {});
            int64_t rs[2] = {};
            plugin::check(host, host->tensor_to_host(answer.get(), rs, sizeof rs));
            rank = rs[0];
            size = rs[1];
        }
        return {rank, size};
    }
};

uint64_t retained_bytes(const Program& p) { return sizeof(Program) + p.steps.size() * (sizeof(Step) + sizeof(int64_t) * 9 * 3); }

void log_program(const ferro_host_api* host, const Expression& e, const Program& p, const char* mode) {
    if (!host->log_enabled(host, FERRO_LOG_DEBUG)) return;
    plugin::log(host, FERRO_LOG_DEBUG, "einsum",
                std::to_string(e.inputs.size()) + " operands: " + std::to_string(p.steps.size()) + " primitive steps, " +
                    std::to_string(p.cost.flops) + " flops, workspace " + std::to_string(p.workspace_bytes >> 20) + " MiB" +
                    mode);
}

ferro_status prepare(void* self, const ferro_host_api* host, const ferro_prepare_args* args, ferro_plan_instance* out) {
    return plugin::guard(host, [&] {
        const auto& module = *static_cast<const Module*>(self);
        const std::span<const ferro_signature> in(args->inputs, args->n_inputs);
        const ferro_dtype dtype = result_dtype(in);
        if (std::find(module.dtypes.begin(), module.dtypes.end(), dtype) == module.dtypes.end()) {
            plugin::write_reason(
                args->decline_reason, args->decline_capacity,
                std::string("engine ") + module.engine + " has no " + plugin::dtype_attr_name(dtype) + " kernels");
            return;
        }
        const Expression e = expression_of(args->attrs, in);
        const PathOptions options = path_options_of(args->attrs, static_cast<int>(args->n_inputs));
        SliceOptions slicing = slice_options_of(args->attrs);
        int64_t rank = 0, ranks = 1;
        if (slicing.distribute) {
            std::tie(rank, ranks) = module.rank_size(host);
            if (ranks > 1 && !module.host_memory) {
                throw plugin::Error(FERRO_INVALID_ARGUMENT,
                                    "einsum: distribute needs operands on the cpu engine (the comm "
                                    "family's mpi module works on host memory); they are on " +
                                        module.engine);
            }
            slicing.min_slices = std::max(slicing.min_slices, ranks);
        }
        if (args->op_index == static_cast<uint32_t>(Op::path)) {
            auto answer = answer_path(e, in, options, slicing);
            out->retained_bytes = sizeof(PathAnswer) + answer->path.size() * sizeof(answer->path[0]) + answer->keys.size() * 9;
            out->iface = &path_iface;
            out->self = answer.release();
            return;
        }
        int64_t* strides = FERRO_HAS_FIELD(args, ferro_prepare_args, output_strides) ? args->output_strides : nullptr;
        const uint64_t recorded_inputs = FERRO_HAS_FIELD(args, ferro_prepare_args, recorded_inputs) ? args->recorded_inputs : 0;
        if (slicing.memory_limit > 0 || slicing.min_slices > 1) {
            // No values kept for the VJP under a limit: its rules contract under the limit too.
            Planned planned = plan_einsum(e, in, options, slicing, strides);
            if (planned.sliced) {
                SlicedProgram& p = *planned.sliced;
                if (ranks > 1) p.rank = rank, p.ranks = ranks, p.digest = plan_digest(p);
                if (module.host_memory) {
                    const ferro_signature& o = args->outputs[0];
                    int64_t elements = 1;
                    for (int32_t d = 0; d < o.ndim; ++d) elements *= o.shape[d];
                    plan_workers(p, module.threads, slicing.memory_limit,
                                 static_cast<uint64_t>(elements) * (FERRO_DTYPE_BITS(o.dtype) / 8));
                }
                log_program(host, e, p.direct,
                            (", " + std::to_string(p.slicing.slices) + " slices" +
                             (p.workers > 1 ? ", " + std::to_string(p.workers) + " at once" : std::string()) +
                             ", working memory " + std::to_string(p.workspace_bytes) + " bytes")
                                .c_str());
                out->workspace_bytes = p.workspace_bytes;
                out->retained_bytes = sizeof(SlicedProgram) + retained_bytes(p.direct) + retained_bytes(p.partial);
                out->iface = &sliced_iface;
                out->self = planned.sliced.release();
                return;
            }
            out->workspace_bytes = planned.plain->workspace_bytes;
            log_program(host, e, *planned.plain, "");
            out->retained_bytes = retained_bytes(*planned.plain);
            out->iface = &einsum_iface;
            out->self = planned.plain.release();
            return;
        }
        if (args->op_index == static_cast<uint32_t>(Op::einsum) && keeps_values(e, in, recorded_inputs)) {
            auto recorded = compile_recorded_plan(e, in, options, strides);
            const Program& p = recorded->program;
            const std::string kept = ", steps' values kept (recorded): " + std::to_string(p.residual_bytes >> 20) + " MiB";
            log_program(host, e, p, kept.c_str());
            out->workspace_bytes = p.workspace_bytes;
            out->retained_bytes = sizeof(RecordedProgram) + retained_bytes(p);
            out->n_residuals = 2;
            out->residuals = recorded->residuals;
            out->iface = &recorded_iface;
            out->self = recorded.release();
            return;
        }
        auto program = std::make_unique<Program>(compile(e, in, options, strides));
        out->workspace_bytes = program->workspace_bytes;
        log_program(host, e, *program, "");
        out->retained_bytes = retained_bytes(*program);
        out->iface = &einsum_iface;
        out->self = program.release();
    });
}

void destroy_module(void* self) { delete static_cast<Module*>(self); }

// Sample calls (ferro-inspect check): a matrix product, a batched one, a diagonal, and a
// three-operand chain whose path the optimiser chooses; einsum.path gets the chain.
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
        const bool path = args->op_index == static_cast<uint32_t>(Op::path);
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

constexpr ferro_module_iface module_iface{sizeof(ferro_module_iface),  0, prepare, destroy_module, examples,
                                          FERRO_MODULE_KEEPS_RESIDUALS};

ferro_status create_module(const ferro_host_api* host, const ferro_module_create_args* args, ferro_module_instance* out) {
    return plugin::guard(host, [&] {
        auto module = std::make_unique<Module>();
        module->engine = args->target->name;
        module->host_memory =
            args->target->context_abi != nullptr && std::string(args->target->context_abi) == FERRO_CPU_CONTEXT_ABI;
        if (FERRO_HAS_FIELD(args->target, ferro_engine_target, threads)) {
            module->threads = std::max<int64_t>(1, args->target->threads);
        }
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
        static_cast<uint32_t>(Op::count), schemas(), create_module, nullptr, kRuleCalls);
    *out = desc.get();
    return nullptr;
}

}  // namespace
}  // namespace ferro::einsum

FERRO_PLUGIN_EXPORT(ferro::einsum::query)
