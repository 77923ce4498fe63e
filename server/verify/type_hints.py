"""Tensor arguments a kernel's signature states in its type hints, for the guesses of a first simulation:

* a string in the spec comment's grammar, ``x: "bfloat16[128,512]"``;
* ``nt.tensor[shape, dtype]`` (``nki.typing``, legacy ``neuronxcc.nki.typing``), e.g.
  ``x: nt.tensor[(128, 512), nl.float32]``. The order shape-then-dtype is the one the legacy placeholder's
  docstring gives (``sim/nki_typing.py``); the NKI docs we have show no example, so it is inferred.

Only literals are read (no evaluation): a hint built from variables gives no guess.
"""

from __future__ import annotations

import ast

from nki_studio.verify.spec import SpecError, TensorSpec, parse_dtype, parse_value


def shape_literal(node: ast.expr) -> tuple[int, ...] | None:
    """A shape written as a literal: one positive int, or a tuple/list of them; None otherwise."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    dims = [e.value for e in items if isinstance(e, ast.Constant) and type(e.value) is int and e.value > 0]
    return tuple(dims) if dims and len(dims) == len(items) else None


def dtype_literal(node: ast.expr) -> str | None:
    """The canonical dtype a dtype expression names (``np.float32``, ``nl.bfloat16``, ``"float16"``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.Attribute):
        text = node.attr  # the module it is taken from does not matter: np., nl., ml_dtypes. ...
    elif isinstance(node, ast.Name):
        text = node.id
    else:
        return None
    try:
        return parse_dtype(text)
    except SpecError:
        return None


def _hint(annotation: ast.expr) -> TensorSpec | None:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            value = parse_value(annotation.value)
        except SpecError:
            return None
        return value if isinstance(value, TensorSpec) else None
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, (ast.Attribute, ast.Name))
        and (annotation.value.attr if isinstance(annotation.value, ast.Attribute) else annotation.value.id)
        == "tensor"
        and isinstance(annotation.slice, ast.Tuple)
        and len(annotation.slice.elts) == 2
    ):
        shape, dtype = shape_literal(annotation.slice.elts[0]), dtype_literal(annotation.slice.elts[1])
        return TensorSpec(dtype, shape) if shape is not None and dtype is not None else None
    return None


def hinted_fields(source: str, kernel: str) -> dict[str, TensorSpec]:
    """The parameters of top-level function ``kernel`` whose type hint gives a shape and dtype ({} when the
    text does not parse or has no such function)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == kernel:
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            hints = {a.arg: _hint(a.annotation) for a in args if a.annotation is not None}
            return {name: spec for name, spec in hints.items() if spec is not None}
    return {}
