"""numpy.fft's functions, and scipy.fft's hfft2, ihfft2, hfftn and ihfftn, on the fft family:
FFTW on the cpu engine, plans made once per call signature, differentiable (docs/fft.md).
norm: None or "backward" (the default), "ortho", "forward"."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from . import _ferro
from ._convert import asarray
from ._ferro import Tensor
from ._functions import roll
from ._schema import documented


def _call(op: str, a: Any, **attrs: Any) -> Tensor:
    t = asarray(a)
    if attrs.get("norm") is None:
        attrs["norm"] = "backward"
    return _ferro.call(op, [t], attrs, t.runtime)[0]


def _one_axis(op: str):
    @documented(op)
    def fn(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Tensor:
        return _call(op, a, n=n, axis=axis, norm=norm)
    fn.__name__ = fn.__qualname__ = op.split(".")[1]
    fn.__doc__ = f"numpy.fft.{fn.__name__}(a, n=None, axis=-1, norm=None)." + fn.__doc__
    return fn


def _many_axes(op: str, default_axes: Optional[Sequence[int]]):
    @documented(op)
    def fn(a: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = default_axes,
           norm: Optional[str] = None) -> Tensor:
        return _call(op, a, s=None if s is None else list(s), axes=None if axes is None else list(axes), norm=norm)
    fn.__name__ = fn.__qualname__ = op.split(".")[1]
    lib = "scipy.fft" if "hfft" in fn.__name__ else "numpy.fft"
    fn.__doc__ = f"{lib}.{fn.__name__}(a, s=None, axes={default_axes}, norm=None)." + fn.__doc__
    return fn


fft = _one_axis("fft.fft")
ifft = _one_axis("fft.ifft")
rfft = _one_axis("fft.rfft")
irfft = _one_axis("fft.irfft")
hfft = _one_axis("fft.hfft")
ihfft = _one_axis("fft.ihfft")
fft2 = _many_axes("fft.fft2", (-2, -1))
ifft2 = _many_axes("fft.ifft2", (-2, -1))
rfft2 = _many_axes("fft.rfft2", (-2, -1))
irfft2 = _many_axes("fft.irfft2", (-2, -1))
fftn = _many_axes("fft.fftn", None)
ifftn = _many_axes("fft.ifftn", None)
rfftn = _many_axes("fft.rfftn", None)
irfftn = _many_axes("fft.irfftn", None)
hfft2 = _many_axes("fft.hfft2", (-2, -1))
ihfft2 = _many_axes("fft.ihfft2", (-2, -1))
hfftn = _many_axes("fft.hfftn", None)
ihfftn = _many_axes("fft.ihfftn", None)


def fftfreq(n: int, d: float = 1.0, *, device: str = "cpu") -> Tensor:
    """numpy.fft.fftfreq: the sample frequencies of an n-point transform (spacing d)."""
    return asarray(np.fft.fftfreq(n, d), device=device)


def rfftfreq(n: int, d: float = 1.0, *, device: str = "cpu") -> Tensor:
    """numpy.fft.rfftfreq: the n // 2 + 1 non-negative frequencies."""
    return asarray(np.fft.rfftfreq(n, d), device=device)


def _shift(x: Any, axes: Any, inverse: bool) -> Tensor:
    t = asarray(x)
    axes = range(t.ndim) if axes is None else ([axes] if isinstance(axes, int) else axes)
    for ax in axes:
        half = t.shape[ax] // 2
        t = roll(t, -half if inverse else half, ax)
    return t


def fftshift(x: Any, axes: Any = None) -> Tensor:
    """numpy.fft.fftshift: the zero frequency moved to the centre (differentiable)."""
    return _shift(x, axes, False)


def ifftshift(x: Any, axes: Any = None) -> Tensor:
    """numpy.fft.ifftshift: fftshift's inverse."""
    return _shift(x, axes, True)


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
