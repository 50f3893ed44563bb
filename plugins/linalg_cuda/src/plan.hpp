// A cuSOLVER plan: the call's geometry, the regions of the workspace its executor uses, and
// how it reads its attributes. Made in prepare (linalg_cuda_plugin.cpp), run by solver.cpp.
#pragma once

#include <ferro/cuda/libraries.hpp>
#include <ferro/family/linalg.hpp>
#include <ferro/plugin.hpp>
#include <ferro/rules.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ferro::linalg::cuda {

using namespace ferro::family::linalg;
using plugin::complex_dtype;
using plugin::is_complex;
using plugin::real_dtype;

// The ops this module runs; the others of the family are declined with the reason.
bool supported(Op op);
// "linalg.solve", ...: for messages.
std::string op_label(Op op);

struct Region {
    uint64_t offset = 0;
    uint64_t bytes = 0;
};

// The geometry (the family's reader, shared with the cpu module) and what is cuSOLVER's own.
struct CudaPlan : Geometry {
    const ferro::cuda::CudaLibraries* lib = nullptr;  // cuBLAS and cuSOLVER (the module's)
    Op op = Op::count;
    ferro_dtype dtype = FERRO_DTYPE_INVALID;
    // Workspace regions (column-major matrices, `count` of each).
    Region a, b, c, d, e, flags;
    uint64_t workspace_bytes = 0;
};

// Reads the call (read_geometry) and lays out the workspace.
CudaPlan make_cuda_plan(Op op, const ferro_prepare_args& args);

}  // namespace ferro::linalg::cuda
