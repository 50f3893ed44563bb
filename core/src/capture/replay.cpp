#include "capture/replay.hpp"

#include "capture/program.hpp"
#include "dispatch/invoke.hpp"
#include "runtime/runtime.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

namespace ferro::host {
namespace {

using ValueId = std::pair<uint32_t, uint32_t>;  // (step, output)

constexpr uint64_t kAlign = 64;
constexpr int64_t kAfterRun = std::numeric_limits<int64_t>::max();  // a program output's last use

// First-fit placement of blocks in one arena: a block goes in the lowest gap it fits.
class ArenaPlanner {
public:
    uint64_t take(uint64_t bytes) {
        const uint64_t n = std::max<uint64_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign);
        uint64_t at = 0;
        auto it = live_.begin();
        for (; it != live_.end() && it->first < at + n; ++it) at = it->first + it->second;
        live_.insert(it, {at, n});
        peak_ = std::max(peak_, at + n);
        return at;
    }
    void give_back(uint64_t offset) {
        live_.erase(std::find_if(live_.begin(), live_.end(), [&](const auto& b) { return b.first == offset; }));
    }
    uint64_t peak() const noexcept { return peak_; }

private:
    std::vector<std::pair<uint64_t, uint64_t>> live_;  // (offset, bytes), by offset
    uint64_t peak_ = 0;
};

// The last step each step output is alive at: its last use (plan_steps: the last step reading
// it, its own when none does) or that of anything that may view it (a host op's output: a view,
// a reshape); kAfterRun when it or such a view is a program output (which has no last use).
std::vector<std::vector<int64_t>> lifetimes(const Program& p, std::span<const EntryPtr> entries) {
    const size_t n = p.steps.size();
    std::vector<std::vector<int64_t>> last(n);
    std::vector<std::vector<std::vector<ValueId>>> views_of(n);  // the plan outputs each value may view
    for (size_t s = 0; s < n; ++s) {
        last[s].assign(n_values(p.steps[s]), kAfterRun);
        views_of[s].resize(n_values(p.steps[s]));
    }
    for (size_t s = 0; s < n; ++s) {
        for (const ValueRef& v : p.steps[s].last_uses) last[v.index][v.output] = static_cast<int64_t>(s);
    }
    std::vector<std::vector<int64_t>> alive = last;
    for (size_t s = 0; s < n; ++s) {
        for (uint32_t k = 0; k < n_values(p.steps[s]); ++k) {
            std::vector<ValueId>& roots = views_of[s][k];
            if (entries[s]->plan) {
                roots.emplace_back(s, k);
            } else {
                for (const ValueRef& in : p.steps[s].inputs) {
                    if (in.kind != ValueRef::Kind::step) continue;
                    const std::vector<ValueId>& more = views_of[in.index][in.output];
                    roots.insert(roots.end(), more.begin(), more.end());
                }
                std::sort(roots.begin(), roots.end());
                roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
            }
            for (const auto& [rs, rk] : roots) alive[rs][rk] = std::max(alive[rs][rk], last[s][k]);
        }
    }
    return alive;
}

bool fixed(const MemoryPlan& m, const ValueRef& v) {
    const std::vector<Slot>& outputs = m.steps[v.index].outputs;
    return v.output < outputs.size() && outputs[v.output].kind != Slot::Kind::fresh;
}

}  // namespace

MemoryPlan plan_memory(const Program& p, std::span<const EntryPtr> entries) {
    const size_t n = p.steps.size();
    const std::vector<std::vector<int64_t>> alive = lifetimes(p, entries);
    MemoryPlan m;
    m.steps.resize(n);
    std::vector<ArenaPlanner> planners;
    std::vector<std::vector<std::pair<uint32_t, uint64_t>>> frees(n);  // (arena, offset) freed after each step
    const auto place = [&](const EnginePtr& engine, uint64_t bytes, int64_t until) {
        if (until == kAfterRun) return Slot{};
        m.intermediate_bytes += bytes;
        if (!engine->buffers_are_addresses()) {
            m.run_bytes += bytes;
            return Slot{Slot::Kind::owned, 0, 0};
        }
        auto a = static_cast<uint32_t>(
            std::find_if(m.arenas.begin(), m.arenas.end(), [&](const auto& x) { return x.engine == engine; }) - m.arenas.begin());
        if (a == m.arenas.size()) {
            m.arenas.push_back({engine, 0});
            planners.emplace_back();
        }
        const uint64_t offset = planners[a].take(bytes);
        frees[until].emplace_back(a, offset);
        return Slot{Slot::Kind::arena, a, offset};
    };
    for (size_t s = 0; s < n; ++s) {
        const PlanEntry& e = *entries[s];
        StepMemory& step = m.steps[s];
        if (e.plan) {
            const auto here = static_cast<int64_t>(s);
            for (size_t k = 0; k < n_written(*e.plan); ++k) {
                // Residuals the step does not list as values (its call was not recorded at capture) die here.
                const int64_t until = k < alive[s].size() ? alive[s][k] : here;
                step.outputs.push_back(place(e.engine, written_sig(*e.plan, k).bytes, until));
            }
            if (e.plan->workspace_bytes() > 0) step.workspace = place(e.engine, e.plan->workspace_bytes(), here);
        }
        for (const auto& [a, offset] : frees[s]) planners[a].give_back(offset);
    }
    for (size_t a = 0; a < m.arenas.size(); ++a) {
        m.arenas[a].bytes = planners[a].peak();
        m.run_bytes += m.arenas[a].bytes;
    }
    for (size_t s = 0; s < n; ++s) {
        for (const ValueRef& v : p.steps[s].last_uses) {
            if (!fixed(m, v)) m.steps[s].releases.emplace_back(v.index, v.output);
        }
    }
    return m;
}

namespace {

// A plan step's executor arguments, made once per run state: views of the fixed slots and the
// constants are made then; those of the inputs and of this run's other values at each run.
struct StepCall {
    boost::container::small_vector<ferro_tensor_view, 4> views;  // inputs, outputs, residuals
    ferro_exec_args args{};
    // (view index, value) of the views each run refreshes.
    boost::container::small_vector<std::pair<uint32_t, ValueRef>, 2> refresh;
};

// What one run in flight holds: the arenas, the tensors of the fixed slots over them, and the
// plan steps' executor arguments.
struct RunState {
    std::vector<StoragePtr> arenas;
    std::vector<Outputs> values;  // per step (outputs, then residuals): the fixed slots' tensors, and this run's others
    std::vector<StoragePtr> workspaces;
    std::vector<StepCall> calls;  // sized once: the arguments point into their own views

    RunState(const Program& p, const PreparedProgram& prepared) {
        const MemoryPlan& m = prepared.memory;
        for (const MemoryPlan::Arena& a : m.arenas) arenas.push_back(Storage::allocate(a.engine, a.bytes));
        const size_t n = p.steps.size();
        values.resize(n);
        workspaces.resize(n);
        calls.resize(n);
        for (size_t s = 0; s < n; ++s) {
            const PlanEntry& e = *prepared.replay_entries[s];
            values[s].resize(std::max<size_t>(n_values(p.steps[s]), e.plan ? n_written(*e.plan) : 0));
            if (!e.plan) continue;
            const StepMemory& step = m.steps[s];
            for (size_t k = 0; k < step.outputs.size(); ++k)
                values[s][k] = tensor_at(step.outputs[k], e, written_sig(*e.plan, k));
            if (e.plan->workspace_bytes() > 0) workspaces[s] = storage_at(step.workspace, e, e.plan->workspace_bytes());
            make_call(p, m, s, e);
        }
    }

    StoragePtr storage_at(const Slot& slot, const PlanEntry& e, uint64_t bytes) const {
        if (slot.kind == Slot::Kind::arena) return Storage::place(arenas[slot.arena], slot.offset, bytes);
        return Storage::allocate(e.engine, bytes);
    }
    TensorPtr tensor_at(const Slot& slot, const PlanEntry& e, const OutputSig& sig) const {
        if (slot.kind == Slot::Kind::fresh) return {};
        return wrap_storage(storage_at(slot, e, sig.bytes), sig.dtype, span_of(sig.shape), span_of(sig.strides), 0);
    }

    void make_call(const Program& p, const MemoryPlan& m, size_t s, const PlanEntry& e) {
        StepCall& c = calls[s];
        const ProgramStep& step = p.steps[s];
        const auto add = [&](const TensorPtr& t, const ValueRef& v) {
            if (!t) c.refresh.emplace_back(static_cast<uint32_t>(c.views.size()), v);
            c.views.push_back(t ? view_of(*t) : ferro_tensor_view{});
        };
        for (const ValueRef& v : step.inputs) {
            switch (v.kind) {
                case ValueRef::Kind::input: add({}, v); break;
                case ValueRef::Kind::constant: add(p.constants[v.index], v); break;
                case ValueRef::Kind::step: add(fixed(m, v) ? values[v.index][v.output] : TensorPtr(), v); break;
            }
        }
        for (uint32_t k = 0; k < n_written(*e.plan); ++k) add(values[s][k], {ValueRef::Kind::step, static_cast<uint32_t>(s), k});
        const size_t n_in = step.inputs.size();
        c.args = exec_args(*e.plan, e.attrs.values(), c.views.data(), n_in, c.views.size() - n_in, e.plan->residuals().size(),
                           workspace_view(workspaces[s].get(), e.plan->workspace_bytes()), nullptr);
    }
};

// The session consecutive steps of built-in ops share (their executors enqueue primitives
// unchecked: session.hpp). Ended before anything else runs, so that work stays in order on
// engines whose sessions submit when they end.
class SharedSession {
public:
    ferro_session_impl* on(const EnginePtr& engine) {
        if (session_ && engine_ != engine.get()) end();
        if (!session_) {
            session_.emplace(engine);
            engine_ = engine.get();
        }
        return session_->get();
    }
    void end() {
        if (!session_) return;
        session_->end();
        session_.reset();
    }

private:
    std::optional<Session> session_;
    const Engine* engine_ = nullptr;
};

// Runs a plan step with its arguments.
void run_plan_step(const PlanEntry& e, const ferro_host_api* host, StepCall& c, const StoragePtr& workspace,
                   SharedSession& shared) {
    const CachedPlan& plan = *e.plan;
    if (plan.built_in()) {
        c.args.session = shared.on(e.engine);
        invoke_executor(plan, e.op->name, *e.engine, host, c.args.session, c.args);
        return;
    }
    // A plugin's executor gets a session of its own that lists only its call's buffers.
    shared.end();
    Session session(e.engine);
    for (const ferro_tensor_view& v : c.views) session.allow(*v.tensor->storage);
    if (workspace) session.allow(*workspace);
    c.args.session = session.get();
    invoke_executor(plan, e.op->name, *e.engine, host, session.get(), c.args);
    session.end();
}

}  // namespace

class RunStates {
public:
    std::unique_ptr<RunState> take() {
        std::lock_guard lock(mutex_);
        if (idle_.empty()) return nullptr;
        std::unique_ptr<RunState> s = std::move(idle_.back());
        idle_.pop_back();
        return s;
    }
    void give_back(std::unique_ptr<RunState> s) {
        std::lock_guard lock(mutex_);
        idle_.push_back(std::move(s));
    }

private:
    std::mutex mutex_;
    std::vector<std::unique_ptr<RunState>> idle_;
};

std::shared_ptr<RunStates> make_run_states() { return std::make_shared<RunStates>(); }

Outputs replay(const PreparedProgram& prepared, std::span<ferro_tensor_impl* const> inputs) {
    const Program& p = *prepared.replayed;
    std::unique_ptr<RunState> state = prepared.states->take();
    if (!state) state = std::make_unique<RunState>(p, prepared);
    Dispatcher& dispatcher = p.runtime->dispatcher();
    const ferro_host_api* host = p.runtime->host_api();
    std::vector<Outputs>& values = state->values;
    SharedSession shared;
    StepArgs args;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const PlanEntry& e = *prepared.replay_entries[s];
        const StepMemory& memory = prepared.memory.steps[s];
        if (e.plan) {
            Outputs& outs = values[s];
            for (size_t k = 0; k < memory.outputs.size(); ++k) {
                if (memory.outputs[k].kind != Slot::Kind::fresh) continue;
                const OutputSig& sig = written_sig(*e.plan, k);
                outs[k] = make_checked_tensor(e.engine, sig.dtype, span_of(sig.shape), span_of(sig.strides), sig.bytes);
            }
            StepCall& c = state->calls[s];
            for (const auto& [view, v] : c.refresh) {
                c.views[view] = view_of(v.kind == ValueRef::Kind::input ? *inputs[v.index] : *values[v.index][v.output]);
            }
            try {
                run_plan_step(e, host, c, state->workspaces[s], shared);
            } catch (Error& err) {
                err.annotate(FERRO_PHASE_EXECUTE);
                throw;
            }
        } else {
            shared.end();
            values[s] = dispatcher.run_entry(e, gather(p, p.steps[s], inputs, values, args));
        }
        for (const auto& [step, output] : memory.releases) values[step][output] = TensorPtr();
    }
    shared.end();
    Outputs outs = program_outputs(p, inputs, values);
    for (const ValueRef& v : p.outputs) {
        if (v.kind == ValueRef::Kind::step) values[v.index][v.output] = TensorPtr();
    }
    prepared.states->give_back(std::move(state));
    return outs;
}

}  // namespace ferro::host
