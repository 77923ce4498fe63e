"""Constraints of a search space, Python expressions over its parameters (``TILE_N * BUFS <= 2048``),
evaluated without ``eval``: only names of the space, numbers and strings, arithmetic, comparisons and
``and``/``or``/``not``/``if-else`` are allowed (no calls, attributes, subscripts or builtins), so a constraint
in a shared ``pyproject.toml`` cannot run code."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}
_MAX_POWER = 64  # 2 ** huge would hang the parser thread


class ConstraintError(ValueError):
    """A constraint that is not a plain expression over the space's parameters."""


@dataclass(frozen=True)
class Constraint:
    """One checked constraint expression."""

    text: str
    tree: ast.expr

    def holds(self, values: Mapping[str, Any]) -> bool:
        """Whether ``values`` satisfy the constraint (a division by zero counts as not satisfied)."""
        try:
            return bool(_eval(self.tree, values))
        except ZeroDivisionError:
            return False


def compile_constraint(text: str, names: frozenset[str]) -> Constraint:
    """Parse ``text`` and check it uses only ``names`` and the allowed operators. Raises ``ConstraintError``."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ConstraintError(f"constraint {text!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names:
            raise ConstraintError(f"constraint {text!r}: {node.id!r} is not a parameter of the space")
        if not isinstance(node, _ALLOWED):
            raise ConstraintError(f"constraint {text!r}: {type(node).__name__} is not allowed")
    return Constraint(text.strip(), tree)


_ALLOWED = (
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.And,
    ast.Or,
    *_BINARY,
    *_COMPARE,
    *_UNARY,
)


def _eval(node: ast.expr, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, values), _eval(node.right, values)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_POWER:
            raise ConstraintError(f"exponent {right} is too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, values))
    if isinstance(node, ast.BoolOp):
        results = (_eval(v, values) for v in node.values)
        return all(results) if isinstance(node.op, ast.And) else any(results)
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, values) else node.orelse, values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, values)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise ConstraintError(f"{type(node).__name__} is not allowed")  # compile_constraint let nothing else in
