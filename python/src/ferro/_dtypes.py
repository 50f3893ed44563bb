"""ferro's dtypes as numpy dtype objects, and the conversions between their names."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _ferro

float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")

DTYPES = (float32, float64, complex64, complex128, int64, bool_)

# numpy dtypes ferro has no dtype of, and the one asarray converts them to (a copy): the
# smaller integers widen to int64 and half precision to float32, as numpy's promotion would
# with those; uint64 (no lossless ferro dtype) and everything else are refused.
WIDENED = {
    np.dtype(t): int64 for t in ("int8", "int16", "int32", "uint8", "uint16", "uint32")
}
WIDENED[np.dtype("float16")] = float32


def to_numpy_dtype(dtype: Any) -> np.dtype:
    """numpy's dtype for a dtype given as numpy does (np.float32, "float32", float) or by
    ferro's short names ("f32", "c128", "i64"); TypeError for one ferro has not."""
    if isinstance(dtype, str):
        name = _ferro._dtype_name(dtype)
        if name is not None:
            return {"f32": float32, "f64": float64, "c64": complex64, "c128": complex128, "i64": int64,
                    "bool": bool_}[name]
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"ferro: {dtype!r} is not a dtype") from e
    if d.newbyteorder("=") in DTYPES:
        return d.newbyteorder("=")
    raise TypeError(f"ferro: dtype {d} is not one of ferro's (float32, float64, complex64, complex128, int64, bool)")


def ferro_name(dtype: Any) -> str:
    """ferro's short name ("f64") of a dtype, the core ops' dtype attribute."""
    return _ferro._dtype_name(to_numpy_dtype(dtype).name)


def is_inexact(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"
