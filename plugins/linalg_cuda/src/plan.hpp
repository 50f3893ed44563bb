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

struct CudaPlan {
    const ferro::cuda::CudaLibraries* lib = nullptr;  // cuBLAS and cuSOLVER (the module's)
    Op op = Op::count;
    ferro_dtype dtype = FERRO_DTYPE_INVALID;
    std::vector<int64_t> batch;  // the outputs' batch shape
    int64_t count = 1;           // matrices in the batch
    int64_t m = 0, n = 0, k = 0;  // input 0 is m x n; k: right-hand sides (solves) or min(m, n)
    bool vector_rhs = false;      // solve with b of shape [..., n]
    bool left = true, adjoint = false, unit = false, upper = false, full = false;
    QrMode qr_mode = QrMode::reduced;
    // Workspace regions (column-major matrices, `count` of each).
    Region a, b, c, d, e, flags;
    uint64_t workspace_bytes = 0;
};

// Reads the call (shapes from the inferred signatures, attributes in schema order) and lays
// out the workspace.
CudaPlan make_cuda_plan(Op op, const ferro_prepare_args& args);

}  // namespace ferro::linalg::cuda
