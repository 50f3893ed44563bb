"""ferro.linalg against numpy.linalg and scipy.linalg, with gradients."""
import numpy as np
import pytest
import scipy.linalg

import ferro
from conftest import gradcheck

A = np.array  # short


def spd(rng, n, dtype=np.float64):
    m = rng.standard_normal((n, n)).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        m = m + 1j * rng.standard_normal((n, n))
    return m @ m.conj().T + n * np.eye(n)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_decompositions_reconstruct_and_match_numpy(dtype, rng):
    a = rng.standard_normal((5, 4)).astype(dtype)
    if dtype == np.complex128:
        a = a + 1j * rng.standard_normal((5, 4))
    u, s, vh = ferro.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a, atol=1e-12)
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ferro.linalg.svd(a, compute_uv=False)), np.linalg.svdvals(a) if hasattr(np.linalg, "svdvals") else np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    assert ferro.linalg.svd(a).U.shape == (5, 5)
    q, r = ferro.linalg.qr(a)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.asarray(ferro.linalg.qr(a, mode="r"))), np.abs(np.linalg.qr(a, mode="r")), atol=1e-12)
    h = spd(rng, 4, dtype)
    w, v = ferro.linalg.eigh(h)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigh(h)[0], rtol=1e-12)
    np.testing.assert_allclose(h @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-11)
    np.testing.assert_allclose(np.asarray(ferro.linalg.eigvalsh(h, UPLO="U")), np.linalg.eigvalsh(h, UPLO="U"), rtol=1e-12)
    l = np.asarray(ferro.linalg.cholesky(h))
    np.testing.assert_allclose(l, np.linalg.cholesky(h), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ferro.linalg.cholesky(h, upper=True)), l.conj().T, rtol=1e-12)
    g = rng.standard_normal((4, 4)).astype(dtype)
    w, v = ferro.linalg.eig(g)
    np.testing.assert_allclose(g @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-11)
    np.testing.assert_allclose(np.sort_complex(np.asarray(ferro.linalg.eigvals(g))), np.sort_complex(np.linalg.eigvals(g)),
                               rtol=1e-11)
    p, lo, up = ferro.linalg.lu(g)
    np.testing.assert_allclose(np.asarray(p) @ np.asarray(lo) @ np.asarray(up), g, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_solvers_and_scalars_match_numpy(dtype, rng):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-11
    a = (rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(dtype)
    b = rng.standard_normal((4, 2)).astype(dtype)
    np.testing.assert_allclose(np.asarray(ferro.linalg.solve(a, b)), np.linalg.solve(a, b), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(ferro.linalg.inv(a)), np.linalg.inv(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(ferro.linalg.det(a)), np.linalg.det(a), rtol=tol)
    sign, logdet = ferro.linalg.slogdet(a)
    nsign, nlogdet = np.linalg.slogdet(a)
    np.testing.assert_allclose(np.asarray(sign), nsign, rtol=tol)
    np.testing.assert_allclose(np.asarray(logdet), nlogdet, rtol=tol)
    tall = rng.standard_normal((6, 3)).astype(dtype)
    np.testing.assert_allclose(np.asarray(ferro.linalg.pinv(tall)), np.linalg.pinv(tall), rtol=tol, atol=tol)
    x, res, rank, sv = ferro.linalg.lstsq(tall, rng.standard_normal((6, 2)).astype(dtype))
    assert int(rank) == 3 and x.shape == (3, 2)
    assert int(ferro.linalg.matrix_rank(tall @ tall.conj().T)) == 3
    lu, piv = ferro.linalg.lu_factor(a)
    np.testing.assert_allclose(np.asarray(ferro.linalg.lu_solve(lu, piv, b)), np.linalg.solve(a, b), rtol=tol, atol=tol)
    upper = np.triu(a)
    np.testing.assert_allclose(np.asarray(ferro.linalg.solve_triangular(upper, b, upper=True)),
                               scipy.linalg.solve_triangular(upper, b, lower=False), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(ferro.linalg.matrix_exp(a / 4)), scipy.linalg.expm(a / 4), rtol=tol, atol=tol)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms_and_cond(ord, rng):
    a = rng.standard_normal((4, 4))
    np.testing.assert_allclose(np.asarray(ferro.linalg.norm(a, ord, axis=(0, 1))), np.linalg.norm(a, ord, axis=(0, 1)),
                               rtol=1e-12)
    if ord not in ("fro", "nuc"):
        np.testing.assert_allclose(np.asarray(ferro.linalg.cond(a, ord)), np.linalg.cond(a, ord), rtol=1e-10)


@pytest.mark.parametrize("ord", [None, 1, 2, 3.5, np.inf, -np.inf, 0])
def test_vector_norms(ord, rng):
    x = rng.standard_normal((3, 5))
    np.testing.assert_allclose(np.asarray(ferro.linalg.norm(x, ord, axis=1)), np.linalg.norm(x, ord, axis=1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ferro.linalg.norm(x)), np.linalg.norm(x), rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda a: ferro.linalg.inv(a), lambda a: ferro.linalg.det(a), lambda a: ferro.linalg.svd(a).S,
    lambda a: ferro.linalg.eigh(a @ a.T).eigenvalues, lambda a: ferro.linalg.solve(a, a[:, :1]),
    lambda a: ferro.linalg.qr(a).R, lambda a: ferro.linalg.matrix_exp(a), lambda a: ferro.linalg.pinv(a),
    lambda a: ferro.linalg.slogdet(a).logabsdet, lambda a: ferro.linalg.cholesky(a @ a.T + 4 * ferro.eye(4)),
], ids=["inv", "det", "svdvals", "eigh", "solve", "qr", "matrix_exp", "pinv", "slogdet", "cholesky"])
def test_linalg_gradients(fn, rng):
    gradcheck(fn, rng.standard_normal((4, 4)) + 3 * np.eye(4), rtol=1e-5, atol=1e-7)


def test_every_linalg_op_is_callable_by_its_op_name(rng):
    names = {op.name.split(".")[1] for op in ferro.op_schemas("linalg")}
    assert {"svd", "qr", "eigh", "solve", "lu_factor", "inverse_gaps"} <= names
    r = ferro.ops.linalg.qr(rng.standard_normal((4, 3)), mode="r")
    assert r.shape == (3, 3)
    assert "mode" in str(__import__("inspect").signature(ferro.ops.linalg.qr))
