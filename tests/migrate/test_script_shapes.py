"""``benchmarks/script_shapes.py``: the shape rules the static script reader applies, checked against NumPy's own
results on arrays of those shapes (PyTorch's ``expand``/``transpose``/``cat`` against their NumPy equivalents)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import script_shapes
from script_shapes import ShapeUnknown


@pytest.mark.parametrize(
    ("left", "right"),
    [((2, 64, 1), (2, 1, 256)), ((64,), (64, 3)), ((5, 64), (64,)), ((3, 1, 4, 5), (2, 5, 6))],
)
def test_matmul_shapes_are_numpys(left: tuple[int, ...], right: tuple[int, ...]) -> None:
    assert script_shapes.matmul(left, right) == (np.zeros(left) @ np.zeros(right)).shape


@pytest.mark.parametrize(
    "key",
    [
        (None, slice(None), None),
        (slice(None), None, slice(None)),
        0,
        (Ellipsis, None),
        (1, slice(2, 7, 2)),
        (slice(None, None, -1), Ellipsis, 0),
    ],
)
def test_basic_indexing_shapes_are_numpys(key: object) -> None:
    shape = (4, 9, 3)
    assert script_shapes.indexed(shape, key) == np.empty(shape)[key].shape  # type: ignore[index]


def test_expand_transpose_and_joins_follow_their_numpy_equivalents() -> None:
    a = np.empty((1, 64, 1))
    assert script_shapes.expanded(a.shape, [2, -1, 1]) == np.broadcast_to(a, (2, 64, 1)).shape
    assert script_shapes.expanded(a.shape, [3, 2, -1, 5]) == np.broadcast_to(a, (3, 2, 64, 5)).shape
    assert script_shapes.transposed((2, 64, 256), 1, 2) == np.swapaxes(np.empty((2, 64, 256)), 1, 2).shape
    parts = [np.empty((2, 256, 64)), np.empty((2, 256, 32))]
    assert script_shapes.joined([p.shape for p in parts], -1, stack=False) == np.concatenate(parts, -1).shape
    same = [np.empty((256,))] * 3
    assert script_shapes.joined([p.shape for p in same], 0, stack=True) == np.stack(same).shape
    assert script_shapes.joined([p.shape for p in same], -1, stack=True) == np.stack(same, -1).shape


@pytest.mark.parametrize(
    "call",
    [
        lambda: script_shapes.matmul((2, 3), (4, 5)),
        lambda: script_shapes.broadcast((2, 3), (4, 3)),
        lambda: script_shapes.expanded((2, 64), [3, 64]),
        lambda: script_shapes.joined([(2, 3), (4, 5)], 0, stack=False),
        lambda: script_shapes.joined([(2, 3), (2, 4)], 0, stack=True),
        lambda: script_shapes.indexed((4,), (0, 1)),
        lambda: script_shapes.promoted(ast.Add(), "float32", "float16", "float32"),
    ],
)
def test_what_a_rule_cannot_tell_is_unknown_not_guessed(call: object) -> None:
    with pytest.raises(ShapeUnknown):
        call()  # type: ignore[operator]


def test_promotions_follow_the_librarys_default_float() -> None:
    # int64 / int: true division gives the library's default float (torch float32, NumPy float64)
    assert script_shapes.promoted(ast.Div(), "int64", 2, "float32") == "float32"
    assert script_shapes.promoted(ast.Div(), "int64", 2, "float64") == str((np.arange(3) / 2).dtype)
    assert script_shapes.promoted(ast.Pow(), 10000, "float32", "float32") == "float32"
    assert script_shapes.promoted(ast.Mult(), "int64", 3, "float32") == "int64"
    assert script_shapes.promoted(ast.MatMult(), "float32", "float32", "float32") == "float32"
