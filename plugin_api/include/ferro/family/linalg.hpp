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

#include "ferro/types.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace ferro::family::linalg {

inline constexpr const char* kId = "linalg";
inline constexpr const char* kVersion = "1.0.0";
inline constexpr int kMajor = 1;

enum class Op : uint32_t {
    solve, inv, det, slogdet, cholesky, qr, eigh, eigvalsh, svd, svdvals, triangular_solve, lu_factor, lu, lu_unpack,
    lu_solve, eig, eigvals, matrix_exp, pinv, matrix_rank, vector_norm, matrix_norm, cond, lstsq, inverse_gaps,
    solve_with_lu, count
};

inline constexpr const char* kOpNames[] = {
    "solve", "inv", "det", "slogdet", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "triangular_solve",
    "lu_factor", "lu", "lu_unpack", "lu_solve", "eig", "eigvals", "matrix_exp", "pinv", "matrix_rank", "vector_norm",
    "matrix_norm", "cond", "lstsq", "inverse_gaps", "solve_with_lu"};
static_assert(std::size(kOpNames) == static_cast<size_t>(Op::count));

inline const char* op_name(Op op) { return kOpNames[static_cast<uint32_t>(op)]; }  // "solve"

// qr's modes.
enum class QrMode : uint32_t { reduced, complete, r };

// solve's b is a vector (or a batch of them) when it is 1-D, or when its shape is A's without
// the last dimension (PyTorch's rule; numpy 2 only has the first).
inline bool solve_vector_rhs(const ferro_signature& a, const ferro_signature& b) {
    return b.ndim == 1 || (b.ndim == a.ndim - 1 && std::equal(b.shape, b.shape + b.ndim, a.shape));
}

}  // namespace ferro::family::linalg
