"""Autodiff from Python against finite differences (and torch.autograd where torch is installed)."""
import numpy as np
import pytest

import ferro
from conftest import gradcheck, numeric_grad


def test_backward_accumulates_into_leaves(rng):
    a = rng.standard_normal((3, 3))
    x = ferro.asarray(a).requires_grad_()
    y = (ferro.sin(x) * x).sum()
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.cos(a) * a + np.sin(a), rtol=1e-13)
    assert x.grad_fn is None and y.grad_fn == "core.sum"
    (x * 2).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.cos(a) * a + np.sin(a) + 2, rtol=1e-13)
    x.grad = None
    assert x.grad is None
    with pytest.raises(ValueError, match="only None"):
        x.grad = ferro.zeros(3)


def test_backward_with_seed_and_retain_graph(rng):
    a = rng.standard_normal(4)
    x = ferro.asarray(a).requires_grad_()
    y = x * x
    seed = rng.standard_normal(4)
    y.backward(ferro.asarray(seed), retain_graph=True)
    y.backward(ferro.asarray(seed))
    np.testing.assert_allclose(np.asarray(x.grad), 4 * a * seed, rtol=1e-14)
    with pytest.raises(ferro.InvalidArgumentError):
        (x * x).backward()  # not one element: a seed is required


@pytest.mark.parametrize("fn", [
    lambda x: ferro.tanh(x @ x.T).sum(axis=0),
    lambda x: (x[1:, ::2] ** 3).mean(),
    lambda x: ferro.exp(ferro.concatenate([x, x * x], axis=1)).max(axis=1),
    lambda x: ferro.where(x > 0, x, ferro.sin(x)),
])
def test_gradients_match_finite_differences(fn, rng):
    gradcheck(fn, rng.standard_normal((3, 4)))


def test_complex_gradients(rng):
    z = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    gradcheck(lambda t: (t @ t) * ferro.conj(t), z)


def test_grad_composes_for_higher_order():
    f = lambda x: (x ** 4).sum()
    x = np.array([1.5, -0.5])
    np.testing.assert_allclose(np.asarray(ferro.grad(f)(x)), 4 * x ** 3, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(ferro.grad(lambda v: ferro.grad(f)(v).sum())(x)), 12 * x ** 2, rtol=1e-14)
    third = ferro.grad(lambda v: ferro.grad(lambda w: ferro.grad(f)(w).sum())(v).sum())(x)
    np.testing.assert_allclose(np.asarray(third), 24 * x, rtol=1e-14)


def test_grad_argnums_aux_and_unused_inputs():
    f = lambda a, b, c: ((a * b).sum(), "aux")
    ga, gc = ferro.grad(f, argnums=(0, 2), has_aux=True)(np.ones(2), np.full(2, 3.0), np.ones(2))[0]
    np.testing.assert_array_equal(np.asarray(ga), [3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(gc), [0.0, 0.0])  # unused: zeros, as jax
    value, g = ferro.value_and_grad(lambda a: (a * a).sum())(np.array([2.0]))
    assert float(value) == 4.0 and float(g[0]) == 4.0
    with pytest.raises(ValueError, match="one element"):
        ferro.grad(lambda a: a * 2)(np.ones(2))


def test_vjp_and_jvp_against_finite_differences(rng):
    a = rng.standard_normal((3, 3))
    f = lambda x: ferro.sin(x) @ x
    out, vjp_fn = ferro.vjp(f, a)
    w = rng.standard_normal((3, 3))
    (g,) = vjp_fn(w)
    expected = numeric_grad(lambda x: float((np.sin(x) @ x * w).sum()), a)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6, atol=1e-8)
    (g2,) = vjp_fn(w)  # the graph is kept
    np.testing.assert_allclose(np.asarray(g2), np.asarray(g))
    v = rng.standard_normal((3, 3))
    primal, tangent = ferro.jvp(f, (a,), (v,))
    np.testing.assert_allclose(np.asarray(primal), np.sin(a) @ a, rtol=1e-14)
    eps = 1e-6
    fd = (np.sin(a + eps * v) @ (a + eps * v) - np.sin(a - eps * v) @ (a - eps * v)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), fd, rtol=1e-6, atol=1e-8)


def test_hessian_vector_product_forward_over_reverse(rng):
    a = rng.standard_normal(4)
    v = rng.standard_normal(4)
    f = lambda x: (ferro.exp(x) * x).sum()
    _, hvp = ferro.jvp(ferro.grad(f), (a,), (v,))
    np.testing.assert_allclose(np.asarray(hvp), (np.exp(a) * (a + 2)) * v, rtol=1e-12)


def test_no_grad_and_autograd_grad(rng):
    x = ferro.asarray(rng.standard_normal(3)).requires_grad_()
    with ferro.no_grad():
        assert not ferro.is_grad_enabled()
        y = x * 2
    assert ferro.is_grad_enabled() and not y.requires_grad and y.grad_fn is None
    wrapped = ferro.no_grad()(lambda t: t * 3)
    assert not wrapped(x).requires_grad
    z = (x * x).sum()
    (gx,) = ferro.autograd.grad(z, x, create_graph=True)
    np.testing.assert_allclose(np.asarray(gx), 2 * np.asarray(x), rtol=1e-14)
    (gxx,) = ferro.autograd.grad(gx.sum(), x)
    np.testing.assert_array_equal(np.asarray(gxx), [2.0, 2.0, 2.0])
    other = ferro.asarray(np.ones(3)).requires_grad_()
    with pytest.raises(ValueError, match="allow_unused"):
        ferro.autograd.grad(z, [x, other])
    assert ferro.autograd.grad(z, [x, other], allow_unused=True)[1] is None


def test_requires_grad_only_for_inexact_leaves():
    with pytest.raises(ferro.InvalidArgumentError, match="i64|int"):
        ferro.arange(3).requires_grad_()


def test_against_torch_autograd(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((4, 4))
    b = rng.standard_normal((4, 4))
    x, y = ferro.asarray(a).requires_grad_(), ferro.asarray(b).requires_grad_()
    (ferro.tanh(x @ y) * ferro.exp(-x)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    ty = torch.tensor(b, requires_grad=True)
    (torch.tanh(tx @ ty) * torch.exp(-tx)).sum().backward()
    # entries near zero come from cancelling sums: an absolute tolerance at the values' ulp scale
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(np.asarray(y.grad), ty.grad.numpy(), rtol=1e-13, atol=1e-14)
    x.grad = None
    ferro.linalg.svd(x, full_matrices=False).S.sum().backward()
    tx.grad = None
    torch.linalg.svd(tx, full_matrices=False)[1].sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
