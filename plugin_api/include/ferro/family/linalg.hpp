// ferro plugin ABI — the linalg family's contract (header-only C++), for the plugins that serve it.
//
// Family "linalg", version 1 (libferro_linalg.so defines it; linalg_cuda adds a module). Its ops,
// in the order of Op, with torch.linalg's semantics (batched over leading dimensions, matrices
// in the last two; f32, f64, c64, c128) and these attributes, in this order (the host normalises
// them: defaults filled, types checked); an op not listed has none:
//
//   cholesky            upper (bool, false): return U with A = U^H U instead of L
//   qr                  mode (str, "reduced" | "complete" | "r")
//   eigh                uplo (str, "L" | "U": the triangle read), eps (f64, 0: degeneracy regulariser)
//   eigvalsh            uplo
//   svd                 full_matrices (bool, true), eps
//   triangular_solve    upper (bool, required), left (bool, true), unitriangular (bool, false)
//   lu_solve            left (bool, true), adjoint (bool, false)
//   pinv, matrix_rank   atol (f64 or None), rtol (f64 or None), hermitian (bool, false)
//   vector_norm         ord (f64, 2), axes (int[] or None), keepdim (bool, false)
//   matrix_norm         ord (str, "fro"), axes (int[] or None), keepdim
//   cond                p (str, "2")
//   lstsq               rcond (f64 or None), driver (str, "gelsd")
//   inverse_gaps        eps (f64, 0), squares (bool, false)
//
// Outputs are torch.linalg's: solve X; inv; det and slogdet (sign, logabsdet); cholesky; qr (Q, R);
// eigh (w ascending, V); svd (U, S descending, Vh); lu_factor (LU, pivots 1-based, i64); lu (P,
// L, U); solve_with_lu (X, LU, pivots). A module for another engine computes the same values and
// reports failures as the family does ("linalg.cholesky: the matrix is not positive definite:
// its leading minor of order k is not positive definite", naming the batch index when batched).
// A family of another major version may differ: bind with ferro/family_binding.hpp.
#pragma once

#include "ferro/family.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <vector>

namespace ferro::family::linalg {

inline constexpr const char* kId = "linalg";
inline constexpr const char* kVersion = "1.0.0";
inline constexpr int kMajor = 1;

enum class Op : uint32_t {
    solve,
    inv,
    det,
    slogdet,
    cholesky,
    qr,
    eigh,
    eigvalsh,
    svd,
    svdvals,
    triangular_solve,
    lu_factor,
    lu,
    lu_unpack,
    lu_solve,
    eig,
    eigvals,
    matrix_exp,
    pinv,
    matrix_rank,
    vector_norm,
    matrix_norm,
    cond,
    lstsq,
    inverse_gaps,
    solve_with_lu,
    count
};

inline constexpr const char* kOpNames[] = {
    "solve",       "inv",  "det",     "slogdet",          "cholesky",     "qr",          "eigh",
    "eigvalsh",    "svd",  "svdvals", "triangular_solve", "lu_factor",    "lu",          "lu_unpack",
    "lu_solve",    "eig",  "eigvals", "matrix_exp",       "pinv",         "matrix_rank", "vector_norm",
    "matrix_norm", "cond", "lstsq",   "inverse_gaps",     "solve_with_lu"};
static_assert(std::size(kOpNames) == static_cast<size_t>(Op::count));

inline const char* op_name(Op op) { return kOpNames[static_cast<uint32_t>(op)]; }  // "solve"

// qr's modes.
enum class QrMode : uint32_t { reduced, complete, r };

// solve's b is a vector (or a batch of them) when it is 1-D, or when its shape is A's without
// the last dimension (PyTorch's rule; numpy 2 only has the first).
inline bool solve_vector_rhs(const ferro_signature& a, const ferro_signature& b) {
    return b.ndim == 1 || (b.ndim == a.ndim - 1 && std::equal(b.shape, b.shape + b.ndim, a.shape));
}

// What every module of the family reads from a call in the same way: the geometry of its
// matrices, the batch its outputs share, and the attributes that choose a routine's variant.
struct Geometry {
    std::vector<int64_t> batch;  // the outputs' batch shape
    int64_t count = 1;           // matrices in the batch
    int64_t m = 0, n = 0;        // input 0 is m x n
    int64_t k = 0;               // min(m, n); for the solves and lstsq: right-hand sides
    bool vector_rhs = false;     // solve, solve_with_lu: b of shape [..., n]
    bool left = true;            // triangular_solve, lu_solve: A X = B (else X A = B)
    bool adjoint = false;        // lu_solve: with A^H
    bool unit = false;           // triangular_solve: a unit diagonal, not read
    bool upper = false;          // cholesky: return U; eigh, eigvalsh: read the upper triangle;
                                 // triangular_solve: A is upper triangular
    bool full = false;           // svd: full_matrices
    QrMode qr_mode = QrMode::reduced;
};

// Dimensions of output 0 that form one item of the batch (a matrix 2, a vector 1, a scalar 0).
inline int output_item_dims(Op op, const ferro_prepare_args& args) {
    switch (op) {
        case Op::det:
        case Op::slogdet:
        case Op::matrix_rank: return 0;
        case Op::eigh:
        case Op::eigvalsh:
        case Op::svdvals:
        case Op::eig:
        case Op::eigvals: return 1;
        case Op::solve:
        case Op::solve_with_lu: return solve_vector_rhs(args.inputs[0], args.inputs[1]) ? 1 : 2;
        default: return 2;
    }
}

// The geometry of a call (inferred signatures, attributes normalised in the contract's order).
// vector_norm, matrix_norm, cond and inverse_gaps take any layout of their axes: {} for them.
inline Geometry read_geometry(Op op, const ferro_prepare_args& args) {
    Geometry g;
    if (op == Op::vector_norm || op == Op::matrix_norm || op == Op::cond || op == Op::inverse_gaps) return g;
    const ferro_signature& a = args.inputs[0];
    const ferro_attr_value* attrs = args.attrs;
    g.m = a.shape[a.ndim - 2];
    g.n = a.shape[a.ndim - 1];
    g.k = std::min(g.m, g.n);
    const auto right_hand_sides = [&](const ferro_signature& b) { return g.left ? b.shape[b.ndim - 1] : b.shape[b.ndim - 2]; };
    switch (op) {
        case Op::solve:
        case Op::solve_with_lu:
            g.vector_rhs = solve_vector_rhs(a, args.inputs[1]);
            g.k = g.vector_rhs ? 1 : args.inputs[1].shape[args.inputs[1].ndim - 1];
            break;
        case Op::lstsq: g.k = args.inputs[1].shape[args.inputs[1].ndim - 1]; break;
        case Op::triangular_solve:
            g.upper = attrs[0].v.boolean != 0;
            g.left = attrs[1].v.boolean != 0;
            g.unit = attrs[2].v.boolean != 0;
            g.k = right_hand_sides(args.inputs[1]);
            break;
        case Op::lu_solve:
            g.left = attrs[0].v.boolean != 0;
            g.adjoint = attrs[1].v.boolean != 0;
            g.k = right_hand_sides(args.inputs[2]);
            break;
        case Op::cholesky: g.upper = attrs[0].v.boolean != 0; break;
        case Op::eigh:
        case Op::eigvalsh: g.upper = std::strcmp(attrs[0].v.str, "U") == 0; break;
        case Op::svd: g.full = attrs[0].v.boolean != 0; break;
        case Op::qr:
            g.qr_mode = std::strcmp(attrs[0].v.str, "complete") == 0 ? QrMode::complete
                        : std::strcmp(attrs[0].v.str, "r") == 0      ? QrMode::r
                                                                     : QrMode::reduced;
            break;
        default: break;
    }
    const ferro_signature& out0 = args.outputs[0];
    g.batch.assign(out0.shape, out0.shape + out0.ndim - output_item_dims(op, args));
    for (int64_t d : g.batch) g.count *= d;
    return g;
}

}  // namespace ferro::family::linalg
