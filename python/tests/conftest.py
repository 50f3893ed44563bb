import numpy as np
import pytest

import ferro


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of a scalar numpy function f at x (real or complex x: the gradient
    in torch's convention, d/dRe + i d/dIm)."""
    x = np.array(x, dtype=np.result_type(x, np.float64))
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        for direction in ((1.0,) if not np.iscomplexobj(x) else (1.0, 1j)):
            old = flat[i]
            flat[i] = old + eps * direction
            up = f(x)
            flat[i] = old - eps * direction
            down = f(x)
            flat[i] = old
            gflat[i] += direction * (up - down) / (2 * eps)
    return g


def gradcheck(fn, *inputs, rtol=1e-6, atol=1e-7):
    """ferro.grad of sum(real(fn(...))) weighted by a fixed random cotangent, against central differences."""
    rng = np.random.default_rng(7)
    out = np.asarray(fn(*[ferro.asarray(x) for x in inputs]))
    w = rng.standard_normal(out.shape)
    if np.iscomplexobj(out):
        w = w + 1j * rng.standard_normal(out.shape)

    def loss(*xs):
        y = fn(*xs)
        return ferro.real(ferro.sum(ferro.asarray(y) * ferro.conj(ferro.asarray(w))))

    argnums = tuple(range(len(inputs)))
    grads = ferro.grad(loss, argnums=argnums)(*inputs)
    for k, x in enumerate(inputs):
        def f_k(xk, k=k):
            xs = [ferro.asarray(v) for v in inputs]
            xs[k] = ferro.asarray(xk)
            return float(loss(*xs))
        expected = numeric_grad(f_k, x)
        np.testing.assert_allclose(np.asarray(grads[k]), expected, rtol=rtol, atol=atol)
