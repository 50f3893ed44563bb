"""numpy.linalg's functions (and torch.linalg's extras) on the linalg family: LAPACK on the cpu
engine, differentiable (docs/linalg.md). Every op of the family is also in ferro.ops.linalg
with the op's own attribute names."""
from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, Sequence, Union

from . import _ferro
from ._convert import asarray
from ._ferro import Tensor
from ._schema import documented


def _call(op: str, *inputs: Any, **attrs: Any) -> list:
    tensors = [asarray(x) for x in inputs]
    return _ferro.call(op, tensors, attrs, tensors[0].runtime)


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


@documented("linalg.svd")
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """numpy.linalg.svd: (U, S, Vh) with a = U diag(S) Vh; S alone when compute_uv is False.
    hermitian is accepted for numpy's signature; the general SVD is used."""
    del hermitian
    if not compute_uv:
        return _call("linalg.svdvals", a)[0]
    return SVDResult(*_call("linalg.svd", a, full_matrices=full_matrices))


@documented("linalg.svdvals")
def svdvals(a: Any) -> Tensor:
    """numpy.linalg.svdvals: the singular values, descending."""
    return _call("linalg.svdvals", a)[0]


@documented("linalg.eigh")
def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """numpy.linalg.eigh: eigenvalues (ascending) and eigenvectors of a Hermitian matrix."""
    return EighResult(*_call("linalg.eigh", a, uplo=UPLO))


@documented("linalg.eigvalsh")
def eigvalsh(a: Any, UPLO: str = "L") -> Tensor:
    return _call("linalg.eigvalsh", a, uplo=UPLO)[0]


@documented("linalg.eig")
def eig(a: Any) -> EigResult:
    """numpy.linalg.eig: complex eigenvalues and unit eigenvectors of a general matrix."""
    return EigResult(*_call("linalg.eig", a))


@documented("linalg.eigvals")
def eigvals(a: Any) -> Tensor:
    return _call("linalg.eigvals", a)[0]


@documented("linalg.qr")
def qr(a: Any, mode: str = "reduced") -> Any:
    """numpy.linalg.qr: (Q, R) for mode "reduced" or "complete"; R alone for mode "r"."""
    outs = _call("linalg.qr", a, mode=mode)
    return outs[0] if mode == "r" else QRResult(*outs)


@documented("linalg.cholesky")
def cholesky(a: Any, upper: bool = False) -> Tensor:
    return _call("linalg.cholesky", a, upper=upper)[0]


@documented("linalg.det")
def det(a: Any) -> Tensor:
    return _call("linalg.det", a)[0]


@documented("linalg.slogdet")
def slogdet(a: Any) -> SlogdetResult:
    return SlogdetResult(*_call("linalg.slogdet", a))


@documented("linalg.inv")
def inv(a: Any) -> Tensor:
    return _call("linalg.inv", a)[0]


@documented("linalg.pinv")
def pinv(a: Any, rcond: Optional[float] = None, hermitian: bool = False, *, rtol: Optional[float] = None,
         atol: Optional[float] = None) -> Tensor:
    """numpy.linalg.pinv: rcond (or rtol) relative to the largest singular value."""
    return _call("linalg.pinv", a, rtol=rtol if rtol is not None else rcond, atol=atol, hermitian=hermitian)[0]


@documented("linalg.matrix_rank")
def matrix_rank(A: Any, tol: Optional[float] = None, hermitian: bool = False, *, rtol: Optional[float] = None) -> Tensor:
    """numpy.linalg.matrix_rank: tol is absolute, rtol relative to the largest singular value."""
    return _call("linalg.matrix_rank", A, atol=tol, rtol=rtol, hermitian=hermitian)[0]


@documented("linalg.solve")
def solve(a: Any, b: Any) -> Tensor:
    return _call("linalg.solve", a, b)[0]


@documented("linalg.lstsq")
def lstsq(a: Any, b: Any, rcond: Optional[float] = None) -> LstsqResult:
    return LstsqResult(*_call("linalg.lstsq", a, b, rcond=rcond))


@documented("linalg.matrix_exp")
def matrix_exp(a: Any) -> Tensor:
    """torch.linalg.matrix_exp (scipy.linalg.expm)."""
    return _call("linalg.matrix_exp", a)[0]


def _ord_str(ord: Any) -> str:
    if ord is None:
        return "fro"
    if isinstance(ord, str):
        return ord
    if ord == math.inf:
        return "inf"
    if ord == -math.inf:
        return "-inf"
    return str(int(ord))


@documented("linalg.vector_norm")
def vector_norm(x: Any, ord: float = 2, axis: Optional[Union[int, Sequence[int]]] = None,
                keepdims: bool = False) -> Tensor:
    axes = None if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return _call("linalg.vector_norm", x, ord=float(ord), axes=axes, keepdim=keepdims)[0]


@documented("linalg.matrix_norm")
def matrix_norm(x: Any, ord: Any = "fro", keepdims: bool = False) -> Tensor:
    return _call("linalg.matrix_norm", x, ord=_ord_str(ord), keepdim=keepdims)[0]


def norm(x: Any, ord: Any = None, axis: Optional[Union[int, Sequence[int]]] = None, keepdims: bool = False) -> Tensor:
    """numpy.linalg.norm: a vector norm over one axis (or the whole flattened array when axis
    is None and ord is None), a matrix norm over two axes."""
    t = asarray(x)
    if axis is None:
        if ord is None:
            return vector_norm(t, 2, None, keepdims)
        axis = tuple(range(t.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        return vector_norm(t, 2 if ord is None else ord, axes, keepdims)
    if len(axes) == 2:
        return _call("linalg.matrix_norm", t, ord=_ord_str(ord), axes=list(axes), keepdim=keepdims)[0]
    raise ValueError(f"linalg.norm: {len(axes)} axes; a norm is over 1 (vector) or 2 (matrix)")


@documented("linalg.cond")
def cond(x: Any, p: Any = None) -> Tensor:
    return _call("linalg.cond", x, p="2" if p is None else _ord_str(p))[0]


@documented("linalg.lu_factor")
def lu_factor(a: Any) -> tuple:
    """torch.linalg.lu_factor: (LU, pivots), LAPACK's packed form with 1-based pivots."""
    return tuple(_call("linalg.lu_factor", a))


@documented("linalg.lu")
def lu(a: Any) -> tuple:
    """scipy.linalg.lu / torch.linalg.lu: (P, L, U) with a = P L U."""
    return tuple(_call("linalg.lu", a))


@documented("linalg.lu_solve")
def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False) -> Tensor:
    return _call("linalg.lu_solve", LU, pivots, B, left=left, adjoint=adjoint)[0]


@documented("linalg.triangular_solve")
def solve_triangular(a: Any, b: Any, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """torch.linalg.solve_triangular: X with a X = b (left) or X a = b for triangular a."""
    return _call("linalg.triangular_solve", a, b, upper=upper, left=left, unitriangular=unitriangular)[0]


__all__ = ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "qr", "cholesky", "det", "slogdet", "inv", "pinv",
           "matrix_rank", "solve", "lstsq", "matrix_exp", "vector_norm", "matrix_norm", "norm", "cond", "lu_factor",
           "lu", "lu_solve", "solve_triangular"]
