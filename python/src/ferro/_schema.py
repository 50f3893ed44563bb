"""Op schemas from the inventory: docstrings and signatures for the family functions, and
ferro.ops, where every op of every loaded family is a function (third-party plugins too)."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, Optional

from . import _ferro


@functools.lru_cache(maxsize=None)
def _ops_of_default_runtime() -> Dict[str, dict]:
    try:
        inventory = _ferro.default_runtime()._inventory()
    except Exception:  # no runtime (a broken install): functions keep their own docstrings
        return {}
    return {op["name"]: op for op in inventory["ops"]}


def schema(op: str) -> Optional[dict]:
    return _ops_of_default_runtime().get(op)


def describe(op: str) -> str:
    """The op's schema as text: what it computes, its attributes with types, defaults and
    meaning, its dtypes and derivative rules."""
    s = schema(op)
    if s is None:
        return f"{op}: not loaded (ferro.plugins() and ferro.diagnostics() say what is installed)"
    lines = [f"{op}: {s['doc']}"]
    if s["attrs"]:
        lines.append("")
        lines.append("Attributes:")
        for a in s["attrs"]:
            default = "required" if a["required"] else f"default {a['default']!r}"
            lines.append(f"    {a['name']} ({a['type']}, {default}): {a['doc']}")
    if s["dtypes"]:
        lines.append("")
        lines.append(f"dtypes: {', '.join(s['dtypes'])}; "
                     f"vjp: {'yes' if s['has_vjp'] else 'no'}, jvp: {'yes' if s['has_jvp'] else 'no'}")
    return "\n".join(lines)


def documented(op: str) -> Callable[[Callable], Callable]:
    """Appends the op's schema to a function's docstring."""
    def decorate(fn: Callable) -> Callable:
        fn.__doc__ = (fn.__doc__ or "").rstrip() + "\n\n" + describe(op)
        return fn
    return decorate


def make_op(op: str) -> Callable:
    """A function calling `op`: its inputs positionally, its attributes by keyword (with the
    schema's names and defaults). One output is returned as a Tensor, several as a tuple."""
    s = schema(op)
    if s is None:
        raise AttributeError(f"{op}: no loaded plugin provides it (ferro.plugins() lists what is loaded)")

    def fn(*inputs: Any, **attrs: Any) -> Any:
        from ._convert import asarray
        tensors = [asarray(x) for x in inputs]
        outs = _ferro.call(op, tensors, attrs, tensors[0].runtime if tensors else None)
        return outs[0] if len(outs) == 1 else tuple(outs)
    params = [inspect.Parameter("inputs", inspect.Parameter.VAR_POSITIONAL)]
    for a in s["attrs"]:
        default = inspect.Parameter.empty if a["required"] else a["default"]
        params.append(inspect.Parameter(a["name"], inspect.Parameter.KEYWORD_ONLY, default=default))
    fn.__signature__ = inspect.Signature(params)
    fn.__name__ = fn.__qualname__ = op.split(".", 1)[1]
    fn.__doc__ = describe(op)
    return fn


class Family:
    """One op family's ops as functions: ferro.ops.linalg.svd(a, full_matrices=False)."""

    def __init__(self, family: str):
        self._family = family

    def __getattr__(self, name: str) -> Callable:
        if name.startswith("_"):
            raise AttributeError(name)
        fn = make_op(f"{self._family}.{name}")
        setattr(self, name, fn)
        return fn

    def __dir__(self):
        prefix = self._family + "."
        return sorted(n[len(prefix):] for n in _ops_of_default_runtime() if n.startswith(prefix))


class Ops:
    """Every loaded op family as an attribute (ferro.ops.core, ferro.ops.linalg, ...)."""

    def __getattr__(self, family: str) -> Family:
        if family.startswith("_"):
            raise AttributeError(family)
        if not any(n.startswith(family + ".") for n in _ops_of_default_runtime()):
            raise AttributeError(f"ferro.ops: no loaded family '{family}' (ferro.families() lists them)")
        f = Family(family)
        setattr(self, family, f)
        return f

    def __dir__(self):
        return sorted({n.split(".", 1)[0] for n in _ops_of_default_runtime()})
