"""ferro.Error and its subclasses, one per status code of the C API (ferro/status.h).

Each also derives from the built-in exception a Python caller would catch for it: an invalid
argument is a ValueError, an op or plugin not found a LookupError, and so on. Every error
carries the library's message, ``code`` (the number), ``code_name`` ("INVALID_ARGUMENT") and
``phase`` (where it happened: 0 none, 1 load, 2 prepare, 3 execute, 4 backward).
"""
from __future__ import annotations

from . import _ferro


class Error(Exception):
    """A failed ferro call."""

    code: int = 2
    code_name: str = "UNKNOWN"
    phase: int = 0


class CancelledError(Error):
    pass


class UnknownError(Error):
    pass


class InvalidArgumentError(Error, ValueError):
    pass


class DeadlineExceededError(Error, TimeoutError):
    pass


class NotFoundError(Error, LookupError):
    pass


class AlreadyExistsError(Error):
    pass


class PermissionDeniedError(Error, PermissionError):
    pass


class ResourceExhaustedError(Error, MemoryError):
    pass


class FailedPreconditionError(Error):
    pass


class AbortedError(Error):
    pass


class OutOfRangeError(Error, IndexError):
    pass


class UnimplementedError(Error, NotImplementedError):
    pass


class InternalError(Error):
    pass


class UnavailableError(Error):
    pass


class DataLossError(Error):
    pass


class UnauthenticatedError(Error):
    pass


class IncompatibleError(Error):
    """A plugin built for an ABI this host does not speak."""


class NotDifferentiableError(Error):
    """Backward or forward mode through an op (or output) without a derivative rule."""


_BY_CODE = {
    1: CancelledError,
    2: UnknownError,
    3: InvalidArgumentError,
    4: DeadlineExceededError,
    5: NotFoundError,
    6: AlreadyExistsError,
    7: PermissionDeniedError,
    8: ResourceExhaustedError,
    9: FailedPreconditionError,
    10: AbortedError,
    11: OutOfRangeError,
    12: UnimplementedError,
    13: InternalError,
    14: UnavailableError,
    15: DataLossError,
    16: UnauthenticatedError,
    100: IncompatibleError,
    101: NotDifferentiableError,
}
_ferro._set_error_classes(_BY_CODE)

__all__ = ["Error"] + sorted(cls.__name__ for cls in _BY_CODE.values())
