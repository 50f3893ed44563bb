#include "capture/replay.hpp"

#include "capture/program.hpp"
#include "dispatch/invoke.hpp"
#include "runtime/runtime.hpp"
#include "support/env.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
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

// A stretch of a run's steps recorded as one engine session (ABI 1.14), submitted again by
// later runs with the buffers that changed: those of the inputs and of what a run allocates.
struct RecordedStretch {
    EnginePtr engine;
    size_t end = 0;                                    // the step after its last
    ferro_engine_recording handle = nullptr;           // null: the engine could not record it; run as a session
    std::vector<ferro_buffer> params;                  // the buffers at recording
    std::vector<bool> pinned;                          // a parameter that was also a fixed buffer must stay that one
    std::vector<std::pair<uint32_t, uint64_t>> views;  // per refreshed view, in order: (parameter, byte offset)
    std::vector<StoragePtr> kept;                      // scratch memory the recorded kernels use
    std::vector<ferro_buffer> buffers;                 // this run's, per parameter
    std::vector<int64_t> deltas;

    RecordedStretch(EnginePtr e, size_t last) : engine(std::move(e)), end(last) {}
    RecordedStretch(const RecordedStretch&) = delete;
    RecordedStretch& operator=(const RecordedStretch&) = delete;
    ~RecordedStretch() {
        if (handle != nullptr) engine->iface().recording_destroy(engine->self(), handle);
    }
};

// Whether a step that is not a built-in plan's may join a recorded stretch (a built-in plan's
// step always may): a host op step that ran as a view of its input (no engine work of its own),
// a plugin's step whose executor worked inside its session only (no op calls, no reading tensor
// data on the host), as seen when it ran on its own.
enum class Joins : uint8_t { unknown, yes, no };

// What one run in flight holds: the arenas, the tensors of the fixed slots over them, and the
// plan steps' executor arguments.
struct RunState {
    std::vector<StoragePtr> arenas;
    std::vector<Outputs> values;  // per step (outputs, then residuals): the fixed slots' tensors, and this run's others
    std::vector<StoragePtr> workspaces;
    std::vector<StepCall> calls;  // sized once: the arguments point into their own views
    // Engines that record sessions: per step, the stretch recorded from it, if any; and whether
    // the step may join one (Joins), learnt from the runs before.
    std::vector<std::unique_ptr<RecordedStretch>> recorded;
    std::vector<Joins> joins;

    RunState(const Program& p, const PreparedProgram& prepared) {
        const MemoryPlan& m = prepared.memory;
        for (const MemoryPlan::Arena& a : m.arenas) arenas.push_back(Storage::allocate(a.engine, a.bytes));
        const size_t n = p.steps.size();
        values.resize(n);
        workspaces.resize(n);
        calls.resize(n);
        recorded.resize(n);
        joins.resize(n, Joins::unknown);
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

// Lets `session` touch the buffers of a plugin's step: its call's tensors and its workspace, as
// an eager call's session does.
void allow_step(ferro_session_impl& session, const StepCall& c, const StoragePtr& workspace) {
    for (const ferro_tensor_view& v : c.views) session.allow(*v.tensor->storage);
    if (workspace) session.allow(*workspace);
}

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
    allow_step(*session.get(), c, workspace);
    c.args.session = session.get();
    invoke_executor(plan, e.op->name, *e.engine, host, session.get(), c.args);
    session.end();
}

// Sets t_outside_recording for the executors run in its scope.
class WatchOutsideWork {
public:
    explicit WatchOutsideWork(bool& flag) noexcept { t_outside_recording = &flag; }
    ~WatchOutsideWork() { t_outside_recording = nullptr; }
    WatchOutsideWork(const WatchOutsideWork&) = delete;
    WatchOutsideWork& operator=(const WatchOutsideWork&) = delete;
};

// A plugin's step inside a stretch: the stretch's engine session, with its own list of the
// buffers its call may touch, as its own session would have.
void make_step_session(ferro_session_impl& s, const ferro_session_impl& stretch, const StepCall& c, const StoragePtr& workspace) {
    s.engine = stretch.engine;
    s.engine_ptr = stretch.engine_ptr;
    s.engine_session = stretch.engine_session;
    allow_step(s, c, workspace);
}

// What a run does: the steps of `prepared` on `inputs`, with `state`'s memory.
class Replay {
public:
    Replay(const PreparedProgram& prepared, RunState& state, std::span<ferro_tensor_impl* const> inputs, RunStates& states)
        : prepared_(prepared),
          p_(*prepared.replayed),
          state_(state),
          inputs_(inputs),
          states_(states),
          dispatcher_(p_.runtime->dispatcher()),
          host_(p_.runtime->host_api()) {}

    void run();

private:
    // Allocates a plan step's fresh outputs and points its arguments at this run's values.
    void bind(size_t s);
    // Runs host op step s (views, reshapes, creation) and notes whether it viewed its input.
    void run_host_op(size_t s);
    // Steps [first, end) on one engine that records sessions: plan steps, and host op steps that
    // cannot read what the stretch writes before it is submitted (views).
    size_t run_stretch(size_t first);
    bool joins_stretch(size_t s, size_t first) const;
    void record(size_t first, size_t end);
    bool bind_recording(RecordedStretch& r, size_t first) const;
    // The plan steps of [first, end) into `session`; scratch memory they take goes to `kept`.
    void run_executors(Session& session, size_t first, size_t end, std::vector<StoragePtr>& kept);

    const PreparedProgram& prepared_;
    const Program& p_;
    RunState& state_;
    std::span<ferro_tensor_impl* const> inputs_;
    RunStates& states_;
    Dispatcher& dispatcher_;
    const ferro_host_api* host_;
    SharedSession shared_;
    StepArgs args_;
};

}  // namespace

class RunStates {
public:
    RunStates() : record_(env_switch_on("FERRO_RECORD")) {}
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
    bool record() const noexcept { return record_; }
    RecordingStats stats() const noexcept { return {recordings_.load(), resubmissions_.load(), refused_.load()}; }
    void count_recording(bool made) noexcept { (made ? recordings_ : refused_).fetch_add(1, std::memory_order_relaxed); }
    void count_resubmission() noexcept { resubmissions_.fetch_add(1, std::memory_order_relaxed); }

private:
    std::mutex mutex_;
    std::vector<std::unique_ptr<RunState>> idle_;
    const bool record_;  // FERRO_RECORD=0 at prepare turns recorded sessions off
    std::atomic<uint64_t> recordings_{0}, resubmissions_{0}, refused_{0};
};

std::shared_ptr<RunStates> make_run_states() { return std::make_shared<RunStates>(); }

RecordingStats recording_stats(const PreparedProgram& prepared) { return prepared.states->stats(); }

namespace {

void Replay::bind(size_t s) {
    const PlanEntry& e = *prepared_.replay_entries[s];
    const StepMemory& memory = prepared_.memory.steps[s];
    Outputs& outs = state_.values[s];
    for (size_t k = 0; k < memory.outputs.size(); ++k) {
        if (memory.outputs[k].kind != Slot::Kind::fresh) continue;
        const OutputSig& sig = written_sig(*e.plan, k);
        outs[k] = make_checked_tensor(e.engine, sig.dtype, span_of(sig.shape), span_of(sig.strides), sig.bytes);
    }
    StepCall& c = state_.calls[s];
    for (const auto& [view, v] : c.refresh) {
        c.views[view] = view_of(v.kind == ValueRef::Kind::input ? *inputs_[v.index] : *state_.values[v.index][v.output]);
    }
}

void Replay::run_host_op(size_t s) {
    const std::span<ferro_tensor_impl* const> in = gather(p_, p_.steps[s], inputs_, state_.values, args_);
    state_.values[s] = dispatcher_.run_entry(*prepared_.replay_entries[s], in);
    const bool view = !in.empty() && !state_.values[s].empty() && state_.values[s][0] &&
                      state_.values[s][0]->storage.get() == in[0]->storage.get();
    if (state_.joins[s] == Joins::yes && !view) {
        throw Error(FERRO_INTERNAL, fmt::format("program run: step {} ({}) copied its input where an earlier run viewed it", s,
                                                prepared_.replay_entries[s]->op->name));
    }
    state_.joins[s] = view ? Joins::yes : Joins::no;
}

void Replay::run() {
    const size_t n = p_.steps.size();
    for (size_t s = 0; s < n;) {
        const PlanEntry& e = *prepared_.replay_entries[s];
        const bool records = e.plan && states_.record() && e.engine->records_sessions();
        if (records && (e.plan->built_in() || state_.joins[s] == Joins::yes)) {
            shared_.end();
            s = run_stretch(s);
            continue;
        }
        if (e.plan) {
            bind(s);
            try {
                if (records && state_.joins[s] == Joins::unknown) {  // a plugin's step not yet seen: on its own, watched
                    bool outside = false;
                    const WatchOutsideWork watch(outside);
                    run_plan_step(e, host_, state_.calls[s], state_.workspaces[s], shared_);
                    state_.joins[s] = outside ? Joins::no : Joins::yes;
                } else {
                    run_plan_step(e, host_, state_.calls[s], state_.workspaces[s], shared_);
                }
            } catch (Error& err) {
                err.annotate(FERRO_PHASE_EXECUTE);
                throw;
            }
        } else {
            shared_.end();
            run_host_op(s);
        }
        for (const auto& [step, output] : prepared_.memory.steps[s].releases) state_.values[step][output] = TensorPtr();
        ++s;
    }
    shared_.end();
}

bool Replay::joins_stretch(size_t s, size_t first) const {
    const PlanEntry& e = *prepared_.replay_entries[s];
    if (e.plan)
        return e.engine == prepared_.replay_entries[first]->engine && (e.plan->built_in() || state_.joins[s] == Joins::yes);
    if (state_.joins[s] == Joins::yes) return true;  // a view: no engine work
    // Other host ops may run engine work of their own, submitted before the stretch's: they must
    // not read what it writes.
    return std::none_of(p_.steps[s].inputs.begin(), p_.steps[s].inputs.end(),
                        [&](const ValueRef& v) { return v.kind == ValueRef::Kind::step && v.index >= first; });
}

size_t Replay::run_stretch(size_t first) {
    const EnginePtr& engine = prepared_.replay_entries[first]->engine;
    const size_t n = p_.steps.size();
    size_t end = first;
    for (; end < n && (end == first || joins_stretch(end, first)); ++end) {
        if (prepared_.replay_entries[end]->plan) bind(end);
        else run_host_op(end);
    }
    // Recordings of stretches that began inside this one (earlier runs knew less) are dead.
    for (size_t s = first + 1; s < end; ++s) state_.recorded[s].reset();
    std::unique_ptr<RecordedStretch>& r = state_.recorded[first];
    try {
        if (r && r->end == end && r->handle == nullptr) {  // the engine cannot record it
            Session session(engine);
            run_executors(session, first, end, r->kept);
            session.end();
            r->kept.clear();
        } else if (r && r->end == end && bind_recording(*r, first)) {
            throw_if_error(engine->iface().recording_submit(engine->self(), r->handle, r->buffers.data(), r->deltas.data(),
                                                            static_cast<uint32_t>(r->buffers.size()), 0));
            states_.count_resubmission();
        } else {
            record(first, end);
        }
    } catch (Error& err) {
        err.annotate(FERRO_PHASE_EXECUTE);
        throw;
    }
    for (size_t s = first; s < end; ++s) {
        for (const auto& [step, output] : prepared_.memory.steps[s].releases) state_.values[step][output] = TensorPtr();
    }
    return end;
}

void Replay::run_executors(Session& session, size_t first, size_t end, std::vector<StoragePtr>& kept) {
    for (size_t s = first; s < end; ++s) {
        const PlanEntry& e = *prepared_.replay_entries[s];
        if (!e.plan) continue;
        StepCall& c = state_.calls[s];
        if (e.plan->built_in()) {
            c.args.session = session.get();
            invoke_executor(*e.plan, e.op->name, *e.engine, host_, session.get(), c.args);
            continue;
        }
        ferro_session_impl own;
        make_step_session(own, *session.get(), c, state_.workspaces[s]);
        c.args.session = &own;
        invoke_executor(*e.plan, e.op->name, *e.engine, host_, &own, c.args);
        kept.insert(kept.end(), own.scratch.begin(), own.scratch.end());
    }
    kept.insert(kept.end(), session.get()->scratch.begin(), session.get()->scratch.end());
}

void Replay::record(size_t first, size_t end) {
    const EnginePtr& engine = prepared_.replay_entries[first]->engine;
    auto r = std::make_unique<RecordedStretch>(engine, end);
    std::vector<ferro_buffer> fixed;
    for (size_t s = first; s < end; ++s) {
        if (!prepared_.replay_entries[s]->plan) continue;
        const StepCall& c = state_.calls[s];
        for (size_t k = 0; k < c.views.size(); ++k) {
            if (std::none_of(c.refresh.begin(), c.refresh.end(), [&](const auto& f) { return f.first == k; }))
                fixed.push_back(c.views[k].buffer);
        }
        if (state_.workspaces[s]) fixed.push_back(state_.workspaces[s]->buffer());
        for (const auto& [view, value] : c.refresh) {
            const ferro_tensor_view& v = c.views[view];
            auto at = std::find(r->params.begin(), r->params.end(), v.buffer);
            if (at == r->params.end()) at = r->params.insert(at, v.buffer);
            r->views.emplace_back(static_cast<uint32_t>(at - r->params.begin()), v.byte_offset);
        }
    }
    for (const ferro_buffer b : r->params) r->pinned.push_back(std::find(fixed.begin(), fixed.end(), b) != fixed.end());
    bool outside = false;
    Session session(engine, Session::Recorded{});
    {
        const WatchOutsideWork watch(outside);
        run_executors(session, first, end, r->kept);
    }
    if (outside) {
        // An executor called ops or read tensor data: not in the recording, and its work may
        // have run before what the stretch wrote for it.
        session.end();
        throw Error(FERRO_INTERNAL, fmt::format("program run: a step in {}..{} worked outside its session on {} "
                                                "(calling ops or reading tensor data) while its stretch was recorded",
                                                first, end - 1, engine->name()));
    }
    r->handle = session.end_recording(r->params);
    states_.count_recording(r->handle != nullptr);
    if (r->handle == nullptr) r->kept.clear();  // ran as a session: nothing to keep
    r->buffers.resize(r->params.size());
    r->deltas.resize(r->params.size());
    state_.recorded[first] = std::move(r);
}

bool Replay::bind_recording(RecordedStretch& r, size_t first) const {
    std::fill(r.buffers.begin(), r.buffers.end(), nullptr);
    size_t i = 0;
    for (size_t s = first; s < r.end; ++s) {
        if (!prepared_.replay_entries[s]->plan) continue;
        const StepCall& c = state_.calls[s];
        for (const auto& [view, value] : c.refresh) {
            const ferro_tensor_view& v = c.views[view];
            const auto [param, offset] = r.views[i++];
            const int64_t delta = static_cast<int64_t>(v.byte_offset) - static_cast<int64_t>(offset);
            if (r.buffers[param] == nullptr) {
                if (r.pinned[param] && (v.buffer != r.params[param] || delta != 0)) return false;
                r.buffers[param] = v.buffer;
                r.deltas[param] = delta;
            } else if (r.buffers[param] != v.buffer || r.deltas[param] != delta) {
                return false;  // views that shared a buffer at the recording no longer do
            }
        }
    }
    return true;
}

}  // namespace

Outputs replay(const PreparedProgram& prepared, std::span<ferro_tensor_impl* const> inputs) {
    const Program& p = *prepared.replayed;
    std::unique_ptr<RunState> state = prepared.states->take();
    if (!state) state = std::make_unique<RunState>(p, prepared);
    Replay(prepared, *state, inputs, *prepared.states).run();
    std::vector<Outputs>& values = state->values;
    Outputs outs = program_outputs(p, inputs, values);
    for (const ValueRef& v : p.outputs) {
        if (v.kind == ValueRef::Kind::step) values[v.index][v.output] = TensorPtr();
    }
    prepared.states->give_back(std::move(state));
    return outs;
}

}  // namespace ferro::host
