"""ferro.compile: capture a function's op calls once per input signature and replay them as a
prepared program (docs/capture.md)."""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Dict, Optional

from . import _ferro
from ._convert import asarray
from ._ferro import Tensor


class Compiled:
    """A function whose calls are captured per signature (the tensors' dtypes and shapes and
    the other arguments' values) and replayed afterwards. The first call with a signature runs
    eagerly while recording; later ones run the prepared program: no Python, no dispatch, the
    plans and memory of the capture reused. Arguments that are not tensors or arrays are
    constants of the program (they must be hashable). Gradients flow through replays as through
    the calls they replay. Inside the function, what a replay could not repeat (reading values
    on the host, writing into tensors, unseeded random ops) raises FailedPreconditionError."""

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._programs: Dict[Any, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, *args: Any) -> Any:
        tensors, positions, statics = [], [], []
        for i, a in enumerate(args):
            if _is_array(a):
                tensors.append(asarray(a))
                positions.append(i)
            else:
                statics.append((i, a))
        key = (_signature(tensors), tuple(positions), tuple(statics))
        try:
            hash(key)
        except TypeError:
            i, a = next((i, a) for i, a in statics if not _hashable(a))
            raise TypeError(f"ferro.compile: argument {i} ({type(a).__name__}) is neither a tensor nor hashable: "
                            "constants of a program are told apart by value") from None
        with self._lock:
            entry = self._programs.get(key)
        if entry is not None:
            prepared, structure = entry
            return _unflatten(prepared(tensors), structure)
        if not tensors:
            return self._fn(*args)
        call_args = list(args)
        for i, t in zip(positions, tensors):
            call_args[i] = t
        rt = tensors[0].runtime
        _ferro.capture_begin(rt, tensors)
        try:
            result = self._fn(*call_args)
            outputs, structure = _flatten(result)
            program = _ferro.capture_end(rt, outputs)
        except BaseException:
            _ferro.capture_abort()
            raise
        prepared = program.prepare(tensors)
        with self._lock:
            self._programs.setdefault(key, (prepared, structure))
        return result

    @property
    def cache_size(self) -> int:
        """How many signatures have a prepared program."""
        return len(self._programs)

    def describe(self, *args: Any) -> Optional[str]:
        """The prepared program for these arguments' signature, as JSON (None before the first call)."""
        signature = _signature([asarray(a) for a in args if _is_array(a)])
        for key, (prepared, _) in self._programs.items():
            if key[0] == signature:
                return prepared.describe()
        return None


def _is_array(a: Any) -> bool:
    """An argument that is an input of the program (the rest are its constants)."""
    return isinstance(a, Tensor) or hasattr(a, "__array_interface__") or hasattr(a, "__dlpack__")


def _signature(tensors: list) -> tuple:
    return tuple((t.dtype.num, t.shape, t.device) for t in tensors)


def _hashable(a: Any) -> bool:
    try:
        hash(a)
        return True
    except TypeError:
        return False


def _flatten(result: Any):
    if isinstance(result, Tensor):
        return [result], None
    if isinstance(result, (tuple, list)) and all(isinstance(r, Tensor) for r in result):
        return list(result), type(result)
    raise TypeError("ferro.compile: the function must return a Tensor or a tuple or list of Tensors, "
                    f"not {type(result).__name__}")


def _unflatten(outputs: list, structure: Any) -> Any:
    return outputs[0] if structure is None else structure(outputs)


def compile(fn: Optional[Callable] = None) -> Any:
    """Decorator: ``@ferro.compile`` (see Compiled)."""
    if fn is None:
        return compile
    return Compiled(fn)
