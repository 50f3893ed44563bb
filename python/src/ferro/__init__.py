"""ferro from Python: tensors with numpy's semantics on ferro's runtime, differentiable through
every op, zero-copy with numpy, torch and jax (docs/python.md).

    import ferro
    a = ferro.asarray(numpy_array)           # shares its memory
    b = ferro.randn((3, 3), seed=0)
    c = (a @ b + 1.0).sum(axis=0)            # numpy broadcasting and promotion
    x = ferro.asarray([1.0, 2.0]).requires_grad_()
    (x * x).sum().backward(); x.grad         # autodiff
    ferro.einsum("ij,jk->ik", a, b); ferro.linalg.svd(a); ferro.fft.rfft(a)
    ferro.call("demo.axpy", x, y, alpha=2.0) # any plugin op by name
"""
from __future__ import annotations

import atexit as _atexit
from typing import Any as _Any

from . import _ferro
from ._ferro import Program, PreparedProgram, Runtime, Tensor, version, abi_version
from . import _errors, _tensor  # noqa: F401  (installs the exception classes and Tensor's methods)
from ._errors import *  # noqa: F401,F403
from ._dtypes import bool_, complex64, complex128, float32, float64, int64
from ._convert import array, asarray, from_dlpack
from ._functions import FUNCTIONS as _FUNCTIONS
from ._autodiff import autograd, grad, is_grad_enabled, jvp, no_grad, value_and_grad, vjp
from ._einsum import EinsumPathInfo, einsum, einsum_path
from ._compile import Compiled, compile
from ._inventory import diagnostics, engine_kinds, engines, families, modules, ops as op_schemas, plugins, search_path
from ._schema import Ops as _Ops, describe
from . import comm, fft, linalg

globals().update(_FUNCTIONS)

ops = _Ops()
"""Every loaded family's ops as functions with the op's attribute names: ferro.ops.linalg.qr(a, mode="r")."""

newaxis = None


def runtime() -> Runtime:
    """The default runtime: plugins from the search path (FERRO_PLUGIN_PATH, then
    lib/ferro/plugins next to libferro), made on first use."""
    return _ferro.default_runtime()


def call(op: str, *inputs: _Any, runtime: Runtime = None, **attrs: _Any) -> _Any:
    """Calls any op by qualified name: ``ferro.call("linalg.qr", a, mode="r")``. Inputs are
    anything ferro.asarray takes; attributes are keywords. One output is returned as a Tensor,
    several as a tuple."""
    tensors = [asarray(x, runtime=runtime) for x in inputs]
    outs = _ferro.call(op, tensors, attrs, runtime if runtime is not None else (tensors[0].runtime if tensors else None))
    if len(outs) == 1:
        return outs[0]
    return tuple(outs) if outs else None


# The default runtime goes before the interpreter does (tensors still alive keep it).
_atexit.register(_ferro._release_default_runtime)

__version__ = version()
