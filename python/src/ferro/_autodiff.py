"""Autodiff from Python: torch's tensor methods (requires_grad, backward, grad) are on Tensor;
here are grad mode and the functional transforms (jax's grad, vjp and jvp; torch.autograd.grad)."""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from . import _ferro
from ._convert import asarray
from ._ferro import Tensor

Argnums = Union[int, Sequence[int]]


class no_grad:
    """Context manager and decorator: ops called inside record nothing for backward (this
    thread only)."""

    def __enter__(self) -> "no_grad":
        _ferro._no_grad_push()
        return self

    def __exit__(self, *exc: Any) -> None:
        _ferro._no_grad_pop()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with no_grad():
                return fn(*args, **kwargs)
        return wrapped


def is_grad_enabled() -> bool:
    return _ferro.grad_enabled()


def _differentiable(x: Any) -> Tuple[Tensor, Tensor, bool]:
    """(the argument to call the function with, the tensor to differentiate with respect to,
    whether the result must stay differentiable: the argument belongs to an outer
    differentiation, reverse (it requires grad) or forward (it carries a tangent))."""
    t = asarray(x)
    if t.requires_grad:
        return t, t, True
    leaf = t.detach()
    leaf.requires_grad = True
    tangent = t.tangent
    if tangent is not None:  # forward over reverse: the leaf carries the tangent on
        return _ferro.make_dual(leaf, tangent), leaf, True
    return leaf, leaf, False


def _zeros_like(t: Tensor) -> Tensor:
    from ._functions import zeros_like
    return zeros_like(t)


def grad(fun: Callable, argnums: Argnums = 0, has_aux: bool = False) -> Callable:
    """jax.grad: a function returning the gradient of `fun` (one-element output) with respect
    to argument(s) `argnums`. Composes with itself for higher derivatives."""
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def g(*args: Any, **kwargs: Any) -> Any:
        value, grads = vg(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return g


def value_and_grad(fun: Callable, argnums: Argnums = 0, has_aux: bool = False) -> Callable:
    """jax.value_and_grad: (fun's value, its gradient)."""
    many = not isinstance(argnums, int)
    nums = tuple(argnums) if many else (argnums,)

    @functools.wraps(fun)
    def vg(*args: Any, **kwargs: Any) -> Any:
        args = list(args)
        nested = False
        inputs = []
        for i in nums:
            args[i], wrt, outer = _differentiable(args[i])
            inputs.append(wrt)
            nested = nested or outer
        result = fun(*args, **kwargs)
        out = result[0] if has_aux else result
        out = asarray(out)
        if out.size != 1:
            raise ValueError(f"ferro.grad: the function must return one element, got shape {out.shape} (use ferro.vjp)")
        grads = _ferro.vjp([out], [None], inputs, nested)
        grads = tuple(g if g is not None else _zeros_like(x) for g, x in zip(grads, inputs))
        return result, (grads if many else grads[0])
    return vg


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """jax.vjp: (fun(*primals), vjp_fn) where vjp_fn(cotangent) gives one cotangent per primal
    (cotangents for a tuple output: a tuple). vjp_fn may be called several times."""
    args, inputs = [], []
    nested = False
    for p in primals:
        arg, wrt, outer = _differentiable(p)
        args.append(arg)
        inputs.append(wrt)
        nested = nested or outer
    result = fun(*args)
    out = result[0] if has_aux else result
    outs = list(out) if isinstance(out, (tuple, list)) else [out]

    def vjp_fn(cotangent: Any) -> tuple:
        cots = list(cotangent) if isinstance(out, (tuple, list)) else [cotangent]
        cots = [None if c is None else asarray(c, runtime=o.runtime) for c, o in zip(cots, outs)]
        grads = _ferro.vjp(outs, cots, inputs, nested or _any_requires_grad(cots))
        return tuple(g if g is not None else _zeros_like(x) for g, x in zip(grads, inputs))
    return (out, vjp_fn, result[1]) if has_aux else (out, vjp_fn)


def _any_requires_grad(ts: Sequence[Optional[Tensor]]) -> bool:
    return any(t is not None and t.requires_grad for t in ts)


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> Tuple[Any, Any]:
    """jax.jvp: (fun(*primals), the directional derivative along `tangents`), by forward mode:
    each primal carries its tangent through every op's JVP rule."""
    if len(primals) != len(tangents):
        raise ValueError(f"ferro.jvp: {len(primals)} primals but {len(tangents)} tangents")
    duals = []
    for p, t in zip(primals, tangents):
        p = asarray(p)
        duals.append(_ferro.make_dual(p, asarray(t, runtime=p.runtime)))
    out = fun(*duals)

    def tangent_of(o: Tensor) -> Tensor:
        t = o.tangent
        return t if t is not None else _zeros_like(o)
    if isinstance(out, (tuple, list)):
        return type(out)(o for o in out), type(out)(tangent_of(o) for o in out)
    return out, tangent_of(out)


class autograd:
    """torch.autograd's functional entry point."""

    @staticmethod
    def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: Optional[bool] = None,
             create_graph: bool = False, allow_unused: bool = False) -> tuple:
        """torch.autograd.grad: the gradients of `outputs` (weighted by `grad_outputs`) with
        respect to `inputs` (tensors that require grad). The graph is kept either way."""
        del retain_graph
        outs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        ins = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
        cots = None
        if grad_outputs is not None:
            cots = list(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else [grad_outputs]
        grads = _ferro.vjp(outs, cots or [], ins, create_graph)
        if not allow_unused and any(g is None for g in grads):
            i = next(i for i, g in enumerate(grads) if g is None)
            raise ValueError(f"ferro.autograd.grad: input {i} is not used to compute the outputs (allow_unused=True "
                             "returns None for it)")
        return tuple(grads)
