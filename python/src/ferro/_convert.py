"""Tensors from numpy arrays, DLPack producers (torch, jax, cupy) and Python data, without
copying where the layout allows; and the tensor's side of numpy's and DLPack's protocols."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy import ndarray

from . import _dtypes, _errors, _ferro
from ._ferro import Tensor

_DL_CPU = 1


def _runtime(runtime):
    return runtime if runtime is not None else _ferro.default_runtime()


def _from_ndarray(a: np.ndarray, rt, copy: Optional[bool]) -> Tensor:
    """Borrows `a`'s memory when ferro can read it as it is, else copies (copy=False: error)."""
    d = a.dtype
    target = d.newbyteorder("=") if d.byteorder not in "=|" else d
    if target in _dtypes.WIDENED:
        target = _dtypes.WIDENED[target]
    elif target not in _dtypes.DTYPES:
        raise TypeError(f"ferro.asarray: dtype {d} has no ferro dtype "
                        "(float32, float64, complex64, complex128, int64, bool; smaller ints and float16 are widened)")
    needs_copy = (target != d or not a.flags.aligned
                  or any(s % d.itemsize for s in a.strides))
    if needs_copy:
        if copy is False:
            raise ValueError(f"ferro.asarray: copy=False, but an array of dtype {d} "
                             f"({'unaligned or oddly strided' if target == d else 'converted to ' + str(target)}) "
                             "needs a copy")
        a = np.ascontiguousarray(a, dtype=target)
        copy = False  # made here: the borrow below owns its only reference
    t = _ferro._borrow_cpu(rt, a)
    return t.copy() if copy else t


def _from_dlpack_object(x: Any, rt, copy: Optional[bool]) -> Tensor:
    device_type, _ = x.__dlpack_device__()
    if device_type != _DL_CPU:
        t = _ferro._from_capsule(rt, x.__dlpack__())
        return t.copy() if copy else t
    try:
        t = _ferro._borrow_cpu(rt, x)
    except TypeError:
        # A dtype ferro has not (torch's int32, bfloat16...): numpy converts it, with a copy.
        return _from_ndarray(np.from_dlpack(x), rt, copy)
    return t.copy() if copy else t


def asarray(obj: Any, dtype: Any = None, *, device: Optional[str] = None, copy: Optional[bool] = None,
            runtime=None) -> Tensor:
    """A tensor of `obj` (numpy.asarray's meaning): a Tensor as it is; a numpy array, or any
    object with ``__dlpack__`` (torch, jax, cupy), sharing its memory when ferro can read it
    as it is; nested sequences and scalars as numpy would make them. copy=True always copies,
    copy=False raises ValueError where a copy is needed. `device` names an engine ("cpu",
    "vulkan:0"): the tensor is moved there (a copy). Memory shared with numpy stays shared:
    writing to the array later changes the tensor, as with torch.from_numpy."""
    rt = _runtime(runtime)
    if isinstance(obj, Tensor):
        t = obj
        if copy:
            t = t.copy()
    elif isinstance(obj, np.ndarray):
        t = _from_ndarray(obj, rt, copy)
    elif hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        t = _from_dlpack_object(obj, rt, copy)
    else:
        t = _from_ndarray(np.asarray(obj), rt, copy)
    if dtype is not None:
        d = _dtypes.to_numpy_dtype(dtype)
        if d != t.dtype:
            if copy is False:
                raise ValueError(f"ferro.asarray: copy=False, but converting {t.dtype} to {d} needs a copy")
            t = t.astype(d)
    if device is not None and device != t.device:
        if copy is False:
            raise ValueError(f"ferro.asarray: copy=False, but moving to {device} needs a copy")
        t = t.to(device)
    return t


def array(obj: Any, dtype: Any = None, *, device: Optional[str] = None, copy: bool = True, runtime=None) -> Tensor:
    """numpy.array: asarray that copies by default."""
    return asarray(obj, dtype, device=device, copy=copy, runtime=runtime)


def from_dlpack(x: Any, *, device: Optional[str] = None, copy: Optional[bool] = None, runtime=None) -> Tensor:
    """A tensor sharing the memory of any DLPack producer (the array API's from_dlpack): a
    torch tensor, jax array, numpy array or cupy array; versioned DLPack (1.x) where the
    producer speaks it. CPU memory becomes a "cpu" tensor; device memory goes to the engine
    that owns the device (kDLCUDA n: "cuda:n")."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"ferro.from_dlpack: {type(x).__name__} has no __dlpack__")
    if isinstance(x, Tensor):
        t = x.copy() if copy else x
    else:
        t = _from_dlpack_object(x, _runtime(runtime), copy)
    if device is not None and device != t.device:
        if copy is False:
            raise ValueError(f"ferro.from_dlpack: copy=False, but moving to {device} needs a copy")
        t = t.to(device)
    return t


def _dlpack(self: Tensor, *, stream: Any = None, max_version: Optional[tuple] = None,
            dl_device: Optional[tuple] = None, copy: Optional[bool] = None) -> Any:
    """A DLPack capsule sharing the tensor's memory: versioned ("dltensor_versioned") when the
    consumer's max_version is 1.x or later, else the 0.x one. copy=True exports a copy.
    `stream` is accepted for the protocol; ferro's engines finish their work before a call
    returns, so nothing needs synchronising."""
    del stream
    source = self.copy() if copy else self
    if dl_device is not None and tuple(dl_device) != source.__dlpack_device__():
        raise BufferError(f"Tensor.__dlpack__: the tensor is on {source.device} "
                          f"(DLPack device {source.__dlpack_device__()}), not {tuple(dl_device)}")
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = tuple(max_version)
    try:
        exported = source._dlpack_export()
    except _errors.UnimplementedError as e:  # an engine whose memory has no address (vulkan)
        raise BufferError(str(e)) from e
    return exported.__dlpack__(**kwargs)


def _array(self: Tensor, dtype: Any = None, copy: Optional[bool] = None) -> ndarray:
    """numpy.asarray(t): a read-only view of a cpu tensor (other engines: a host copy)."""
    t = self
    copied = False
    if t.device != "cpu":
        if copy is False:
            raise ValueError(f"__array__: copy=False, but the tensor is on {t.device}")
        t = t.to("cpu")
        copied = True
    a = np.asarray(_HostView(t))
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return a.astype(dtype)
    if copy and not copied:
        return a.copy()
    return a


class _HostView:
    """Holds a cpu tensor while numpy's array over its memory lives."""

    __slots__ = ("tensor", "__array_interface__")

    def __init__(self, tensor: Tensor):
        self.tensor = tensor
        self.__array_interface__ = tensor.__array_interface__


for _name, _fn in (("__dlpack__", _dlpack), ("__array__", _array)):
    _fn.__name__, _fn.__qualname__, _fn.__module__ = _name, f"Tensor.{_name}", Tensor.__module__
    setattr(Tensor, _name, _fn)
