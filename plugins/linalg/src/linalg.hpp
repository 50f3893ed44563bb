// The linalg family: op table, the plan a cpu module prepares for one call signature, and the
// helpers its schemas, executors and rules share. Everything here is the plugin's own; it
// reaches the host only through plugin_api.
#pragma once

#include <ferro/family/linalg.hpp>
#include <ferro/rules.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <string>
#include <vector>

namespace ferro::linalg {

// The family's contract (ops in table order, their attributes, QrMode, solve's vector rule):
// public, since the modules of other plugins serve the same family.
using namespace ferro::family::linalg;

const ferro_op_schema* schemas();  // Op::count entries, named as the contract's op_name
std::string qualified(Op op);      // "linalg.solve"

// matrix_norm's orders.
enum class MatrixOrd { fro, nuc, one, minus_one, two, minus_two, inf, minus_inf };

// What a cpu plan knows about its call: the geometry of the matrices, the batch it loops over
// and the LAPACK workspace it needs per matrix (sizes from the routines' own queries).
struct Plan {
    Op op = Op::count;
    ferro_dtype dtype = FERRO_DTYPE_INVALID;
    std::vector<int64_t> batch;  // batch shape of the outputs
    int64_t batch_count = 1;
    int64_t m = 0, n = 0;        // rows and columns of the (first) input matrix
    int64_t k = 0;               // solve: right-hand sides; qr/svd: min(m, n)
    bool vector_rhs = false;     // solve with b of shape [n]
    bool left = true;            // triangular_solve, lu_solve: A X = B (else X A = B)
    bool adjoint = false;        // lu_solve: with A^H
    bool unit = false;           // triangular_solve: unit diagonal assumed
    std::vector<int> matrix_dims;  // per input: trailing dims that form one item (2 matrix, 1 vector)
    // pinv, matrix_rank: singular values at or below max(atol, rtol * largest) count as zero.
    bool hermitian = false;
    bool one_blas_thread = false;  // LAPACK runs faster on one OpenBLAS thread (linalg_exec.cpp)
    double atol = 0, rtol = 0;
    double ord = 2;                  // vector_norm
    bool residuals = true;           // lstsq: computed (m > n and a driver other than gelsy)
    std::vector<int64_t> reduced;    // vector_norm: reduced axes of input 0
    MatrixOrd matrix_ord = MatrixOrd::fro;
    int64_t row_axis = 0, col_axis = 1;  // matrix_norm
    double eps = 0;                  // inverse_gaps
    bool squares = false;            // inverse_gaps: of x^2
    // The decomposition whose LAPACK routine (and workspace) the op runs: itself, or for pinv
    // and matrix_rank the SVD or Hermitian eigendecomposition underneath.
    Op lapack_op() const {
        if (op == Op::pinv) return hermitian ? Op::eigh : Op::svd;
        if (op == Op::matrix_rank) return hermitian ? Op::eigvalsh : Op::svdvals;
        return op;
    }
    bool upper = false;          // cholesky; eigh: use the upper triangle
    bool full = false;           // svd: full_matrices
    QrMode qr_mode = QrMode::reduced;
    int64_t lwork = 0, lrwork = 0, liwork = 0;  // LAPACK work arrays (elements)
    int64_t scratch_bytes = 0;   // per matrix: copies + pivots + work arrays
};

// ---- shapes and messages ----

std::string shape_str(std::span<const int64_t> shape);
inline std::span<const int64_t> dims(const ferro_signature& s) { return {s.shape, static_cast<size_t>(s.ndim)}; }

[[noreturn]] inline void invalid(Op op, const std::string& what) {
    throw plugin::Error(FERRO_INVALID_ARGUMENT, qualified(op) + ": " + what);
}

// Input `index` must be a matrix or a batch of them ([..., m, n]); square when asked.
void require_matrix(Op op, const ferro_signature& s, int index, bool square);
// Input `index` must be f32, f64, c64 or c128.
void require_float(Op op, const ferro_signature& s, int index);
// numpy broadcasting of two batch shapes; the error names both inputs.
std::vector<int64_t> broadcast_batch(Op op, std::span<const int64_t> a, std::span<const int64_t> b);

using plugin::complex_dtype;
using plugin::is_complex;
using plugin::real_dtype;

// ---- execution (linalg_exec.cpp) ----

// Validates the call for the cpu engine and sizes the plan (workspace queries included).
Plan make_plan(Op op, const ferro_prepare_args& args);
// Runs a plan on the cpu engine: loops over the batch (on the engine's pool when the batch is
// large enough), gathers each matrix, calls LAPACK, scatters the results.
void execute(const Plan& plan, const ferro_exec_args& args, const void* cpu_context);

// Sample calls of op args->op_index (linalg_examples.cpp): the module's examples hook.
ferro_status examples(void* self, const ferro_host_api* host, ferro_examples_args* args);

// ---- autodiff rules (linalg_rules.cpp) ----

ferro_status solve_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status solve_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status solve_with_lu_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status solve_with_lu_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status inv_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status inv_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status det_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status det_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status slogdet_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status slogdet_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status cholesky_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status cholesky_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status qr_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status qr_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status eigh_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status eigh_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status svd_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status svd_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status triangular_solve_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status triangular_solve_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status lu_vjp(const ferro_host_api*, const ferro_vjp_args*);  // lu and lu_factor
ferro_status lu_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status lu_unpack_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status lu_unpack_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status lu_solve_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status lu_solve_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status eig_vjp(const ferro_host_api*, const ferro_vjp_args*);  // eig and eigvals
ferro_status eig_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status matrix_exp_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status matrix_exp_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status pinv_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status pinv_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status vector_norm_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status vector_norm_jvp(const ferro_host_api*, const ferro_jvp_args*);

ferro_status matrix_norm_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status matrix_norm_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status cond_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status cond_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status lstsq_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status lstsq_jvp(const ferro_host_api*, const ferro_jvp_args*);
ferro_status inverse_gaps_vjp(const ferro_host_api*, const ferro_vjp_args*);
ferro_status inverse_gaps_jvp(const ferro_host_api*, const ferro_jvp_args*);

MatrixOrd matrix_ord(Op op, const char* ord);  // INVALID_ARGUMENT for an unknown name
// matrix_norm's (row axis, column axis), normalised: the `axes` attribute, or (-2, -1).
std::pair<int64_t, int64_t> matrix_axes(Op op, const ferro_attr_value& axes, int ndim);

// vector_norm's reduced axes (normalised, ascending): the `axes` attribute, or all when it is
// None or empty (PyTorch).
std::vector<int64_t> norm_axes(Op op, const ferro_attr_value& axes, int ndim);

}  // namespace ferro::linalg
