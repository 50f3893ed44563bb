"""Tensor's numpy semantics: properties, operators, promotion, indexing, reductions, creation."""
import operator

import numpy as np
import pytest

import ferro


def test_properties_follow_numpy(rng):
    a = rng.standard_normal((3, 4))
    t = ferro.asarray(a)
    assert t.shape == (3, 4) and t.ndim == 2 and t.size == 12
    assert t.dtype == np.float64 == ferro.float64 and t.itemsize == 8 and t.nbytes == 96
    assert t.strides == a.strides and t.device == "cpu"
    assert len(t) == 3
    assert t.T.shape == (4, 3) and t.T.strides == a.T.strides
    np.testing.assert_array_equal(np.asarray(t.T), a.T)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                                operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge])
def test_binary_operators_broadcast_like_numpy(op, rng):
    a = rng.uniform(0.5, 2.0, (4, 1, 3))
    b = rng.uniform(0.5, 2.0, (5, 1))
    got = op(ferro.asarray(a), ferro.asarray(b))
    want = op(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int64", "float32"), ("complex64", "float64"),
                                    ("bool", "int64"), ("int64", "complex128"), ("float32", "complex64")])
def test_promotion_matches_numpy(dtypes):
    a = np.ones(3, dtype=dtypes[0])
    b = np.ones(3, dtype=dtypes[1])
    assert (ferro.asarray(a) + ferro.asarray(b)).dtype == (a + b).dtype


@pytest.mark.parametrize("dtype,scalar", [("float32", 2.5), ("float32", 2), ("int64", 3), ("int64", 2.5),
                                          ("complex64", 1.5), ("float32", 1j), ("int64", True), ("bool", 2)])
def test_python_scalars_take_the_tensor_dtype_as_numpy2(dtype, scalar):
    a = np.arange(1, 4).astype(dtype)
    got = ferro.asarray(a) * scalar
    want = a * scalar
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want)
    rgot = scalar - ferro.asarray(a)
    assert rgot.dtype == (scalar - a).dtype
    np.testing.assert_allclose(np.asarray(rgot), scalar - a)


def test_matmul_and_numpy_operands(rng):
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((4, 5))
    np.testing.assert_allclose(np.asarray(ferro.asarray(a) @ b), a @ b, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(a @ ferro.asarray(b)), a @ b, rtol=1e-13)
    # numpy on the left defers to the tensor: the result is a Tensor
    assert isinstance(np.ones(4) + ferro.asarray(np.ones(4)), ferro.Tensor)


KEYS = [1, -1, slice(None, None, -1), (Ellipsis, 1), (None, 0, Ellipsis), (slice(1, None, 2), None, -2),
        (0, 1, 2), (slice(None), slice(3, 0, -2)), Ellipsis, (None,), (1, Ellipsis, None)]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_basic_indexing_matches_numpy(key, rng):
    a = rng.standard_normal((3, 4, 5))
    got = ferro.asarray(a)[key]
    want = a[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_indexing_errors_name_the_problem():
    t = ferro.asarray(np.zeros((2, 3)))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        t[0, 3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="advanced indexing"):
        t[np.array([0, 1])]
    with pytest.raises(ValueError, match="step cannot be zero"):
        t[::0]


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_reductions_match_numpy(name, axis, rng):
    a = rng.uniform(0.5, 1.5, (3, 4, 5))
    for keepdims in (False, True):
        got = getattr(ferro.asarray(a), name)(axis=axis, keepdims=keepdims)
        want = getattr(a, name)(axis=axis, keepdims=keepdims)
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
        np.testing.assert_allclose(np.asarray(getattr(ferro, name)(a, axis=axis, keepdims=keepdims)), want, rtol=1e-13)


def test_numpy_reductions_on_tensors(rng):
    a = rng.standard_normal((3, 4))
    t = ferro.asarray(a)
    np.testing.assert_allclose(np.asarray(np.sum(t)), np.sum(a), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(np.mean(t, axis=0, keepdims=True)), np.mean(a, axis=0, keepdims=True), rtol=1e-14)
    assert ferro.sum(ferro.asarray([1, 2]), dtype="float32").dtype == np.float32
    with pytest.raises(TypeError, match="out="):
        np.sum(t, out=np.zeros(()))


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arctan", "abs", "floor",
         "ceil", "negative", "square", "expm1", "log1p", "sign", "reciprocal", "rint"]


@pytest.mark.parametrize("name", UNARY)
def test_elementwise_functions_and_ufuncs_match_numpy(name, rng):
    a = rng.uniform(0.1, 0.9, (4, 3))
    want = getattr(np, name)(a)
    np.testing.assert_allclose(np.asarray(getattr(ferro, name)(a)), want, rtol=1e-14)
    via_ufunc = getattr(np, name)(ferro.asarray(a))
    assert isinstance(via_ufunc, ferro.Tensor)
    np.testing.assert_allclose(np.asarray(via_ufunc), want, rtol=1e-14)


def test_complex_parts(rng):
    z = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    t = ferro.asarray(z)
    np.testing.assert_array_equal(np.asarray(t.real), z.real)
    np.testing.assert_array_equal(np.asarray(t.imag), z.imag)
    np.testing.assert_array_equal(np.asarray(t.conj()), z.conj())
    np.testing.assert_allclose(np.asarray(ferro.angle(t)), np.angle(z), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(abs(t)), np.abs(z), rtol=1e-14)


def test_shape_methods(rng):
    a = rng.standard_normal((2, 3, 4))
    t = ferro.asarray(a)
    np.testing.assert_array_equal(np.asarray(t.reshape(4, 6)), a.reshape(4, 6))
    np.testing.assert_array_equal(np.asarray(t.reshape((-1, 4))), a.reshape(-1, 4))
    np.testing.assert_array_equal(np.asarray(t.transpose(1, 0, 2)), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(np.asarray(t.swapaxes(0, 2)), a.swapaxes(0, 2))
    np.testing.assert_array_equal(np.asarray(t[:, :1].squeeze(1)), a[:, :1].squeeze(1))
    np.testing.assert_array_equal(np.asarray(t.T.flatten()), a.T.flatten())
    np.testing.assert_array_equal(np.asarray(ferro.expand_dims(a, 1)), np.expand_dims(a, 1))
    np.testing.assert_array_equal(np.asarray(ferro.broadcast_to(a[:, :1], (2, 5, 4))), np.broadcast_to(a[:, :1], (2, 5, 4)))
    np.testing.assert_array_equal(np.asarray(ferro.concatenate([a, a], axis=1)), np.concatenate([a, a], axis=1))
    np.testing.assert_array_equal(np.asarray(ferro.stack([a, a], axis=-1)), np.stack([a, a], axis=-1))
    np.testing.assert_array_equal(np.asarray(ferro.roll(a, 1, 2)), np.roll(a, 1, 2))
    np.testing.assert_allclose(np.asarray(t.trace(0, 1, 2)), a.trace(0, 1, 2), rtol=1e-14)
    np.testing.assert_array_equal(np.asarray(ferro.where(a > 0, a, 0.0)), np.where(a > 0, a, 0.0))


def test_creation_functions():
    assert ferro.zeros((2, 3)).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(ferro.ones(3, dtype=ferro.float32)), np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(ferro.full((2, 2), 7)), np.full((2, 2), 7))
    assert ferro.full((2, 2), 7).dtype == np.int64
    np.testing.assert_array_equal(np.asarray(ferro.full((2,), 1 + 2j)), np.full((2,), 1 + 2j))
    np.testing.assert_array_equal(np.asarray(ferro.arange(5)), np.arange(5))
    assert ferro.arange(5).dtype == np.int64
    np.testing.assert_allclose(np.asarray(ferro.arange(0.5, 3, 0.5)), np.arange(0.5, 3, 0.5))
    np.testing.assert_array_equal(np.asarray(ferro.eye(3, 4, k=1)), np.eye(3, 4, k=1))
    np.testing.assert_allclose(np.asarray(ferro.linspace(0, 1, 7)), np.linspace(0, 1, 7))
    a = ferro.randn((1000,), seed=3)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(ferro.randn((1000,), seed=3)))
    assert abs(float(a.mean())) < 0.2 and 0.8 < float((a * a).mean()) < 1.2
    u = np.asarray(ferro.rand((1000,), seed=3))
    assert u.min() >= 0 and u.max() < 1


def test_conversions_and_repr():
    t = ferro.asarray([[1.5, 2.0]])
    assert t.tolist() == [[1.5, 2.0]]
    assert float(t[0, 0]) == 1.5 and t[0, 1].item() == 2.0
    assert int(ferro.asarray(3)) == 3 and complex(ferro.asarray(1j)) == 1j
    assert [1, 2, 3][ferro.asarray(1)] == 2
    assert bool(ferro.asarray(1.0)) and not bool(ferro.asarray(0.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(ferro.asarray([1.0, 2.0]))
    assert repr(t) == "ferro.Tensor([[1.5, 2. ]], dtype=float64)"
    x = ferro.asarray([1.0]).requires_grad_()
    assert "requires_grad=True" in repr(x) and "grad_fn=core.mul" in repr(x * 2)
    assert t.astype("float32").dtype == np.float32 and t.astype("c128").dtype == np.complex128


def test_tensors_are_not_hashable_and_compare_elementwise():
    t = ferro.asarray([1.0, 2.0])
    with pytest.raises(TypeError):
        hash(t)
    np.testing.assert_array_equal(np.asarray(t == 1.0), [True, False])


def test_products_match_numpy(rng):
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((5, 4, 2))
    for axes in (1, ([1, 2], [1, 0]), ([-1], [0]), 0):
        np.testing.assert_allclose(np.asarray(ferro.tensordot(a, b, axes)), np.tensordot(a, b, axes), rtol=1e-13)
    m, v = rng.standard_normal((4, 5)), rng.standard_normal(5)
    c = rng.standard_normal((2, 5, 3))
    for x, y in ((m, v), (v, v), (a, c), (m, m.T), (2.0, v)):
        np.testing.assert_allclose(np.asarray(ferro.dot(x, y)), np.dot(x, y), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ferro.inner(a, m)), np.inner(a, m), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ferro.outer(m, v)), np.outer(m, v), rtol=1e-14)
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    np.testing.assert_allclose(np.asarray(ferro.vdot(z, z[::-1])), np.vdot(z, z[::-1]), rtol=1e-13)


def test_tensor_pickle_and_format():
    import pickle
    t = ferro.tensor([[1.0, 2.0]], requires_grad=True)
    assert t.requires_grad and t.grad_fn is None
    back = pickle.loads(pickle.dumps(t))
    assert isinstance(back, ferro.Tensor) and back.tolist() == [[1.0, 2.0]] and back.dtype == t.dtype
    assert f"{t[0, 1]:.3f}" == "2.000" and f"{ferro.asarray([1, 2])}" == "[1 2]"


def test_sums_are_pairwise_as_numpys():
    """numpy's own accuracy test of its pairwise summation (test_umath.py)."""
    eps = np.finfo(np.float64).eps
    x = np.ones(10**6) * (1 + 8196 * eps)
    exact = 10**6 * (1 + 8196 * eps)
    for got in (ferro.sum(x), ferro.einsum("i->", x), ferro.asarray(x).mean() * 10**6,
                ferro.sum(ferro.sum(x.reshape(1000, 1000), axis=0))):
        assert abs(float(got) - exact) / exact < 1.5e-15
