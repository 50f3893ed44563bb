"""einsum and einsum_path with numpy's arguments, on the einsum family (docs/einsum.md)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _ferro
from ._convert import asarray
from ._ferro import Tensor


def _parse(args: Sequence[Any]) -> Tuple[dict, List[Tensor]]:
    """The notation attribute and the operands of numpy's two call forms."""
    if not args:
        raise TypeError("einsum: expected subscripts and operands")
    if isinstance(args[0], str):
        operands = [asarray(a) for a in args[1:]]
        return {"subscripts": args[0]}, operands
    # einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])
    operands, encoded = [], []
    rest = list(args)
    while len(rest) >= 2:
        op, sub = rest[0], rest[1]
        if operands:
            encoded.append(-2)
        operands.append(asarray(op))
        encoded.extend(_labels(sub))
        rest = rest[2:]
    if rest:
        encoded.append(-3)
        encoded.extend(_labels(rest[0]))
    return {"sublists": encoded}, operands


def _labels(sublist: Any) -> List[int]:
    labels = []
    for s in sublist:
        if s is Ellipsis:
            labels.append(-1)
        else:
            label = int(s)
            if label < 0:
                raise ValueError(f"einsum: sublist label {label} is negative (use ... for an ellipsis)")
            labels.append(label)
    return labels


def _options(n_operands: int, optimize: Any, memory_limit: Optional[int], slices: Optional[int],
             distribute: bool, minimize: str, seed: int, repeats: int, max_seconds: float) -> dict:
    attrs: dict = {"minimize": minimize, "seed": seed, "repeats": repeats, "max_seconds": float(max_seconds)}
    if optimize is True or optimize is None:
        attrs["optimize"] = "auto"
    elif optimize is False:
        # numpy's unoptimised order: left to right.
        attrs["path"] = [0, 1] * max(n_operands - 1, 0)
    elif isinstance(optimize, str):
        attrs["optimize"] = optimize
    else:
        steps = list(optimize)
        if steps and steps[0] == "einsum_path":
            steps = steps[1:]
        flat = []
        for step in steps:
            if len(step) != 2:
                raise ValueError(f"einsum: path step {tuple(step)} contracts {len(step)} operands; ferro's paths are "
                                 "pairwise (opt_einsum's linear form)")
            flat.extend(int(i) for i in step)
        attrs["path"] = flat
    if memory_limit:
        attrs["memory_limit"] = int(memory_limit)
    if slices:
        attrs["slices"] = int(slices)
    if distribute:
        attrs["distribute"] = True
    return attrs


def einsum(*operands: Any, optimize: Any = "auto", memory_limit: Optional[int] = None, slices: Optional[int] = None,
           distribute: bool = False, minimize: str = "flops", seed: int = 0, repeats: int = 32,
           max_seconds: float = 0.0) -> Tensor:
    """numpy.einsum: ``einsum("ij,jk->ik", a, b)`` or the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    Any number of operands, contracted pairwise along an optimised path. optimize: "auto"
    (default; True too), "greedy", "optimal", "random-greedy", False (left to right, as
    numpy's default), or an explicit path (einsum_path's first result, or opt_einsum's linear
    form). memory_limit: bytes of working memory: labels are sliced to stay under it.
    slices: at least this many slices. distribute: spread the slices over the ranks of the
    runtime's communicator. minimize, seed, repeats, max_seconds: the path search's options.
    Differentiable in every operand."""
    notation, tensors = _parse(operands)
    if not tensors:
        raise TypeError("einsum: at least one operand is required")
    attrs = dict(notation)
    attrs.update(_options(len(tensors), optimize, memory_limit, slices, distribute, minimize, seed, repeats, max_seconds))
    return _ferro.call("einsum.einsum", tensors, attrs)[0]


class EinsumPathInfo:
    """What einsum_path found: the path's flops (opt_einsum's count) and largest intermediate
    (elements), and how the call would slice under its memory_limit."""

    def __init__(self, path: List[Tuple[int, int]], outs: List[Tensor], notation: dict):
        self.path = path
        self.flops = float(outs[1].item())
        self.largest_intermediate = float(outs[2].item())
        labels = np.asarray(outs[3]).reshape(-1, 2)
        self.sliced_labels = [_label_text(int(k), notation) for k, sliced in labels if sliced]
        self.slices = int(outs[4].item())
        self.sliced_flops = float(outs[5].item())
        self.working_bytes = float(outs[6].item())

    def __str__(self) -> str:
        lines = [f"  Optimized path: {self.path}",
                 f"  Optimized FLOP count: {self.flops:.4e}",
                 f"  Largest intermediate: {self.largest_intermediate:.4e} elements"]
        if self.slices > 1:
            lines.append(f"  Sliced labels: {self.sliced_labels} in {self.slices} slices, "
                         f"{self.sliced_flops:.4e} flops ({self.sliced_flops / max(self.flops, 1):.3f}x)")
        lines.append(f"  Working memory: {self.working_bytes:.4e} bytes")
        return "\n".join(lines)

    __repr__ = __str__


def _label_text(key: int, notation: dict) -> Any:
    return chr(key) if "subscripts" in notation else key


def einsum_path(*operands: Any, optimize: Any = "auto", memory_limit: Optional[int] = None,
                slices: Optional[int] = None, minimize: str = "flops", seed: int = 0, repeats: int = 32,
                max_seconds: float = 0.0) -> Tuple[list, EinsumPathInfo]:
    """numpy.einsum_path: (["einsum_path", (i, j), ...], info) for the path einsum would take
    with these options; the path can be passed back as einsum's optimize. info (printable)
    has the flop count, largest intermediate and, under a memory_limit, the slicing."""
    notation, tensors = _parse(operands)
    if not tensors:
        raise TypeError("einsum_path: at least one operand is required")
    attrs = dict(notation)
    attrs.update(_options(len(tensors), optimize, memory_limit, slices, False, minimize, seed, repeats, max_seconds))
    outs = _ferro.call("einsum.path", tensors, attrs)
    flat = [int(v) for v in np.asarray(outs[0]).reshape(-1)]
    path = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
    return ["einsum_path", *path], EinsumPathInfo(path, outs, notation)
