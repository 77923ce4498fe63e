"""Shape and dtype rules of the tensor expressions ``script_inputs.py`` reads from a script's text.

A script's kernel inputs are sometimes computed from its arrays rather than constructed (the rotary tutorial's
``cos, sin = generate_pos_embedding(hd, cache_ids)``: an ``arange`` divided, indexed with ``None``, expanded,
multiplied, transposed and concatenated). Their shapes follow from PyTorch's and NumPy's documented rules
(broadcasting, ``@``, basic indexing, ``expand``, ``transpose``, ``cat``/``stack``); no value is computed. Every
rule raises :class:`ShapeUnknown` where the rule would need what it does not know (mixed tensor dtypes, a
non-literal index), so that the reader forgets the name rather than guess.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import numpy as np

Shape = tuple[int, ...]


class ShapeUnknown(Exception):
    """The rule cannot tell the result's shape or dtype."""


def broadcast(*shapes: Shape) -> Shape:
    """The broadcast shape of element-wise operands (the same rule in NumPy and PyTorch)."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeUnknown("shapes do not broadcast") from None


def matmul(left: Shape, right: Shape) -> Shape:
    """``a @ b``: batch dims broadcast, ``[..., n, k] @ [..., k, m] -> [..., n, m]`` (1-D operands promoted)."""
    if not left or not right:
        raise ShapeUnknown("@ of a scalar")
    a = (1, *left) if len(left) == 1 else left
    b = (*right, 1) if len(right) == 1 else right
    if a[-1] != b[-2]:
        raise ShapeUnknown("@ with mismatched inner dims")
    out = (*broadcast(a[:-2], b[:-2]), a[-2], b[-1])
    # a promoted 1-D operand's added dim is removed again
    if len(left) == 1:
        out = out[:-2] + out[-1:]
    if len(right) == 1:
        out = out[:-1]
    return out


def indexed(shape: Shape, key: Any) -> Shape:
    """Basic indexing by ints, slices, ``None`` and ``...`` (``x[:, None, :]``, ``x[0]``)."""
    items = list(key) if isinstance(key, tuple) else [key]
    if items.count(Ellipsis) > 1:
        raise ShapeUnknown("two ellipses")
    used = sum(1 for item in items if item is not None and item is not Ellipsis)
    if used > len(shape):
        raise ShapeUnknown("too many indices")
    # the dims not indexed: at ``...``, or last
    at = items.index(Ellipsis) if Ellipsis in items else len(items)
    items[at : at + 1 if Ellipsis in items else at] = [slice(None)] * (len(shape) - used)
    out: list[int] = []
    dims = iter(shape)
    for item in items:
        if item is None:
            out.append(1)
        elif isinstance(item, slice):
            out.append(len(range(*item.indices(next(dims)))))
        elif isinstance(item, int) and not isinstance(item, bool):
            size = next(dims)
            if not -size <= item < size:
                raise ShapeUnknown("index out of range")
        else:
            raise ShapeUnknown("not a basic index")
    return tuple(out)


def expanded(shape: Shape, sizes: Sequence[int]) -> Shape:
    """PyTorch's ``x.expand(*sizes)``: ``-1`` keeps a dim, a size-1 dim grows, new dims lead."""
    if len(sizes) < len(shape):
        raise ShapeUnknown("expand to fewer dims")
    lead = len(sizes) - len(shape)
    out = list(sizes[:lead])
    for size, dim in zip(sizes[lead:], shape, strict=True):
        if size == -1 or size == dim:
            out.append(dim)
        elif dim == 1 and size > 0:
            out.append(size)
        else:
            raise ShapeUnknown("expand of a non-1 dim")
    if any(d <= 0 for d in out[:lead]):
        raise ShapeUnknown("expand with -1 on a new dim")
    return tuple(out)


def transposed(shape: Shape, first: int, second: int) -> Shape:
    """``x.transpose(a, b)`` (PyTorch's two-dim swap)."""
    dims = list(shape)
    try:
        dims[first], dims[second] = dims[second], dims[first]
    except IndexError:
        raise ShapeUnknown("transpose dim out of range") from None
    return tuple(dims)


def joined(shapes: Sequence[Shape], dim: int, *, stack: bool) -> Shape:
    """``cat``/``concatenate`` along ``dim`` (the other dims equal), or ``stack`` on a new ``dim`` (equal shapes)."""
    if not shapes:
        raise ShapeUnknown("nothing joined")
    first = shapes[0]
    rank = len(first)
    if stack:
        at = dim if dim >= 0 else rank + 1 + dim
        if any(s != first for s in shapes) or not 0 <= at <= rank:
            raise ShapeUnknown("stacked shapes differ")
        return (*first[:at], len(shapes), *first[at:])
    at = dim % rank if rank and -rank <= dim < rank else -1
    if at < 0 or any(len(s) != rank for s in shapes) or len({s[:at] + s[at + 1 :] for s in shapes}) != 1:
        raise ShapeUnknown("concatenated shapes differ")
    return (*first[:at], sum(s[at] for s in shapes), *first[at + 1 :])


def promoted(op: ast.operator, left: Any, right: Any, default_float: str) -> str:
    """The dtype of ``left op right`` where each is a dtype name (a tensor's) or a Python number. True division
    of integers gives the library's default float (PyTorch float32, NumPy float64); a Python float on an integer
    tensor too; two tensors of different dtypes are not guessed."""
    tensors = [d for d in (left, right) if isinstance(d, str)]
    numbers = [n for n in (left, right) if not isinstance(n, str)]
    if len(set(tensors)) != 1:
        raise ShapeUnknown("operands of different dtypes")
    dtype = tensors[0]
    floating = dtype.startswith(("float", "bfloat"))
    if not floating and (isinstance(op, ast.Div) or any(isinstance(n, float) for n in numbers)):
        return default_float
    if isinstance(op, ast.MatMult) and numbers:
        raise ShapeUnknown("@ with a number")
    return dtype
