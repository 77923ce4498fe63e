"""Tensor arguments a kernel is called with in a test file, for the guesses of a first simulation: calls
``kernel(...)``, ``module.kernel(...)``, ``kernel[grid](...)``, ``simulate_kernel(kernel, ...)`` and
``simulate(kernel)(...)`` whose arguments are NumPy arrays built from literals, directly or through a variable
assigned earlier in the same function, e.g. ``kernel(np.zeros((128, 512), np.float32))`` or
``x = np.random.rand(128, 512).astype(np.float16); kernel(x)``.

Only literals are read (nothing is run). NumPy's own default dtype (float64) applies when none is given.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from nki_studio.verify.spec import TensorSpec
from nki_studio.verify.type_hints import dtype_literal, shape_literal

NUMPY_DEFAULT_DTYPE = "float64"
# Constructors taking the shape first and the dtype second (positionally or as dtype=).
_SHAPE_THEN_DTYPE = ("zeros", "ones", "empty")
# Constructors taking the dimensions as separate arguments (np.random.rand(128, 512)), always float64.
_DIMS = ("rand", "randn")
# Random constructors taking the shape as size= (or first, for random/standard_normal); dtype= on a Generator.
_SIZED = ("random", "random_sample", "standard_normal", "uniform", "normal", "integers", "randint")
_SIZE_FIRST = ("random", "random_sample", "standard_normal")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def array_spec(node: ast.expr) -> TensorSpec | None:
    """The shape and dtype of a NumPy array expression built from literals, else None."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    name, args = node.func.attr, node.args
    if name == "astype" and args:  # something.astype(dtype): the inner array's shape, this dtype
        inner, dtype = array_spec(node.func.value), dtype_literal(args[0])
        return TensorSpec(dtype, inner.shape) if inner is not None and dtype is not None else None
    shape: tuple[int, ...] | None = None
    dtype_node: ast.expr | None = _keyword(node, "dtype")
    if name in _SHAPE_THEN_DTYPE or name == "full":
        shape = shape_literal(args[0]) if args else _shape_keyword(node, "shape")
        at = 2 if name == "full" else 1
        if dtype_node is None and len(args) > at:
            dtype_node = args[at]
    elif name in _DIMS:
        shape = shape_literal(ast.Tuple(elts=list(args))) if args else None
    elif name in _SIZED:
        size = _keyword(node, "size")
        if size is None and name in _SIZE_FIRST and args:
            size = args[0]
        shape = shape_literal(size) if size is not None else None
    if shape is None:
        return None
    dtype = dtype_literal(dtype_node) if dtype_node is not None else NUMPY_DEFAULT_DTYPE
    return TensorSpec(dtype, shape) if dtype is not None else None


def _shape_keyword(call: ast.Call, name: str) -> tuple[int, ...] | None:
    value = _keyword(call, name)
    return shape_literal(value) if value is not None else None


def _names(func: ast.expr) -> str | None:
    """The name a called expression ends in: ``kernel``, ``module.kernel``; ``kernel[grid]`` is ``kernel``."""
    if isinstance(func, ast.Subscript):
        func = func.value
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _kernel_arguments(call: ast.Call, kernel: str) -> list[ast.expr] | None:
    """The arguments ``call`` passes to ``kernel`` positionally, or None when it does not call it."""
    if _names(call.func) == kernel:
        return list(call.args)
    if _names(call.func) == "simulate_kernel" and call.args and _names(call.args[0]) == kernel:
        return list(call.args[1:])
    inner = call.func
    if (
        isinstance(inner, ast.Call)
        and _names(inner.func) == "simulate"
        and inner.args
        and _names(inner.args[0]) == kernel
    ):
        return list(call.args)
    return None


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    yield from (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside its nested functions (those are scopes of their own)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def call_site_fields(source: str, kernel: str, params: Sequence[str]) -> dict[str, TensorSpec]:
    """The parameters of ``kernel`` (``params``, in order) that a call in ``source`` passes a NumPy array built
    from literals; the first call (in file order) that gives a parameter wins. {} when the text does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, tuple[int, TensorSpec]] = {}
    for scope in _scopes(tree):
        nodes = list(_own_nodes(scope))
        assigned = sorted(
            (
                (n.lineno, n.targets[0].id, n.value)
                for n in nodes
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            ),
            key=lambda a: a[0],
        )
        for call in (n for n in nodes if isinstance(n, ast.Call)):
            positional = _kernel_arguments(call, kernel)
            if positional is None:
                continue
            # a call may pass fewer (defaults) or, with a wrong signature, more arguments than ``params``
            passed = zip(params, positional, strict=False)
            given = [
                *passed,
                *((k.arg, k.value) for k in call.keywords if k.arg is not None and k.arg in params),
            ]
            for param, expr in given:
                if isinstance(expr, ast.Name):  # the value last assigned to that name before the call
                    earlier = [
                        value for line, name, value in assigned if name == expr.id and line < call.lineno
                    ]
                    expr = earlier[-1] if earlier else expr
                spec = array_spec(expr)
                if spec is not None and (param not in found or call.lineno < found[param][0]):
                    found[param] = (call.lineno, spec)
    return {p: found[p][1] for p in params if p in found}
