"""Arithmetic and comparisons on interpreter values, keeping the derivation of computed constants."""

from __future__ import annotations

import ast
from typing import Any

from nki_studio.model.values import (
    MAX_SEQ_LEN,
    UNKNOWN,
    ApiRef,
    BufferVal,
    Const,
    DType,
    ModuleRef,
    Seq,
    Value,
    const_int,
    const_num,
    merge_binds,
    same_value,
)

BINOP_SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Div: "/",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
}


def apply_binop(op: ast.operator, a: Any, b: Any) -> Any:
    """Python's own ``a op b`` (None for results the interpreter does not keep); operands are any constants,
    so errors (TypeError, ArithmeticError) are the caller's to catch."""
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        if isinstance(a, str) or isinstance(b, str):
            return None
        return a * b
    if isinstance(op, ast.FloorDiv):
        return a // b
    if isinstance(op, ast.Mod):
        if isinstance(a, str):
            return None
        return a % b
    if isinstance(op, ast.Div):
        return a / b
    if isinstance(op, ast.Pow):
        if isinstance(b, (int, float)) and abs(b) > 64:
            return None
        return a**b
    if isinstance(op, ast.LShift):
        if isinstance(b, int) and b > 64:
            return None
        return a << b
    if isinstance(op, ast.RShift):
        return a >> b
    if isinstance(op, ast.BitAnd):
        return a & b
    if isinstance(op, ast.BitOr):
        return a | b
    if isinstance(op, ast.BitXor):
        return a ^ b
    return None


def unary(op: ast.unaryop, value: Value) -> Value:
    if isinstance(op, ast.Not):
        if isinstance(value, Const):
            return Const(not value.value)
        return UNKNOWN
    num = const_num(value)
    if num is None:
        return UNKNOWN
    assert isinstance(value, Const)
    if isinstance(op, ast.USub):
        return Const(-num, f"-{paren(value.expr)}" if value.expr else "", value.binds)
    if isinstance(op, ast.UAdd):
        return value
    if isinstance(op, ast.Invert) and isinstance(num, int):
        return Const(~num)
    return UNKNOWN


def paren(text: str) -> str:
    if text and not (text.replace("_", "").replace(".", "").isalnum() or text.endswith(("]", ")"))):
        return f"({text})"
    return text


def binop(op: ast.operator, left: Value, right: Value, ltext: str, rtext: str) -> Value:
    """Arithmetic on constants (and tuple concatenation / repetition)."""
    if isinstance(left, Seq) and isinstance(right, Seq) and isinstance(op, ast.Add):
        return Seq(left.items + right.items, is_list=left.is_list, exact=left.exact and right.exact)
    if isinstance(left, Seq) and isinstance(op, ast.Mult) and const_int(right) is not None:
        count = const_int(right) or 0
        if len(left.items) * count <= MAX_SEQ_LEN:
            return Seq(left.items * count, is_list=left.is_list, exact=left.exact)
        return UNKNOWN
    if not (isinstance(left, Const) and isinstance(right, Const)):
        return UNKNOWN
    a, b = left.value, right.value
    try:
        result = apply_binop(op, a, b)
    except (ArithmeticError, TypeError, ValueError):
        return UNKNOWN
    if result is None:
        return UNKNOWN
    symbol = BINOP_SYMBOLS.get(type(op), "?")
    expr = f"{paren(left.expr or ltext)}{symbol}{paren(right.expr or rtext)}"
    return Const(result, expr, merge_binds(left.binds, right.binds))


def compare_values(op: ast.cmpop, left: Value, right: Value) -> bool | None:
    """Outcome of ``left op right`` when both sides are known well enough, else None."""
    if isinstance(op, (ast.Is, ast.IsNot)):
        if (
            isinstance(left, Const)
            and isinstance(right, Const)
            and (left.value is None or right.value is None)
        ):
            outcome = left.value is right.value
            return outcome if isinstance(op, ast.Is) else not outcome
        if isinstance(right, Const) and right.value is None and left.known and not isinstance(left, Const):
            return isinstance(op, ast.IsNot)
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)):
        if same_value(left, right):
            return isinstance(op, ast.Eq)
        if _definitely_different(left, right):
            return isinstance(op, ast.NotEq)
        return None
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(right, Seq) and right.exact:
            hits = [compare_values(ast.Eq(), left, item) for item in right.items]
            if True in hits:
                return isinstance(op, ast.In)
            if all(h is False for h in hits):
                return isinstance(op, ast.NotIn)
        return None
    if isinstance(left, Const) and isinstance(right, Const):
        # Python's own ordering decides; mixed kinds (str < int) raise TypeError: unknown.
        a: Any = left.value
        b: Any = right.value
        try:
            if isinstance(op, ast.Lt):
                return bool(a < b)
            if isinstance(op, ast.LtE):
                return bool(a <= b)
            if isinstance(op, ast.Gt):
                return bool(a > b)
            if isinstance(op, ast.GtE):
                return bool(a >= b)
        except TypeError:
            return None
    return None


def _definitely_different(a: Value, b: Value) -> bool:
    if isinstance(a, Const) and isinstance(b, Const):
        return a.value != b.value
    if isinstance(a, Seq) and isinstance(b, Seq) and a.exact and b.exact:
        if len(a.items) != len(b.items):
            return True
        return any(_definitely_different(x, y) for x, y in zip(a.items, b.items, strict=False))
    if isinstance(a, DType) and isinstance(b, DType):
        return a.name != b.name
    if isinstance(a, BufferVal) and isinstance(b, BufferVal):
        return a.name != b.name
    if (
        type(a) is not type(b)
        and a.known
        and b.known
        and not isinstance(a, (ApiRef, ModuleRef))
        and not isinstance(b, (ApiRef, ModuleRef))
    ):
        return (isinstance(a, Const) and a.value is None) or (isinstance(b, Const) and b.value is None)
    return False
