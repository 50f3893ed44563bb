// One op of the family as this plugin serves it: its schema (attributes, infer, what its rules
// need saved, the rules) and its cpu executor, in one row. Each op's file under ops/ defines
// its row next to the functions the row names; op_table.cpp puts the rows in the family's order.
#pragma once

#include "cpu_exec.hpp"
#include "linalg.hpp"

#include <ferro/family.h>
#include <ferro/schema.hpp>

#include <span>

namespace ferro::linalg {

// How the cpu module runs an op: `configure` is the op's part of prepare (attributes into the
// plan, LAPACK workspace queries, scratch bytes, output layouts); then either `kernels`, run
// per matrix by the batch runner, or `whole`, given the whole call.
struct CpuExecutor {
    void (*configure)(Plan& plan, const ferro_prepare_args& args) = nullptr;
    MatrixKernels kernels{};
    bool runs_on_empty = false;  // the kernel also runs on a 0 x 0 matrix (else: empty results)
    void (*whole)(const Plan& plan, const ferro_exec_args& args) = nullptr;
};

struct OpRow {
    Op op = Op::count;
    const char* doc = "";
    int32_t n_inputs = 1;
    int32_t n_outputs = 1;  // FERRO_VARIADIC: infer decides (qr mode r)
    std::span<const ferro_attr_spec> attrs{};
    std::span<const ferro_dtype> dtypes = kFloatDtypes;
    decltype(ferro_op_schema::infer) infer = nullptr;
    uint64_t diff_inputs = 0, diff_outputs = 0, save_inputs = 0, save_outputs = 0;
    decltype(ferro_op_schema::vjp) vjp = nullptr;
    decltype(ferro_op_schema::jvp) jvp = nullptr;
    CpuExecutor cpu{};
};

// The row of `op` (op_table.cpp).
const OpRow& op_row(Op op);

// What more than one op file uses.
ferro_signature solve_output(Op op, const MatrixInput& in, const ferro_signature& b);  // ops/solve.cpp
CpuExecutor solve_executor();  // ops/solve.cpp: solve's, which solve_with_lu shares

// Each op file's rows.
namespace op_rows {
OpRow solve();
OpRow inv();
OpRow det();
OpRow slogdet();
OpRow cholesky();
OpRow qr();
OpRow eigh();
OpRow eigvalsh();
OpRow svd();
OpRow svdvals();
OpRow triangular_solve();
OpRow lu_factor();
OpRow lu();
OpRow lu_unpack();
OpRow lu_solve();
OpRow eig();
OpRow eigvals();
OpRow matrix_exp();
OpRow pinv();
OpRow matrix_rank();
OpRow vector_norm();
OpRow matrix_norm();
OpRow cond();
OpRow lstsq();
OpRow inverse_gaps();
OpRow solve_with_lu();
}  // namespace op_rows

}  // namespace ferro::linalg
