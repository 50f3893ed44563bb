"""numpy's ndarray surface on ferro.Tensor: indexing, shape methods, reductions, conversions.
The operators and properties that every call reaches are in the extension (src/ext)."""
from __future__ import annotations

import builtins
import operator
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np

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

def _numpy(self: Tensor) -> np.ndarray:
    """The values as a numpy array: a read-only view of a cpu tensor, else a copy."""
    return np.asarray(self)


def _item(self: Tensor) -> Any:
    if self.size != 1:
        raise ValueError(f"item: the tensor has {self.size} elements, not 1")
    return np.asarray(self).reshape(()).item()


def _tolist(self: Tensor) -> Any:
    return np.asarray(self).tolist()


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


def _requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    self.requires_grad = requires_grad
    return self


# ---- shape ------------------------------------------------------------------------------

def _reshape(self: Tensor, *shape: Any) -> Tensor:
    return call1("core.reshape", [self], shape=_shape_arg(shape))


def _transpose(self: Tensor, *axes: Any) -> Tensor:
    if not axes or (len(axes) == 1 and axes[0] is None):
        return call1("core.permute", [self], axes=list(range(self.ndim))[::-1])
    return call1("core.permute", [self], axes=_shape_arg(axes))


def _swapaxes(self: Tensor, axis1: int, axis2: int) -> Tensor:
    return call1("core.transpose", [self], dim0=axis1, dim1=axis2)


def _squeeze(self: Tensor, axis: Axis = None) -> Tensor:
    return call1("core.squeeze", [self], axes=_axes(axis, self.ndim))


def _flatten(self: Tensor) -> Tensor:
    return call1("core.reshape", [call1("core.contiguous", [self])], shape=[-1]).copy()


def _ravel(self: Tensor) -> Tensor:
    return call1("core.reshape", [self], shape=[-1])


def _diagonal(self: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    return call1("core.diagonal", [self], offset=offset, axis1=axis1, axis2=axis2)


def _trace(self: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    return _reduce("core.sum")(_diagonal(self, offset, axis1, axis2), axis=-1)


# ---- reductions -------------------------------------------------------------------------

def _reduce(op: str):
    def reduce(self: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
        return call1(op, [self], axes=_axes(axis, self.ndim), keepdim=bool(keepdims))
    reduce.__name__ = op.split(".")[1]
    reduce.__doc__ = f"{op} over `axis` (None: all axes), numpy's keepdims."
    return reduce


def _unary(op: str):
    def unary(self: Tensor) -> Tensor:
        return call1(op, [self])
    unary.__name__ = op.split(".")[1]
    return unary


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


def _install() -> None:
    T = Tensor
    T.__getitem__ = _getitem
    T.__iter__ = _iter
    T.__len__ = _len
    T.__repr__ = _repr
    T.__str__ = lambda self: np.array2string(np.asarray(self))
    T.__bool__ = _bool
    T.__float__ = _scalar(float)
    T.__int__ = _scalar(int)
    T.__complex__ = _scalar(complex)
    T.__index__ = _index
    T.__abs__ = _unary("core.abs")
    T.__pos__ = lambda self: self
    T.__invert__ = _unary("core.logical_not")
    T.__and__ = lambda self, other: call1("core.logical_and", [self, _as(other, self)])
    T.__or__ = lambda self, other: call1("core.logical_or", [self, _as(other, self)])
    T.__array_ufunc__ = _array_ufunc
    T.numpy = _numpy
    T.item = _item
    T.tolist = _tolist
    T.astype = _astype
    T.requires_grad_ = _requires_grad_
    T.reshape = _reshape
    T.transpose = _transpose
    T.swapaxes = _swapaxes
    T.squeeze = _squeeze
    T.flatten = _flatten
    T.ravel = _ravel
    T.diagonal = _diagonal
    T.trace = _trace
    T.T = property(lambda self: _transpose(self), doc="The axes reversed (numpy's .T).")
    T.mT = property(lambda self: _swapaxes(self, -2, -1), doc="The last two axes swapped (a stack of matrices transposed).")
    T.real = property(_unary("core.real"), doc="The real part (a copy for complex tensors).")
    T.imag = property(_unary("core.imag"), doc="The imaginary part (zeros for real tensors).")
    T.conj = _unary("core.conj")
    T.conjugate = T.conj
    T.sum = _reduce("core.sum")
    T.mean = _reduce("core.mean")
    T.prod = _reduce("core.prod")
    T.max = _reduce("core.max")
    T.min = _reduce("core.min")
    T.any = _reduce("core.any")
    T.all = _reduce("core.all")
    T.matmul = lambda self, other: self @ other


def _as(other: Any, like: Tensor) -> Tensor:
    from ._convert import asarray
    return asarray(other, runtime=like.runtime)


_install()
