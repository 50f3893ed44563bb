// Fusing a prepared program's consecutive elementwise steps (docs/capture.md, "Fusion"): a run
// of core unary and binary steps computing in one dtype over one shape on an engine that runs
// fused elementwise programs (ferro_engine_iface.elementwise_fused) becomes one step, whose
// plan hands the engine the whole straight line at once. Values that only the run's own steps
// read are never written to memory.
#pragma once

#include "capture/program.hpp"

#include <span>
#include <vector>

namespace ferro::host {

// What a prepared program's runs execute: the program with each fusable run of steps replaced
// by one step, and the entry each of its steps runs.
struct ReplayProgram {
    ProgramPtr program;
    std::vector<EntryPtr> entries;
};

// `program` prepared with `entries`, fused; the program and entries as they are when nothing
// fuses or FERRO_FUSE=0 is set.
ReplayProgram fuse_elementwise(const ProgramPtr& program, const std::vector<EntryPtr>& entries);

}  // namespace ferro::host
