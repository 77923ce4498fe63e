"""Small helpers over Python syntax trees used by the interpreter (no values involved)."""

from __future__ import annotations

import ast
import re
from functools import lru_cache


def expr_text(node: ast.AST) -> str:
    """Short source text of a simple expression, for value derivations."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.Attribute):
        inner = expr_text(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Subscript):
        inner = expr_text(node.value)
        index = expr_text(node.slice)
        return f"{inner}[{index}]" if inner and index else ""
    return ""


def load_copy(target: ast.expr) -> ast.expr:
    """The target of an augmented assignment read as an expression."""
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
    return target


def strip_tuple_call(node: ast.expr) -> ast.expr:
    """``tuple(x.shape)`` -> ``x.shape`` (a common assert spelling)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("tuple", "list")
        and len(node.args) == 1
    ):
        return node.args[0]
    return node


def target_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def assigned_names(body: list[ast.stmt]) -> set[str]:
    """Names a block (re)binds, including in nested blocks (statements only; nested defs bind their name)."""
    names: set[str] = set()
    stack: list[ast.stmt] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
                    names |= target_names(target)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            names |= target_names(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    names |= target_names(item.optional_vars)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        for block in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, block, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            stack.extend(handler.body)
    return names


@lru_cache(maxsize=4)
def source_lines(source: str) -> tuple[str, ...]:
    """``source.splitlines()``, computed once per text: an incremental lint analyses one text many times over
    (once per kernel group), and a 2,000-line split per run adds up."""
    return tuple(source.splitlines())


@lru_cache(maxsize=4)
def non_ascii_lines(source: str) -> frozenset[int]:
    """1-based numbers of the lines with a non-ASCII character (their columns need a UTF-8 conversion)."""
    return frozenset(i + 1 for i, line in enumerate(source_lines(source)) if not line.isascii())


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# ASDL field types that never hold a node (``Name.id``, ``Constant.value``, ``ImportFrom.level``, ...).
_SCALAR_FIELD_TYPES = frozenset({"identifier", "string", "constant", "int"})
_SIGNATURE = re.compile(r"\w+\((.*)\)")


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of an ``ast`` node type that can hold child nodes, leaving out the load/store context and
    operator singletons (``ctx``, ``op``, ``ops``) no analysis walks to, and the identifier/string/constant/int
    fields (read from the node class's ASDL signature, its docstring, e.g. ``Name(identifier id, expr_context
    ctx)``; a field of unknown type is kept); cached per type (the tree walks are hot, and a leaf such as
    ``Name`` or ``Constant`` then has no field to look at)."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(
            f
            for f in kind._fields  # type: ignore[attr-defined]
            if f not in ("ctx", "op", "ops") and field_types(kind).get(f) not in _SCALAR_FIELD_TYPES
        )
    return fields


def field_types(kind: type) -> dict[str, str]:
    """Field name -> ASDL type without its ``?``/``*`` suffix, from the first line of the node class's docstring
    (empty when it is not an ASDL signature)."""
    match = _SIGNATURE.fullmatch((kind.__doc__ or "").split("\n", 1)[0].strip())
    if match is None:
        return {}
    pairs = (part.split() for part in match[1].split(","))
    return {bits[1]: bits[0].rstrip("*?") for bits in pairs if len(bits) == 2}
