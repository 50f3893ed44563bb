"""numpy-named functions: creation, elementwise math, joining, reductions and shape."""
from __future__ import annotations

import operator
from typing import Any, Optional, Sequence

import numpy as np

from . import _dtypes, _ferro
from ._convert import asarray
from ._ferro import Tensor
from ._tensor import Axis, _reduce, call1


def _rt(runtime):
    return runtime if runtime is not None else _ferro.default_runtime()


def _shape(shape: Any) -> list:
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [operator.index(s) for s in shape]


# ---- creation ---------------------------------------------------------------------------

def _create(op: str, runtime, **attrs: Any) -> Tensor:
    return _ferro.call(op, [], attrs, _rt(runtime))[0]


def zeros(shape: Any, dtype: Any = _dtypes.float64, *, device: str = "cpu", runtime=None) -> Tensor:
    return _create("core.zeros", runtime, shape=_shape(shape), dtype=_dtypes.ferro_name(dtype), engine=device)


def ones(shape: Any, dtype: Any = _dtypes.float64, *, device: str = "cpu", runtime=None) -> Tensor:
    return _create("core.ones", runtime, shape=_shape(shape), dtype=_dtypes.ferro_name(dtype), engine=device)


def empty(shape: Any, dtype: Any = _dtypes.float64, *, device: str = "cpu", runtime=None) -> Tensor:
    """Like numpy.empty, but zero-filled: ferro tensors are values, never uninitialised."""
    return zeros(shape, dtype, device=device, runtime=runtime)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: str = "cpu", runtime=None) -> Tensor:
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
        dtype = _dtypes.WIDENED.get(dtype, dtype)
    value = complex(fill_value)
    return _create("core.full", runtime, shape=_shape(shape), dtype=_dtypes.ferro_name(dtype), engine=device,
                   value=value.real, value_imag=value.imag)


def zeros_like(a: Tensor, dtype: Any = None) -> Tensor:
    a = asarray(a)
    return zeros(a.shape, dtype or a.dtype, device=a.device, runtime=a.runtime)


def ones_like(a: Tensor, dtype: Any = None) -> Tensor:
    a = asarray(a)
    return ones(a.shape, dtype or a.dtype, device=a.device, runtime=a.runtime)


def full_like(a: Tensor, fill_value: Any, dtype: Any = None) -> Tensor:
    a = asarray(a)
    return full(a.shape, fill_value, dtype or a.dtype, device=a.device, runtime=a.runtime)


def arange(start: float, stop: Optional[float] = None, step: float = 1, dtype: Any = None, *, device: str = "cpu",
           runtime=None) -> Tensor:
    """numpy.arange: integers give int64 unless a dtype is given."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.result_type(start, stop, step)
        dtype = _dtypes.WIDENED.get(dtype, dtype)
    return _create("core.arange", runtime, start=float(start), stop=float(stop), step=float(step),
                   dtype=_dtypes.ferro_name(dtype), engine=device)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: Any = None, *,
             device: str = "cpu", runtime=None) -> Tensor:
    return asarray(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), device=device, runtime=runtime)


def eye(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = _dtypes.float64, *, device: str = "cpu",
        runtime=None) -> Tensor:
    return _create("core.eye", runtime, n=N, m=M, k=k, dtype=_dtypes.ferro_name(dtype), engine=device)


def identity(n: int, dtype: Any = _dtypes.float64, *, device: str = "cpu", runtime=None) -> Tensor:
    return eye(n, dtype=dtype, device=device, runtime=runtime)


def rand(shape: Any, dtype: Any = _dtypes.float64, *, seed: Optional[int] = None, device: str = "cpu",
         runtime=None) -> Tensor:
    """Uniform in [0, 1); the same seed gives the same values (None: a fresh stream)."""
    return _create("core.rand", runtime, shape=_shape(shape), dtype=_dtypes.ferro_name(dtype), seed=seed, engine=device)


def randn(shape: Any, dtype: Any = _dtypes.float64, *, seed: Optional[int] = None, device: str = "cpu",
          runtime=None) -> Tensor:
    """Standard normal; the same seed gives the same values (None: a fresh stream)."""
    return _create("core.randn", runtime, shape=_shape(shape), dtype=_dtypes.ferro_name(dtype), seed=seed, engine=device)


# ---- elementwise ------------------------------------------------------------------------

def _operands(*xs: Any) -> list:
    """Tensors for an op's inputs; Python scalars take their dtype from a tensor among them
    (numpy 2's rule, NEP 50)."""
    like = next((x for x in xs if isinstance(x, Tensor)), None)
    if like is None:
        return [asarray(x) for x in xs]
    return [x if isinstance(x, Tensor) else _ferro._operand(like, x) for x in xs]


def _unary(name: str, op: str, doc: str):
    def fn(x: Any) -> Tensor:
        return call1(op, _operands(x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary(name: str, op: str, doc: str):
    def fn(x1: Any, x2: Any) -> Tensor:
        return call1(op, _operands(x1, x2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


_UNARY = {
    "abs": "core.abs", "absolute": "core.abs", "negative": "core.neg", "exp": "core.exp", "expm1": "core.expm1",
    "log": "core.log", "log1p": "core.log1p", "sqrt": "core.sqrt", "square": "core.square", "sin": "core.sin",
    "cos": "core.cos", "tan": "core.tan", "sinh": "core.sinh", "cosh": "core.cosh", "tanh": "core.tanh",
    "arcsin": "core.arcsin", "arccos": "core.arccos", "arctan": "core.arctan", "floor": "core.floor",
    "ceil": "core.ceil", "rint": "core.round", "round": "core.round", "sign": "core.sign", "conj": "core.conj",
    "conjugate": "core.conj", "real": "core.real", "imag": "core.imag", "angle": "core.angle",
    "reciprocal": "core.reciprocal", "isfinite": "core.isfinite", "isinf": "core.isinf", "isnan": "core.isnan",
    "logical_not": "core.logical_not", "erf": "core.erf", "sigmoid": "core.sigmoid", "rsqrt": "core.rsqrt",
}
_BINARY = {
    "add": "core.add", "subtract": "core.sub", "multiply": "core.mul", "divide": "core.div",
    "true_divide": "core.div", "power": "core.pow", "matmul": "core.matmul", "maximum": "core.maximum",
    "minimum": "core.minimum", "arctan2": "core.arctan2", "equal": "core.eq", "not_equal": "core.ne",
    "less": "core.lt", "less_equal": "core.le", "greater": "core.gt", "greater_equal": "core.ge",
    "logical_and": "core.logical_and", "logical_or": "core.logical_or",
}
FUNCTIONS = {}
for _name, _op in _UNARY.items():
    FUNCTIONS[_name] = _unary(_name, _op, f"numpy.{_name} elementwise ({_op}; differentiable where defined).")
for _name, _op in _BINARY.items():
    FUNCTIONS[_name] = _binary(_name, _op, f"numpy.{_name} with broadcasting and promotion ({_op}).")

# numpy's ufuncs that Tensor.__array_ufunc__ runs as ferro ops (np.exp(t) is a Tensor).
UFUNCS = {name: fn for name, fn in FUNCTIONS.items() if isinstance(getattr(np, name, None), np.ufunc)}


def where(condition: Any, x: Any, y: Any) -> Tensor:
    """numpy.where(condition, x, y): x where the condition holds, else y (broadcast)."""
    c, a, b = _operands(condition, x, y)
    return call1("core.where", [c, a, b])


def clip(a: Any, a_min: Any, a_max: Any) -> Tensor:
    t = asarray(a)
    if a_min is not None:
        t = FUNCTIONS["maximum"](t, a_min)
    if a_max is not None:
        t = FUNCTIONS["minimum"](t, a_max)
    return t


# ---- reductions, joining and shape --------------------------------------------------------

def _reduction(name: str):
    op = {"amax": "core.max", "amin": "core.min"}.get(name, f"core.{name}")

    def fn(a: Any, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
        return _reduce(asarray(a), op, axis, keepdims, dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: {op} over `axis` (None: all)."
    return fn


for _name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "any", "all"):
    FUNCTIONS[_name] = _reduction(_name)


def concatenate(arrays: Sequence[Any], axis: int = 0) -> Tensor:
    return call1("core.concat", _operands(*arrays), axis=axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Tensor:
    return call1("core.stack", _operands(*arrays), axis=axis)


def reshape(a: Any, shape: Any) -> Tensor:
    return asarray(a).reshape(shape)


def transpose(a: Any, axes: Optional[Sequence[int]] = None) -> Tensor:
    t = asarray(a)
    return t.transpose() if axes is None else t.transpose(axes)


def swapaxes(a: Any, axis1: int, axis2: int) -> Tensor:
    return asarray(a).swapaxes(axis1, axis2)


def squeeze(a: Any, axis: Axis = None) -> Tensor:
    return asarray(a).squeeze(axis)


def expand_dims(a: Any, axis: int) -> Tensor:
    return call1("core.unsqueeze", [asarray(a)], axis=axis)


def broadcast_to(a: Any, shape: Any) -> Tensor:
    return call1("core.expand", [asarray(a)], shape=_shape(shape))


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    return asarray(a).diagonal(offset, axis1, axis2)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    return asarray(a).trace(offset, axis1, axis2)


def ascontiguousarray(a: Any) -> Tensor:
    return call1("core.contiguous", [asarray(a)])


def roll(a: Any, shift: int, axis: int) -> Tensor:
    """numpy.roll along one axis (differentiable: two slices joined)."""
    t = asarray(a)
    n = t.shape[axis]
    if n == 0:
        return t
    s = shift % n
    if s == 0:
        return t
    head = call1("core.slice", [t], axis=axis, start=n - s, stop=None, step=1)
    tail = call1("core.slice", [t], axis=axis, start=0, stop=n - s, step=1)
    return call1("core.concat", [head, tail], axis=axis)


def tensordot(a: Any, b: Any, axes: Any = 2) -> Tensor:
    """numpy.tensordot: the sum over `axes` (N: a's last N with b's first N; or (a_axes,
    b_axes)); a's free axes then b's, through einsum (differentiable, any rank)."""
    from ._einsum import einsum
    x, y = asarray(a), asarray(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        a_axes, b_axes = list(range(x.ndim - n, x.ndim)), list(range(n))
    else:
        a_axes, b_axes = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                          [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: {len(a_axes)} axes of a against {len(b_axes)} of b")
    a_axes = [ax % x.ndim for ax in a_axes]
    b_axes = [ax % y.ndim for ax in b_axes]
    a_labels = list(range(x.ndim))
    b_labels = list(range(x.ndim, x.ndim + y.ndim))
    for i, j in zip(a_axes, b_axes):
        b_labels[j] = a_labels[i]
    out = [lab for k, lab in enumerate(a_labels) if k not in a_axes]
    out += [lab for k, lab in enumerate(b_labels) if k not in b_axes]
    return einsum(x, a_labels, y, b_labels, out)


def dot(a: Any, b: Any) -> Tensor:
    """numpy.dot: a's last axis against b's second-to-last (its only one for a vector)."""
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return tensordot(x, y, axes=([-1], [-2 if y.ndim >= 2 else 0]))


def inner(a: Any, b: Any) -> Tensor:
    """numpy.inner: the sum over the last axes of both."""
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return tensordot(x, y, axes=([-1], [-1]))


def outer(a: Any, b: Any) -> Tensor:
    """numpy.outer: the flattened a against the flattened b."""
    return asarray(a).ravel()[:, None] * asarray(b).ravel()[None, :]


def vdot(a: Any, b: Any) -> Tensor:
    """numpy.vdot: the conjugated dot product of the flattened arrays."""
    return (asarray(a).ravel().conj() * asarray(b).ravel()).sum()


def tensor(data: Any, dtype: Any = None, *, device: Optional[str] = None, requires_grad: bool = False,
           runtime=None) -> Tensor:
    """torch.tensor's spelling: a copy of `data`, optionally a leaf that requires grad."""
    t = asarray(data, dtype, device=device, copy=True, runtime=runtime)
    if requires_grad:
        t.requires_grad = True
    return t


def copy(a: Any) -> Tensor:
    return asarray(a).copy()


def allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    return bool(np.allclose(np.asarray(asarray(a)), np.asarray(asarray(b)), rtol=rtol, atol=atol))


FUNCTIONS.update({
    "where": where, "clip": clip, "concatenate": concatenate, "stack": stack, "reshape": reshape,
    "transpose": transpose, "swapaxes": swapaxes, "squeeze": squeeze, "expand_dims": expand_dims,
    "broadcast_to": broadcast_to, "diagonal": diagonal, "trace": trace, "ascontiguousarray": ascontiguousarray,
    "roll": roll, "copy": copy, "allclose": allclose, "tensordot": tensordot, "dot": dot, "inner": inner,
    "outer": outer, "vdot": vdot, "tensor": tensor,
    "zeros": zeros, "ones": ones, "empty": empty, "full": full, "zeros_like": zeros_like, "ones_like": ones_like,
    "full_like": full_like, "arange": arange, "linspace": linspace, "eye": eye, "identity": identity,
    "rand": rand, "randn": randn,
})
