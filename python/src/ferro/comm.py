"""Collectives across the processes of the runtime's communicator (docs/comm.md): mpirun's
ranks, or one process (rank 0 of 1). Differentiable: the objective is the sum of the ranks'
losses, as in torch.distributed."""
from __future__ import annotations

from typing import Any, Optional

from . import _ferro
from ._convert import asarray
from ._ferro import Tensor
from ._schema import documented


def _call(name: str, x: Any, timeout: Optional[float], **attrs: Any) -> Tensor:
    t = asarray(x)
    if timeout is not None:
        attrs["timeout"] = float(timeout)
    return _ferro.call(name, [t], attrs, t.runtime)[0]


def rank(runtime=None) -> int:
    return (runtime or _ferro.default_runtime()).rank_size()[0]


def size(runtime=None) -> int:
    return (runtime or _ferro.default_runtime()).rank_size()[1]


@documented("comm.allreduce")
def allreduce(x: Any, op: str = "sum", *, timeout: Optional[float] = None) -> Tensor:
    return _call("comm.allreduce", x, timeout, op=op)


@documented("comm.allgather")
def allgather(x: Any, *, timeout: Optional[float] = None) -> Tensor:
    return _call("comm.allgather", x, timeout)


@documented("comm.reduce_scatter")
def reduce_scatter(x: Any, *, timeout: Optional[float] = None) -> Tensor:
    return _call("comm.reduce_scatter", x, timeout)


@documented("comm.broadcast")
def broadcast(x: Any, root: int = 0, *, timeout: Optional[float] = None) -> Tensor:
    return _call("comm.broadcast", x, timeout, root=root)


@documented("comm.reduce")
def reduce(x: Any, root: int = 0, *, timeout: Optional[float] = None) -> Tensor:
    return _call("comm.reduce", x, timeout, root=root)


@documented("comm.barrier")
def barrier(*, timeout: Optional[float] = None, runtime=None) -> None:
    attrs = {} if timeout is None else {"timeout": float(timeout)}
    _ferro.call("comm.barrier", [], attrs, runtime)


__all__ = ["rank", "size", "allreduce", "allgather", "reduce_scatter", "broadcast", "reduce", "barrier"]
