// Where a prepared program's intermediates live during a run, and the run that uses it
// (docs/capture.md, "Memory and sessions"): each intermediate has a fixed place in an arena
// whose memory is reused once a value is dead, made once per concurrent run and kept, so a run
// allocates only the tensors it returns; the built-in ops' steps share one engine session.
#pragma once

#include "dispatch/dispatcher.hpp"

#include <memory>
#include <span>
#include <vector>

namespace ferro::host {

struct Program;
struct PreparedProgram;

// Where a plan step's output (or residual, or workspace) lives during a run.
struct Slot {
    enum class Kind : uint8_t {
        arena,  // at `offset` in arena `arena`, reused once dead (engines whose buffers are addresses)
        owned,  // a buffer of its own, kept from run to run (other engines)
        fresh,  // allocated by each run: it is, or a view of it may be, a program output
    };
    Kind kind = Kind::fresh;
    uint32_t arena = 0;
    uint64_t offset = 0;
};

struct StepMemory {
    std::vector<Slot> outputs;  // the plan's outputs, then its residuals
    Slot workspace;
    // The step outputs to drop once this step has run (fresh and host op ones: the others stay).
    std::vector<std::pair<uint32_t, uint32_t>> releases;
};

struct MemoryPlan {
    struct Arena {
        EnginePtr engine;
        uint64_t bytes = 0;
    };
    std::vector<Arena> arenas;
    std::vector<StepMemory> steps;
    uint64_t intermediate_bytes = 0;  // the steps' outputs (not the program's), residuals and workspaces, summed
    uint64_t run_bytes = 0;           // what a run keeps for them: the arenas and the owned buffers
};

// Places the intermediates of `program` run with `entries` (one per step).
MemoryPlan plan_memory(const Program& program, std::span<const EntryPtr> entries);

// The run states a prepared program keeps, one per run in flight (replay.cpp). FERRO_RECORD=0 in
// the environment when they are made (at prepare) turns recorded sessions off.
class RunStates;
std::shared_ptr<RunStates> make_run_states();

// On engines that record sessions (ABI 1.14), the stretches of a program's steps its runs
// recorded, those the engine could not record, and the runs that submitted a recording again.
struct RecordingStats {
    uint64_t recordings = 0, resubmissions = 0, refused = 0;
};
RecordingStats recording_stats(const PreparedProgram& prepared);

// Runs the prepared plans on inputs laid out as prepared, when no call would be recorded for
// the tape (no input or constant has autograd state).
Outputs replay(const PreparedProgram& prepared, std::span<ferro_tensor_impl* const> inputs);

}  // namespace ferro::host
