#include "capture/fusion.hpp"

#include "dispatch/session.hpp"
#include "ops/core_family.hpp"
#include "ops/op_util.hpp"
#include "support/env.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace ferro::host {
namespace {

// The plan of a fused step: the program the engine runs, with its inputs broadcast to the
// outputs' shape at each run (their layouts may differ from run to run: symbolic axes).
class FusedKernel {
public:
    ferro_dtype dtype = 0;
    uint32_t n_temps = 0;
    std::vector<ferro_fused_instr> instrs;

    ferro_status run(const ferro_exec_args& a) const {
        const ferro_tensor_view& out = a.outputs[0];
        const std::span<const int64_t> shape(out.shape, static_cast<size_t>(out.ndim));
        std::array<ferro_tensor_view, FERRO_FUSED_MAX_OPERANDS> inputs;
        std::array<Dims, FERRO_FUSED_MAX_OPERANDS> strides;  // of broadcast inputs
        for (uint32_t i = 0; i < a.n_inputs; ++i) {
            inputs[i] = a.inputs[i];
            ferro_tensor_view& in = inputs[i];
            if (in.ndim == out.ndim && std::equal(in.shape, in.shape + in.ndim, out.shape)) continue;
            strides[i] = ops::broadcast_strides({in.shape, static_cast<size_t>(in.ndim)}, in.strides, shape);
            in.ndim = out.ndim;
            in.shape = out.shape;
            in.strides = strides[i].data();
        }
        const ferro_fused_args args{sizeof args,   dtype,     a.n_inputs,
                                    a.n_outputs,   n_temps,   static_cast<uint32_t>(instrs.size()),
                                    inputs.data(), a.outputs, instrs.data()};
        return trusted::run(a.session, args, &ferro_engine_iface::elementwise_fused);
    }
};

ferro_status execute_fused(void* self, const ferro_host_api*, const ferro_exec_args* args) {
    return static_cast<const FusedKernel*>(self)->run(*args);
}
void destroy_fused(void* self) { delete static_cast<FusedKernel*>(self); }
constexpr ferro_plan_iface kFusedIface{sizeof(ferro_plan_iface), 0, execute_fused, nullptr, destroy_fused};

bool engine_fuses(const Engine& e) {
    const ferro_engine_iface& f = e.iface();
    return FERRO_HAS_FIELD(&f, ferro_engine_iface, elementwise_fused) && f.elementwise_fused != nullptr;
}

// The kernel of a step that may join a fused run: one output, no residuals or workspace, a core
// unary or binary kernel in one dtype, on an engine that runs fused programs.
std::optional<ops::ElementwiseKernel> fusable(const PlanEntry& e) {
    if (!e.plan || !e.plan->built_in() || e.plan->outputs().size() != 1 || !e.plan->residuals().empty() ||
        e.plan->workspace_bytes() != 0 || !engine_fuses(*e.engine)) {
        return std::nullopt;
    }
    return ops::elementwise_kernel(*e.plan);
}

// A run of steps [first, last] and what it reads and writes.
struct Run {
    size_t first = 0, last = 0;
    std::vector<ValueRef> inputs;  // values from outside the run, in the order first read
    std::vector<size_t> outputs;   // steps whose value is read after the run (or is a program output)
};

class Fuser {
public:
    Fuser(const Program& p, const std::vector<EntryPtr>& entries) : p_(p), entries_(entries) {
        const size_t n = p.steps.size();
        kernels_.resize(n);
        last_reader_.assign(n, -1);
        program_output_.assign(n, false);
        for (size_t s = 0; s < n; ++s) {
            kernels_[s] = fusable(*entries[s]);
            for (const ValueRef& v : p.steps[s].inputs) {
                if (v.kind == ValueRef::Kind::step) last_reader_[v.index] = static_cast<int64_t>(s);
            }
        }
        for (const ValueRef& v : p.outputs) {
            if (v.kind == ValueRef::Kind::step) program_output_[v.index] = true;
        }
    }

    // The runs of two or more steps that fuse, in program order.
    std::vector<Run> runs() const {
        std::vector<Run> found;
        for (size_t s = 0; s < p_.steps.size();) {
            Run best = run_of(s, s);
            for (size_t t = s + 1; t < p_.steps.size() && joins(s, t); ++t) {
                Run longer = run_of(s, t);
                const size_t operands = longer.inputs.size() + longer.outputs.size();
                if (operands > FERRO_FUSED_MAX_OPERANDS || operands + kernel(longer)->n_temps > FERRO_FUSED_MAX_VALUES) break;
                best = std::move(longer);
            }
            if (best.last > best.first) found.push_back(best);
            s = best.last + 1;
        }
        return found;
    }

    // The program the engine runs for `run`: inputs, then outputs, then temporaries reused once
    // their value is dead.
    std::unique_ptr<FusedKernel> kernel(const Run& run) const {
        auto k = std::make_unique<FusedKernel>();
        k->dtype = kernels_[run.first]->dtype;
        const auto n_in = static_cast<uint16_t>(run.inputs.size());
        const auto n_out = static_cast<uint16_t>(run.outputs.size());
        std::vector<uint16_t> value(run.last + 1 - run.first);  // of each step of the run
        std::vector<int64_t> last_use(value.size(), -1);        // within the run
        for (size_t s = run.first; s <= run.last; ++s) {
            for (const ValueRef& v : p_.steps[s].inputs) {
                if (inside(run, v)) last_use[v.index - run.first] = static_cast<int64_t>(s);
            }
        }
        std::vector<uint16_t> free_temps;
        uint16_t temps = 0;
        for (size_t s = run.first; s <= run.last; ++s) {
            const ProgramStep& step = p_.steps[s];
            std::array<uint16_t, 2> operands{};
            for (size_t i = 0; i < step.inputs.size(); ++i) {
                const ValueRef& v = step.inputs[i];
                operands[i] = inside(run, v) ? value[v.index - run.first] : index_of(run.inputs, v);
            }
            // A temporary read for the last time here may take the result (in place).
            for (size_t i = 0; i < step.inputs.size(); ++i) {
                const ValueRef& v = step.inputs[i];
                const bool temp = inside(run, v) && operands[i] >= n_in + n_out;
                if (temp && last_use[v.index - run.first] == static_cast<int64_t>(s) &&
                    std::find(free_temps.begin(), free_temps.end(), operands[i]) == free_temps.end()) {
                    free_temps.push_back(operands[i]);
                }
            }
            uint16_t dst;
            if (auto it = std::find(run.outputs.begin(), run.outputs.end(), s); it != run.outputs.end()) {
                dst = static_cast<uint16_t>(n_in + (it - run.outputs.begin()));
            } else if (!free_temps.empty()) {
                dst = free_temps.back();
                free_temps.pop_back();
            } else {
                dst = static_cast<uint16_t>(n_in + n_out + temps++);
            }
            value[s - run.first] = dst;
            const ops::ElementwiseKernel& kernel = *kernels_[s];
            k->instrs.push_back({kernel.kind, kernel.op, dst, operands[0], operands[1], 0});
            if (dst >= n_in + n_out && last_use[s - run.first] < 0) free_temps.push_back(dst);  // read by nothing
        }
        k->n_temps = temps;
        return k;
    }

private:
    static bool inside(const Run& run, const ValueRef& v) {
        return v.kind == ValueRef::Kind::step && v.index >= run.first && v.index <= run.last;
    }
    static uint16_t index_of(const std::vector<ValueRef>& values, const ValueRef& v) {
        const auto it = std::find_if(values.begin(), values.end(), [&](const ValueRef& x) {
            return x.kind == v.kind && x.index == v.index && x.output == v.output;
        });
        return static_cast<uint16_t>(it - values.begin());
    }

    // Whether step t computes in the same dtype, over the same shape, on the same engine as s.
    bool joins(size_t s, size_t t) const {
        if (!kernels_[s] || !kernels_[t] || kernels_[s]->dtype != kernels_[t]->dtype) return false;
        const PlanEntry &a = *entries_[s], &b = *entries_[t];
        return a.engine == b.engine && a.plan->outputs()[0].shape == b.plan->outputs()[0].shape;
    }

    Run run_of(size_t first, size_t last) const {
        Run run{first, last, {}, {}};
        for (size_t s = first; s <= last; ++s) {
            for (const ValueRef& v : p_.steps[s].inputs) {
                if (!inside(run, v) && index_of(run.inputs, v) == run.inputs.size()) run.inputs.push_back(v);
            }
            if (program_output_[s] || last_reader_[s] > static_cast<int64_t>(last)) run.outputs.push_back(s);
        }
        return run;
    }

    const Program& p_;
    const std::vector<EntryPtr>& entries_;
    std::vector<std::optional<ops::ElementwiseKernel>> kernels_;
    std::vector<int64_t> last_reader_;  // the last step reading each step's output
    std::vector<bool> program_output_;
};

// The entry of a fused step: its plan runs `kernel`, with the outputs of the run's steps.
EntryPtr fused_entry(const std::vector<EntryPtr>& entries, const Run& run, std::unique_ptr<FusedKernel> kernel) {
    const PlanEntry& first = *entries[run.first];
    std::vector<OutputSig> outputs;
    for (size_t s : run.outputs) outputs.push_back(entries[s]->plan->outputs()[0]);
    ferro_plan_instance instance{};
    instance.struct_size = sizeof instance;
    instance.self = kernel.release();
    instance.iface = &kFusedIface;
    auto entry = std::make_shared<PlanEntry>(AttrValues{});
    entry->plan = std::make_shared<const CachedPlan>(instance, first.plan->module(), std::move(outputs));
    entry->engine = first.engine;
    entry->op = first.op;
    return entry;
}

}  // namespace

ReplayProgram fuse_elementwise(const ProgramPtr& program, const std::vector<EntryPtr>& entries) {
    const Program& p = *program;
    const Fuser fuser(p, entries);
    // Read at each prepare (not per run), so that a test or a comparison can turn it off.
    const std::vector<Run> runs = env_switch_on("FERRO_FUSE") ? fuser.runs() : std::vector<Run>{};
    if (runs.empty()) return {program, entries};
    auto fused = std::make_shared<Program>();
    fused->runtime = p.runtime;
    fused->inputs = p.inputs;
    fused->constants = p.constants;
    // Where each value of the program is in the fused one (values only a run reads have none).
    std::vector<std::vector<ValueRef>> moved(p.steps.size());
    const auto remap = [&](std::vector<ValueRef> values) {
        for (ValueRef& v : values) {
            if (v.kind == ValueRef::Kind::step) v = moved[v.index][v.output];
        }
        return values;
    };
    auto next_run = runs.begin();
    for (size_t s = 0; s < p.steps.size();) {
        const auto index = static_cast<uint32_t>(fused->steps.size());
        ProgramStep step;
        if (next_run != runs.end() && next_run->first == s) {
            const Run& run = *next_run++;
            const ProgramStep& first = p.steps[run.first];
            step.call = first.call;
            step.backward = first.backward;
            step.inputs = remap(run.inputs);
            step.n_outputs = static_cast<uint32_t>(run.outputs.size());
            for (size_t t = run.first; t <= run.last; ++t) {
                step.fused.push_back(p.steps[t].call->op.name);
                moved[t].resize(1);
            }
            for (uint32_t k = 0; k < step.n_outputs; ++k) {
                step.output_sigs.push_back(p.steps[run.outputs[k]].output_sigs[0]);
                moved[run.outputs[k]][0] = {ValueRef::Kind::step, index, k};
            }
            step.entry = fused_entry(entries, run, fuser.kernel(run));
            s = run.last + 1;
        } else {
            const ProgramStep& original = p.steps[s];
            step.call = original.call;
            step.inputs = remap(original.inputs);
            step.n_outputs = original.n_outputs;
            step.n_residuals = original.n_residuals;
            step.output_sigs = original.output_sigs;
            step.backward = original.backward;
            for (uint32_t k = 0; k < n_values(original); ++k) moved[s].push_back({ValueRef::Kind::step, index, k});
            step.entry = entries[s];
            ++s;
        }
        fused->steps.push_back(std::move(step));
    }
    fused->outputs = remap(p.outputs);
    plan_steps(*fused);
    ReplayProgram out{fused, {}};
    for (const ProgramStep& step : fused->steps) out.entries.push_back(step.entry);
    return out;
}

}  // namespace ferro::host
