// The linalg family as this plugin serves it: the plan its cpu module prepares for one call
// signature, and the helpers its ops' schemas, executors and rules share (each op lives in
// ops/, its row in op_row.hpp's table). Everything here is the plugin's own; it
// reaches the host only through plugin_api.
#pragma once

#include "blas_holds.hpp"

#include <ferro/family/linalg.hpp>
#include <ferro/rules.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ferro::linalg {

// The family's contract (ops in table order, their attributes, QrMode, solve's vector rule):
// public, since the modules of other plugins serve the same family.
using namespace ferro::family::linalg;

const ferro_op_schema* schemas();  // Op::count entries, named as the contract's op_name
std::string qualified(Op op);      // "linalg.solve"

// matrix_norm's orders.
enum class MatrixOrd { fro, nuc, one, minus_one, two, minus_two, inf, minus_inf };

// What a cpu plan knows about its call: the family's geometry, the LAPACK workspace each
// matrix needs (sizes from the routines' own queries) and the attributes its executor reads.
struct Plan : Geometry {
    Op op = Op::count;
    ferro_dtype dtype = FERRO_DTYPE_INVALID;
    std::vector<int> matrix_dims;  // per input: trailing dims that form one item (2 matrix, 1 vector)
    // The routine whose threading decides whether the call holds the BLAS at one thread (blas_holds.hpp).
    ThreadedRoutine threaded_routine = ThreadedRoutine::none;
    // pinv, matrix_rank: singular values at or below max(atol, rtol * largest) count as zero.
    bool hermitian = false;
    double atol = 0, rtol = 0;
    double ord = 2;                // vector_norm
    bool residuals = true;         // lstsq: computed (m > n and a driver other than gelsy)
    std::vector<int64_t> reduced;  // vector_norm: reduced axes of input 0
    MatrixOrd matrix_ord = MatrixOrd::fro;
    int64_t row_axis = 0, col_axis = 1;         // matrix_norm
    double eps = 0;                             // inverse_gaps
    bool squares = false;                       // inverse_gaps: of x^2
    int64_t lwork = 0, lrwork = 0, liwork = 0;  // LAPACK work arrays (elements)
    int64_t scratch_bytes = 0;                  // per matrix: copies + pivots + work arrays
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

// ---- schemas (ops/*.cpp, each op's infer next to its executor and rules) ----

// A signature of `dtype` with the batch dimensions, then `tail`.
ferro_signature out_sig(ferro_dtype dtype, std::span<const int64_t> batch, std::initializer_list<int64_t> tail);
inline std::span<const int64_t> batch_of(const ferro_signature& s, int item_dims = 2) {
    return {s.shape, static_cast<size_t>(s.ndim - item_dims)};
}
inline int64_t rows(const ferro_signature& s) { return s.shape[s.ndim - 2]; }
inline int64_t cols(const ferro_signature& s) { return s.shape[s.ndim - 1]; }
// Input `index` must have input 0's dtype (`what` names it: "B").
void require_same_dtype(Op op, const ferro_signature& a, const ferro_signature& b, int index, const char* what);
// pivots (input `index`): i64 [batch..., count], the batch equal to the factors' batch.
void require_pivots(Op op, const ferro_signature& p, int index, std::span<const int64_t> batch, int64_t count);
// B of a solve with A [..., n, n]: [..., n, k] (left) or [..., k, n] (right); returns X's signature.
ferro_signature solve_rhs(Op op, const ferro_signature& a, const ferro_signature& b, int index, bool left);

// An infer's view of input 0, a matrix or a batch of them, checked (float; square if asked).
struct MatrixInput {
    const ferro_signature& sig;
    std::span<const int64_t> batch;
    int64_t m, n, k;   // k = min(m, n)
    ferro_dtype real;  // the real dtype of input 0's
};
// The infer of a matrix op: `outputs(in)` writes the output signatures and returns their count.
template <class Outputs>
ferro_status infer_matrix(const ferro_host_api* host, ferro_infer_args* a, Op op, bool square, Outputs&& outputs) {
    return plugin::guard(host, [&] {
        const ferro_signature& in = a->inputs[0];
        require_float(op, in, 0);
        require_matrix(op, in, 0, square);
        const int64_t m = in.shape[in.ndim - 2], n = in.shape[in.ndim - 1];
        a->n_outputs = outputs(MatrixInput{in, batch_of(in), m, n, std::min(m, n), real_dtype(in.dtype)});
    });
}

inline constexpr ferro_dtype kFloatDtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64, FERRO_DTYPE_C64, FERRO_DTYPE_C128};
inline constexpr ferro_dtype kRealDtypes[] = {FERRO_DTYPE_F32, FERRO_DTYPE_F64};
inline constexpr uint64_t bit(int i) { return FERRO_MASK_BIT(i); }
inline constexpr const char* kEpsDoc =
    "regulariser of the degenerate-spectrum terms of the derivative: 1/d becomes d/(d^2 + eps) "
    "(0: exact, as PyTorch)";

// ---- execution (cpu_exec.cpp) ----

// Validates the call for the cpu engine and sizes the plan (the op's configure: attributes,
// workspace queries, output layouts).
Plan make_plan(Op op, const ferro_prepare_args& args);
// Runs a plan on the cpu engine: the op's whole-call executor, or its kernel per matrix.
void execute(const Plan& plan, const ferro_exec_args& args, const void* cpu_context);

// Sample calls of op args->op_index (linalg_examples.cpp): the module's examples hook.
ferro_status examples(void* self, const ferro_host_api* host, ferro_examples_args* args);

MatrixOrd matrix_ord(Op op, const char* ord);  // INVALID_ARGUMENT for an unknown name
// matrix_norm's (row axis, column axis), normalised: the `axes` attribute, or (-2, -1).
std::pair<int64_t, int64_t> matrix_axes(Op op, const ferro_attr_value& axes, int ndim);

// vector_norm's reduced axes (normalised, ascending): the `axes` attribute, or all when it is
// None or empty (PyTorch).
std::vector<int64_t> norm_axes(Op op, const ferro_attr_value& axes, int ndim);

}  // namespace ferro::linalg
