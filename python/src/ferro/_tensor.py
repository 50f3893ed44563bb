"""numpy's ndarray surface on ferro.Tensor: indexing, shape methods, reductions, conversions.
The operators and properties that every call reaches are in the extension (src/ext)."""
from __future__ import annotations

import builtins
import operator
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np
from numpy import ndarray, ufunc

from . import _dtypes, _ferro
from ._ferro import Tensor

Axis = Optional[Union[int, Sequence[int]]]


def call1(op: str, inputs: Sequence[Tensor], **attrs: Any) -> Tensor:
    return _ferro.call(op, list(inputs), attrs)[0]


def _axes(axis: Axis, ndim: int) -> Optional[list]:
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        return [int(axis)]
    return [int(a) for a in axis]


def _shape_arg(shape: tuple) -> list:
    """reshape(2, 3) and reshape((2, 3)) alike."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        return [operator.index(s) for s in shape[0]]
    return [operator.index(s) for s in shape]


# ---- indexing (basic: integers, slices, None, Ellipsis; a view, differentiable) ----------

def _getitem(self: Tensor, key: Any) -> Tensor:
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k)):
            raise IndexError(f"ferro.Tensor: index {k!r} of type {type(k).__name__}: only integers, slices, None and "
                             "... index a tensor (advanced indexing with arrays is not supported)")
    n_ellipsis = sum(k is Ellipsis for k in key)
    if n_ellipsis > 1:
        raise IndexError("ferro.Tensor: an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > self.ndim:
        raise IndexError(f"ferro.Tensor: too many indices: the tensor is {self.ndim}-dimensional, "
                         f"but {consumed} were indexed")
    if n_ellipsis:
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (slice(None),) * (self.ndim - consumed) + key[at + 1:]
    t, axis, source_axis = self, 0, 0  # axis: of t; source_axis: of self (for messages)
    for k in key:
        if k is None:
            t = call1("core.unsqueeze", [t], axis=axis)
            axis += 1
        elif isinstance(k, slice):
            if k != slice(None):
                if k.step == 0:
                    raise ValueError("ferro.Tensor: slice step cannot be zero")
                t = call1("core.slice", [t], axis=axis, start=_opt_int(k.start), stop=_opt_int(k.stop),
                          step=1 if k.step is None else operator.index(k.step))
            axis += 1
            source_axis += 1
        else:
            size = t.shape[axis]
            i = operator.index(k)
            if not -size <= i < size:
                raise IndexError(f"ferro.Tensor: index {i} is out of bounds for axis {source_axis} with size {size}")
            i %= size
            t = call1("core.slice", [t], axis=axis, start=i, stop=i + 1)
            t = call1("core.squeeze", [t], axes=[axis])
            source_axis += 1
    return t


def _is_int(k: Any) -> bool:
    if isinstance(k, (bool, np.bool_)):
        return False
    try:
        operator.index(k)
        return not isinstance(k, (Tensor, np.ndarray))
    except TypeError:
        return False


def _opt_int(v: Any) -> Optional[int]:
    return None if v is None else operator.index(v)


def _iter(self: Tensor):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _len(self: Tensor) -> int:
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


# ---- conversions ------------------------------------------------------------------------

def _item(self: Tensor) -> Any:
    if self.size != 1:
        raise ValueError(f"item: the tensor has {self.size} elements, not 1")
    return np.asarray(self).reshape(()).item()


def _scalar(kind):
    def convert(self: Tensor):
        if self.size != 1:
            raise TypeError(f"only one-element tensors convert to Python scalars (this one has {self.size})")
        return kind(np.asarray(self).reshape(()))
    return convert


def _bool(self: Tensor) -> bool:
    if self.size != 1:
        raise ValueError(f"the truth value of a tensor with {self.size} elements is ambiguous (use any() or all())")
    return builtins.bool(np.asarray(self).reshape(()))


def _index(self: Tensor) -> int:
    if self.dtype != _dtypes.int64 or self.size != 1:
        raise TypeError("only one-element int64 tensors can be used as an index")
    return int(np.asarray(self).reshape(()))


def _repr(self: Tensor) -> str:
    values = np.array2string(np.asarray(self), separator=", ", prefix="ferro.Tensor(")
    extra = f", dtype={self.dtype}"
    if self.device != "cpu":
        extra += f", device='{self.device}'"
    if self.grad_fn is not None:
        extra += f", grad_fn={self.grad_fn}"
    elif self.requires_grad:
        extra += ", requires_grad=True"
    return f"ferro.Tensor({values}{extra})"


def _astype(self: Tensor, dtype: Any, copy: bool = True) -> Tensor:
    """Elements converted to `dtype` (numpy's rules: complex to real drops the imaginary part)."""
    d = _dtypes.to_numpy_dtype(dtype)
    if d == self.dtype:
        return self.copy() if copy else self
    return call1("core.cast", [self], dtype=_dtypes.ferro_name(d))


# ---- shape and reductions ---------------------------------------------------------------

def _transpose(self: Tensor, *axes: Any) -> Tensor:
    if not axes or (len(axes) == 1 and axes[0] is None):
        return call1("core.permute", [self], axes=list(range(self.ndim))[::-1])
    return call1("core.permute", [self], axes=_shape_arg(axes))


def _reduce(t: Tensor, op: str, axis: Axis, keepdims: bool, dtype: Any = None, out: None = None) -> Tensor:
    """A reduction with numpy's arguments (numpy.sum(t) passes dtype and out to t.sum): dtype
    converts first; out is refused (tensors are values)."""
    if out is not None:
        raise TypeError(f"{op}: out= is not supported (ferro tensors are never written into)")
    if dtype is not None:
        t = _astype(t, dtype, copy=False)
    return call1(op, [t], axes=_axes(axis, t.ndim), keepdim=bool(keepdims))


def _array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any):
    """numpy's ufuncs on tensors: those with a ferro op run it (the result is a Tensor, on the
    tape like any op); the rest, and methods other than __call__, run in numpy on host copies."""
    from . import _functions
    fn = _functions.UFUNCS.get(ufunc.__name__)
    if method == "__call__" and fn is not None and not kwargs:
        return fn(*inputs)
    host = [np.asarray(x) if isinstance(x, Tensor) else x for x in inputs]
    if "out" in kwargs:
        kwargs["out"] = tuple(np.asarray(o) if isinstance(o, Tensor) else o for o in kwargs["out"])
    return getattr(ufunc, method)(*host, **kwargs)


class _Methods:
    """numpy's ndarray methods that Tensor gets from this module (_install copies them onto the
    extension's class, under its name, so that help() and the stubs show them as its own)."""

    def __getitem__(self, key: Any) -> Tensor:
        """Basic indexing: integers, slices, None, ... (a view, differentiable)."""
        return _getitem(self, key)

    def __iter__(self) -> Iterator[Tensor]:
        return _iter(self)

    def __len__(self) -> int:
        return _len(self)

    def __repr__(self) -> str:
        return _repr(self)

    def __str__(self) -> str:
        return np.array2string(np.asarray(self))

    def __bool__(self) -> bool:
        return _bool(self)

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its value (f"{t:.3f}"), others as their str."""
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __reduce__(self) -> tuple:
        """Pickled as its values (a host copy); unpickled into the default runtime, on the cpu."""
        from ._convert import asarray
        return asarray, (np.array(self),)

    def __float__(self) -> float:
        return _scalar(float)(self)

    def __int__(self) -> int:
        return _scalar(int)(self)

    def __complex__(self) -> complex:
        return _scalar(complex)(self)

    def __index__(self) -> int:
        return _index(self)

    def __abs__(self) -> Tensor:
        return call1("core.abs", [self])

    def __pos__(self) -> Tensor:
        return self

    def __invert__(self) -> Tensor:
        return call1("core.logical_not", [self])

    def __and__(self, other: Any) -> Tensor:
        return call1("core.logical_and", [self, _as(other, self)])

    def __or__(self, other: Any) -> Tensor:
        return call1("core.logical_or", [self, _as(other, self)])

    def __array_ufunc__(self, ufunc: ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _array_ufunc(self, ufunc, method, *inputs, **kwargs)

    def numpy(self) -> ndarray:
        """The values as a numpy array: a read-only view of a cpu tensor, else a copy."""
        return np.asarray(self)

    def item(self) -> Any:
        """The one element as a Python scalar."""
        return _item(self)

    def tolist(self) -> Any:
        return np.asarray(self).tolist()

    def astype(self, dtype: Any, copy: bool = True) -> Tensor:
        """Elements converted to `dtype` (numpy's rules: complex to real drops the imaginary part)."""
        return _astype(self, dtype, copy)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Sets requires_grad (a leaf of f32, f64, c64 or c128) and returns the tensor."""
        self.requires_grad = requires_grad
        return self

    def reshape(self, *shape: Any) -> Tensor:
        """reshape(2, 3) or reshape((2, 3)); -1 infers one size; a view when possible."""
        return call1("core.reshape", [self], shape=_shape_arg(shape))

    def transpose(self, *axes: Any) -> Tensor:
        """The axes reversed, or permuted as given (a view)."""
        return _transpose(self, *axes)

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        return call1("core.transpose", [self], dim0=axis1, dim1=axis2)

    def squeeze(self, axis: Optional[Union[int, Sequence[int]]] = None) -> Tensor:
        return call1("core.squeeze", [self], axes=_axes(axis, self.ndim))

    def flatten(self) -> Tensor:
        """A one-dimensional copy."""
        return call1("core.reshape", [call1("core.contiguous", [self])], shape=[-1]).copy()

    def ravel(self) -> Tensor:
        """One-dimensional: a view when possible."""
        return call1("core.reshape", [self], shape=[-1])

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
        return call1("core.diagonal", [self], offset=offset, axis1=axis1, axis2=axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
        return _reduce(self.diagonal(offset, axis1, axis2), "core.sum", -1, False)

    @property
    def T(self) -> Tensor:
        """The axes reversed (numpy's .T)."""
        return _transpose(self)

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (a stack of matrices transposed)."""
        return call1("core.transpose", [self], dim0=-2, dim1=-1)

    @property
    def real(self) -> Tensor:
        """The real part."""
        return call1("core.real", [self])

    @property
    def imag(self) -> Tensor:
        """The imaginary part (zeros for real tensors)."""
        return call1("core.imag", [self])

    def conj(self) -> Tensor:
        return call1("core.conj", [self])

    def conjugate(self) -> Tensor:
        return call1("core.conj", [self])

    def sum(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None,
            keepdims: bool = False) -> Tensor:
        return _reduce(self, "core.sum", axis, keepdims, dtype, out)

    def mean(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None,
            keepdims: bool = False) -> Tensor:
        return _reduce(self, "core.mean", axis, keepdims, dtype, out)

    def prod(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None,
            keepdims: bool = False) -> Tensor:
        return _reduce(self, "core.prod", axis, keepdims, dtype, out)

    def max(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None,
            keepdims: bool = False) -> Tensor:
        return _reduce(self, "core.max", axis, keepdims, dtype, out)

    def min(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None,
            keepdims: bool = False) -> Tensor:
        return _reduce(self, "core.min", axis, keepdims, dtype, out)

    def any(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None,
            keepdims: bool = False) -> Tensor:
        return _reduce(self, "core.any", axis, keepdims, dtype, out)

    def all(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None,
            keepdims: bool = False) -> Tensor:
        return _reduce(self, "core.all", axis, keepdims, dtype, out)

    def matmul(self, other: Any) -> Tensor:
        return self @ other


def _install() -> None:
    for name, value in vars(_Methods).items():
        fn = value.fget if isinstance(value, property) else value
        if not callable(fn):
            continue  # the class's own __module__, __doc__, ...
        fn.__qualname__ = f"Tensor.{name}"
        fn.__module__ = Tensor.__module__
        setattr(Tensor, name, value)


def _as(other: Any, like: Tensor) -> Tensor:
    from ._convert import asarray
    return asarray(other, runtime=like.runtime)


_install()
