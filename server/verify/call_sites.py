"""Tensor arguments a kernel is called with in a test file, for the guesses of a first simulation: calls
``kernel(...)``, ``module.kernel(...)``, ``kernel[grid](...)``, ``simulate_kernel(kernel, ...)`` and
``simulate(kernel)(...)`` whose arguments are NumPy arrays or PyTorch tensors built from literals, directly, through
a variable assigned earlier in the same function, or through a pytest fixture the test function takes (defined in
the file, or passed in from the ``conftest.py`` files above it), e.g. ``kernel(np.zeros((128, 512), np.float32))``,
``x = np.random.rand(128, 512).astype(np.float16); kernel(x)`` or ``kernel(torch.randn(128, 512,
dtype=torch.bfloat16))``. A dimension may be a name bound to an int literal in the function or the module
(``torch.zeros((a, b))`` after ``a, b = 128, 512``).

Only literals are read (nothing is run; neither NumPy nor torch need be installed). NumPy's own default dtype
(float64) applies when none is given; PyTorch's (float32) for torch constructors.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping, Sequence

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
# PyTorch's default floating dtype (torch.get_default_dtype() of a program that does not change it): what torch
# constructors give without dtype= (from PyTorch's documentation; torch itself is not read).
TORCH_DEFAULT_DTYPE = "float32"
# torch constructors taking the size as separate ints, one tuple/list, or size=.
_TORCH_SIZED = ("zeros", "ones", "empty", "rand", "randn")
# Tensor methods that convert to a dtype, and those that keep shape and dtype (.numpy() gives the same array).
_TORCH_CASTS = {
    "bfloat16": "bfloat16",
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "short": "int16",
    "int": "int32",
    "long": "int64",
    "bool": "bool",
}
_KEEPS = ("numpy", "cpu", "cuda", "contiguous", "clone", "detach")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def array_spec(node: ast.expr, ints: Mapping[str, int] | None = None) -> TensorSpec | None:
    """The shape and dtype of a NumPy array or PyTorch tensor expression built from literals, else None;
    ``ints``: names bound to int literals, which a shape may use."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    bound = ints or {}
    name, args = node.func.attr, node.args
    if isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        return _torch_constructor(node, bound)
    if name in _KEEPS and not args:
        return array_spec(node.func.value, bound)
    if name in _TORCH_CASTS and not args and not node.keywords:
        inner = array_spec(node.func.value, bound)
        return TensorSpec(_TORCH_CASTS[name], inner.shape) if inner is not None else None
    if name == "to":
        return _converted(node, array_spec(node.func.value, bound))
    if name == "astype" and args:  # something.astype(dtype): the inner array's shape, this dtype
        inner, dtype = array_spec(node.func.value, bound), dtype_literal(args[0])
        return TensorSpec(dtype, inner.shape) if inner is not None and dtype is not None else None
    shape: tuple[int, ...] | None = None
    dtype_node: ast.expr | None = _keyword(node, "dtype")
    if name in _SHAPE_THEN_DTYPE or name == "full":
        shape = _shape(args[0], bound) if args else _shape_keyword(node, "shape", bound)
        at = 2 if name == "full" else 1
        if dtype_node is None and len(args) > at:
            dtype_node = args[at]
    elif name in _DIMS:
        shape = _shape(ast.Tuple(elts=list(args)), bound) if args else None
    elif name in _SIZED:
        size = _keyword(node, "size")
        if size is None and name in _SIZE_FIRST and args:
            size = args[0]
        shape = _shape(size, bound) if size is not None else None
    if shape is None:
        return None
    dtype = dtype_literal(dtype_node) if dtype_node is not None else NUMPY_DEFAULT_DTYPE
    return TensorSpec(dtype, shape) if dtype is not None else None


def _torch_constructor(call: ast.Call, ints: Mapping[str, int]) -> TensorSpec | None:
    """``torch.randn(128, 512, dtype=torch.bfloat16)``, ``torch.zeros((a, b))``, ``torch.full((4, 4), 0.5)``."""
    name, args = call.func.attr if isinstance(call.func, ast.Attribute) else "", call.args
    size = _keyword(call, "size")
    default = TORCH_DEFAULT_DTYPE
    if name in _TORCH_SIZED:
        if size is None and args:
            size = args[0] if len(args) == 1 else ast.Tuple(elts=list(args))
    elif name == "full":
        size = args[0] if args else size
        fill = args[1] if len(args) > 1 else _keyword(call, "fill_value")
        # torch.full infers the dtype from the fill value: an int fills int64, a bool bool
        if isinstance(fill, ast.Constant) and type(fill.value) in (int, bool):
            default = "bool" if type(fill.value) is bool else "int64"
    else:
        return None
    shape = _shape(size, ints) if size is not None else None
    dtype_node = _keyword(call, "dtype")
    dtype = dtype_literal(dtype_node) if dtype_node is not None else default
    return TensorSpec(dtype, shape) if shape is not None and dtype is not None else None


def _converted(call: ast.Call, inner: TensorSpec | None) -> TensorSpec | None:
    """``tensor.to(torch.float16)`` (or ``dtype=``): the inner tensor in that dtype; ``.to("cpu")`` keeps it; a
    dtype that is not a literal is unknown."""
    target = _keyword(call, "dtype") or next(iter(call.args), None)
    if inner is None or target is None:
        return inner
    dtype = dtype_literal(target)
    if dtype is not None:
        return TensorSpec(dtype, inner.shape)
    device = isinstance(target, ast.Constant) and isinstance(target.value, str)
    return inner if device and _keyword(call, "dtype") is None else None


def _shape(node: ast.expr, ints: Mapping[str, int]) -> tuple[int, ...] | None:
    """A shape literal whose dimensions may be names bound to int literals (``(a, 512)``)."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    resolved: list[ast.expr] = [
        ast.Constant(ints[e.id]) if isinstance(e, ast.Name) and e.id in ints else e for e in items
    ]
    return shape_literal(ast.Tuple(elts=resolved))


def _shape_keyword(call: ast.Call, name: str, ints: Mapping[str, int]) -> tuple[int, ...] | None:
    value = _keyword(call, name)
    return _shape(value, ints) if value is not None else None


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


def _int_constants(nodes: Iterable[ast.AST]) -> dict[str, int]:
    """Names bound to positive int literals among ``nodes``: ``N = 128``, ``a, b = 128, 512``."""
    found: dict[str, int] = {}
    for node in nodes:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        pairs = (
            zip(target.elts, value.elts, strict=True)
            if isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
            else [(target, value)]
        )
        for name, literal in pairs:
            if (
                isinstance(name, ast.Name)
                and isinstance(literal, ast.Constant)
                and type(literal.value) is int
                and literal.value > 0
            ):
                found[name.id] = literal.value
    return found


def _assignments(nodes: Iterable[ast.AST]) -> list[tuple[int, str, ast.expr]]:
    """``name = value`` statements among ``nodes`` as (line, name, value), in line order."""
    return sorted(
        (
            (n.lineno, n.targets[0].id, n.value)
            for n in nodes
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
        ),
        key=lambda a: a[0],
    )


def _last_before(name: str, assigned: list[tuple[int, str, ast.expr]], line: int) -> ast.expr | None:
    """The value last assigned to ``name`` before ``line``."""
    earlier = [value for at, target, value in assigned if target == name and at < line]
    return earlier[-1] if earlier else None


def _is_fixture(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated ``@pytest.fixture``, ``@fixture`` or either called (``@pytest.fixture(scope="module")``)."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _names(target) == "fixture":
            return True
    return False


def _fixtures(tree: ast.Module, ints: Mapping[str, int]) -> dict[str, TensorSpec]:
    """The module's pytest fixtures that return (or yield) an array or tensor built from literals."""
    found: dict[str, TensorSpec] = {}
    for function in tree.body:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _is_fixture(function):
            continue
        nodes = list(_own_nodes(function))
        given = [n for n in nodes if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None]
        if not given:
            continue
        last = max(given, key=lambda n: n.lineno)
        value = last.value
        if isinstance(value, ast.Name):
            value = _last_before(value.id, _assignments(nodes), last.lineno) or value
        spec = array_spec(value, {**ints, **_int_constants(nodes)}) if value is not None else None
        if spec is not None:
            found[function.name] = spec
    return found


def fixture_specs(source: str) -> dict[str, TensorSpec]:
    """The pytest fixtures of ``source`` (a ``conftest.py``) that give an array or tensor built from literals:
    fixture name -> its spec. {} when the text does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    return _fixtures(tree, _int_constants(_own_nodes(tree)))


def call_site_fields(
    source: str, kernel: str, params: Sequence[str], fixtures: Mapping[str, TensorSpec] | None = None
) -> dict[str, TensorSpec]:
    """The parameters of ``kernel`` (``params``, in order) that a call in ``source`` passes an array or tensor
    built from literals; the first call (in file order) that gives a parameter wins. ``fixtures``: those of the
    ``conftest.py`` files that apply (the file's own fixtures take precedence). {} when the text does not
    parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    module_ints = _int_constants(_own_nodes(tree))
    available = {**(fixtures or {}), **_fixtures(tree, module_ints)}
    found: dict[str, tuple[int, TensorSpec]] = {}
    for scope in _scopes(tree):
        nodes = list(_own_nodes(scope))
        assigned = _assignments(nodes)
        ints = {**module_ints, **_int_constants(nodes)}
        # a test function's parameters are the fixtures pytest passes it
        taken = (
            {a.arg for a in [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]}
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
            else set()
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
                spec: TensorSpec | None = None
                if isinstance(expr, ast.Name):  # the value last assigned to that name before the call
                    earlier = _last_before(expr.id, assigned, call.lineno)
                    if earlier is not None:
                        expr = earlier
                    elif expr.id in taken:
                        spec = available.get(expr.id)
                spec = spec or array_spec(expr, ints)
                if spec is not None and (param not in found or call.lineno < found[param][0]):
                    found[param] = (call.lineno, spec)
    return {p: found[p][1] for p in params if p in found}
