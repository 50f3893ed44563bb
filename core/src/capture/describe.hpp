// A prepared program as JSON (ferro_prepared_describe, `ferro-inspect program`): its inputs,
// steps with the plan or host op each runs and where each output lives, its memory, and the
// gradient programs built so far. The schema is in docs/inspector.md.
#pragma once

#include "capture/program.hpp"

#include <string>

namespace ferro::host {

std::string describe_prepared(const PreparedProgram& prepared);

}  // namespace ferro::host
