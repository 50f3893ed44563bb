// The cuSOLVER module's session executor: gathers inputs into column-major workspace copies
// with the engine's primitives, runs cuSOLVER/cuBLAS and the module's kernels on the engine's
// stream through its native context, checks LAPACK-style info codes, and scatters the results.
#pragma once

#include "plan.hpp"

namespace ferro::linalg::cuda {

void execute(const CudaPlan& plan, const ferro_host_api* host, const ferro_exec_args& args);

}  // namespace ferro::linalg::cuda
