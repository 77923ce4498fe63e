"""Proof inputs read from a tutorial script without running it, for ``migrate_corpus.py``.

The PyTorch/JAX tutorial scripts of the corpus cannot run here (torch's wheel pulls GBs of CUDA, torch_xla needs a
Neuron device), so their kernel launches are read from the text: the script's top level and its ``__main__`` block
are evaluated statement by statement over names, literals and arithmetic, ``argparse`` defaults (``args.nrows``),
and the tensor constructors feeding a kernel call (``torch.rand/randn/ones/zeros/empty/arange/tensor``,
``np.random.*``/``np.ones``..., ``jax.random.uniform/normal``, ``jnp.ones``...), with ``.to``/``.astype``/
``.reshape``/``.T`` and the tensor expressions of ``script_shapes`` (arithmetic, ``@``, indexing, ``expand``,
``transpose``, ``cat``/``stack``) -- shapes and dtypes only, nothing is computed. The script's functions are read
with their arguments bound (their ``return`` value too), a ``for`` loop's body once, for its first item, a ``try``
block's body. Each kernel call (``kernel[b, h](...)``: on that launch grid) whose arguments are all arrays and
numbers gives that kernel a spec (``a=float32[1,256,512] eps=1e-05``) and the script line it came from; the proof
then simulates the kernel on seeded NumPy arrays of those shapes (the values the script computes are not
reproduced: a kernel whose result depends on them being, say, a cosine table, is still compared between its two
versions on the same arrays). A statement that needs anything else (a device, a library function) is skipped and
its names forgotten.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import script_shapes
from script_shapes import ShapeUnknown

# Default dtypes of the constructors by library (torch and JAX: float32; NumPy: float64); aliases spelled by
# the libraries (torch.float is float32, torch.half float16 ...).
_FLOAT_DEFAULT = {"torch": "float32", "jax": "float32", "numpy": "float64"}
_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32"}
_SHAPED = {
    "rand",
    "randn",
    "ones",
    "zeros",
    "empty",
    "random_sample",
    "random",
    "standard_normal",
    "uniform",
    "normal",
}
_DEPTH = 4  # nested script-function calls read (recursion ends there)
_RANGE_LIMIT = 4096  # a range() longer than this is not enumerated (a comprehension over it is not read)
# tensor methods that keep the shape: dtype casts, and element-wise functions (PyTorch's spelling)
_CASTS = {
    "float": "float32",
    "half": "float16",
    "double": "float64",
    "bfloat16": "bfloat16",
    "int": "int32",
    "long": "int64",
}
_ELEMENTWISE = {
    "cos",
    "sin",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "abs",
    "neg",
    "tanh",
    "sigmoid",
    "clone",
    "detach",
}
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


@dataclass(frozen=True)
class Tensor:
    """An array the script builds: its shape and dtype only."""

    shape: tuple[int, ...]
    dtype: str
    floating: str = field(default="float32", compare=False)  # its library's default float (promotions)

    def spec(self) -> str:
        """As a simulate spec writes it (``float32[1,256,512]``)."""
        return f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"


@dataclass(frozen=True)
class KernelRef:
    """A kernel of the script's folder, by name (imported, or held in a name or a dict)."""

    name: str


@dataclass(frozen=True)
class ScriptFunction:
    """A function the script defines: its calls are read with their arguments bound (``check_match(kernel)``)."""

    node: ast.FunctionDef


@dataclass(frozen=True)
class Namespace:
    """What ``parse_args()`` returns: the ``add_argument`` defaults."""

    values: Mapping[str, Any]


@dataclass(frozen=True)
class ScriptLaunch:
    """One kernel call of the script whose arguments are all arrays and numbers."""

    kernel: str
    spec: str
    origin: str  # "mamba_torch.py:80"
    grid: tuple[int, ...] = ()  # the launch grid of ``kernel[b, h](...)``


class _Returned(Exception):
    """A script function's ``return``, carrying its value (``_Unknown`` when not read)."""

    def __init__(self, value: Any) -> None:
        super().__init__("return")
        self.value = value


class _Unknown(Exception):
    """The expression needs what is not read statically (a device, a script function, a result ...)."""


def launches(script: Path, kernels: Mapping[str, Sequence[str]]) -> list[ScriptLaunch]:
    """The kernel calls of ``script`` (in order) whose arguments are all arrays and numbers; ``kernels`` maps the
    kernel names the script may call (those of its folder) to their parameter names."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    reader = _Reader(script.name, kernels, _argparse_defaults(tree))
    reader.block(tree.body)
    return reader.found


def _argparse_defaults(tree: ast.Module) -> dict[str, Any]:
    """``dest -> default`` of every ``add_argument("--name", default=...)`` of the script (None without one)."""
    out: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument" or not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        flag = str(node.args[0].value)
        dest = flag.lstrip("-").replace("-", "_")
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        try:
            out[dest] = _Reader("", {}, {}).value(default) if default is not None else None
        except _Unknown:
            continue
    return out


class _Reader:
    """Reads a script's statements in order, keeping the names it can evaluate and the launches it meets."""

    def __init__(self, script: str, kernels: Mapping[str, Sequence[str]], arguments: dict[str, Any]) -> None:
        self.script = script
        self.kernels = kernels
        self.arguments = arguments
        self.names: dict[str, Any] = {"__name__": "__main__"}
        self.modules: dict[str, str] = {}  # local name -> "torch" | "numpy" | "jax" (and their submodules)
        self.found: list[ScriptLaunch] = []
        self.depth = 0

    def block(self, body: Sequence[ast.stmt]) -> None:
        for statement in body:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imported(node)
        elif isinstance(node, ast.If):
            try:
                taken: bool | None = bool(self.value(node.test))
            except _Unknown:
                taken = None  # both branches are read
            if taken is not False:
                self.block(node.body)
            if taken is not True:
                self.block(node.orelse)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            try:
                value = self.value(node.value)
            except _Unknown:
                value = _Unknown
            for target in targets:
                self.bind(target, value)
        elif isinstance(node, ast.FunctionDef):  # a kernel file's own __main__ calls its kernels
            kernel = node.name in self.kernels and node.decorator_list
            self.names[node.name] = KernelRef(node.name) if kernel else ScriptFunction(node)
        elif isinstance(node, ast.Expr):
            try:
                self.value(node.value)
            except _Unknown:
                pass
        elif isinstance(node, ast.For):
            items = self.known(node.iter)
            if isinstance(items, tuple) and items:  # the first case: its body once
                self.bind(node.target, items[0])
                self.block(node.body)
        elif isinstance(node, ast.Try):
            self.block(node.body)
        elif isinstance(node, ast.Return) and self.depth:
            raise _Returned(_Unknown if node.value is None else self.known_or_unknown(node.value))

    def imported(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            module = node.module if isinstance(node, ast.ImportFrom) else alias.name
            local = alias.asname or alias.name.split(".")[0]
            if alias.name in self.kernels and isinstance(node, ast.ImportFrom):
                self.names[local] = KernelRef(alias.name)
            root = (module or "").split(".")[0]
            if root in _FLOAT_DEFAULT and not isinstance(node, ast.ImportFrom):
                self.modules[local] = alias.name if alias.asname else root
            elif root in _FLOAT_DEFAULT:
                self.modules[local] = f"{module}.{alias.name}"

    def bind(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            if value is _Unknown:
                self.names.pop(target.id, None)
            else:
                self.names[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value if isinstance(value, tuple) and len(value) == len(target.elts) else None
            for i, element in enumerate(target.elts):
                self.bind(element, _Unknown if values is None else values[i])

    def value(self, node: ast.expr) -> Any:
        try:
            return self.evaluated(node)
        except ShapeUnknown as exc:
            raise _Unknown(str(exc)) from None

    def evaluated(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id in self.kernels:  # from kernels import *
                return KernelRef(node.id)
            raise _Unknown(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.value(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return {self.value(k): self.value(v) for k, v in zip(node.keys, node.values, strict=True) if k}
        if isinstance(node, ast.BinOp) and isinstance(node.op, (*_ARITHMETIC, ast.MatMult)):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(left, Tensor) or isinstance(right, Tensor):
                return _arithmetic(node.op, left, right)
            if not all(isinstance(v, (int, float)) for v in (left, right)):
                raise _Unknown("arithmetic on arrays")
            # two numbers and one operator: Python's own arithmetic on them (nothing else is evaluated)
            numbers = ast.Expression(ast.BinOp(ast.Constant(left), node.op, ast.Constant(right)))
            return eval(
                compile(ast.fix_missing_locations(numbers), self.script, "eval"), {"__builtins__": {}}
            )
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.value(node.operand)
            if isinstance(operand, Tensor):
                return operand  # -torch.ones(...): same shape and dtype
            return -operand if isinstance(node.op, ast.USub) else operand
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
        ):
            equal = self.value(node.left) == self.value(node.comparators[0])
            return equal if isinstance(node.ops[0], ast.Eq) else not equal
        if isinstance(node, ast.Subscript):
            base = self.value(node.value)
            key = self.index(node.slice) if isinstance(base, Tensor) else self.value(node.slice)
            if isinstance(base, Tensor):
                return Tensor(script_shapes.indexed(base.shape, key), base.dtype, base.floating)
            if isinstance(base, (dict, tuple)):
                try:
                    return base[key]
                except (KeyError, IndexError, TypeError):
                    raise _Unknown("subscript") from None
            raise _Unknown("subscript")
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.ListComp):
            return self.comprehension(node)
        raise _Unknown(type(node).__name__)

    def index(self, node: ast.expr) -> Any:
        """A subscript's key for basic indexing: ints, ``None``, ``...`` and slices (``x[:, None, 1:3]``)."""
        if isinstance(node, ast.Tuple):
            return tuple(self.index(e) for e in node.elts)
        if isinstance(node, ast.Slice):
            bounds = [None if b is None else self.value(b) for b in (node.lower, node.upper, node.step)]
            if not all(b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
                raise _Unknown("slice bound")
            return slice(*bounds)
        return self.value(node)

    def comprehension(self, node: ast.ListComp) -> tuple[Any, ...]:
        """``[expr for name in items]`` over known items (one generator, no condition)."""
        if len(node.generators) != 1 or node.generators[0].ifs or node.generators[0].is_async:
            raise _Unknown("comprehension")
        generator = node.generators[0]
        items = self.value(generator.iter)
        if not isinstance(items, tuple):
            raise _Unknown("comprehension over an unknown")
        outer = dict(self.names)
        try:
            values = []
            for item in items:
                self.bind(generator.target, item)
                values.append(self.value(node.elt))
            return tuple(values)
        finally:
            self.names = outer

    def known_or_unknown(self, node: ast.expr) -> Any:
        """The value of ``node``, or the ``_Unknown`` marker."""
        try:
            return self.value(node)
        except _Unknown:
            return _Unknown

    def known(self, node: ast.expr) -> Any:
        """The value of ``node``, or None when it is not read statically."""
        try:
            return self.value(node)
        except _Unknown:
            return None

    def library(self, node: ast.expr) -> str | None:
        """``torch``, ``numpy.random``, ``jax.numpy`` ... for a module path written with the script's names."""
        if isinstance(node, ast.Name):
            return self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.library(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def attribute(self, node: ast.Attribute) -> Any:
        library = self.library(node.value)
        if library is not None:  # torch.float32, np.float32, jnp.bfloat16
            return _ALIASES.get(node.attr, node.attr)
        base = self.value(node.value)
        if isinstance(base, Namespace) and node.attr in base.values:
            return base.values[node.attr]
        if isinstance(base, Tensor) and node.attr == "T":
            return Tensor(base.shape[::-1], base.dtype, base.floating)
        if isinstance(base, Tensor) and node.attr == "shape":
            return base.shape
        raise _Unknown(node.attr)

    def dtype(self, node: ast.Call, default: str) -> str:
        given = next((k.value for k in node.keywords if k.arg == "dtype"), None)
        if given is None:
            return default
        value = self.value(given)
        if not isinstance(value, str):
            raise _Unknown("dtype")
        return value

    def call(self, node: ast.Call) -> Any:
        func = node.func
        if (
            getattr(func, "attr", getattr(func, "id", None)) == "parse_args"
        ):  # parser.parse_args(), parse_args()
            return Namespace(self.arguments)
        if isinstance(func, ast.Subscript) and isinstance(
            self.known(func.value), KernelRef
        ):  # kernel[b, h](...)
            grid = self.value(func.slice)
            grid = grid if isinstance(grid, tuple) else (grid,)
            if not all(isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in grid):
                raise _Unknown("launch grid")
            self.launch(node, self.value(func.value).name, grid)
            raise _Unknown("a kernel's result")
        callee = None if isinstance(func, ast.Attribute) else self.known(func)  # kernel, versions["v1"] ...
        if isinstance(callee, KernelRef):
            self.launch(node, callee.name)
            raise _Unknown("a kernel's result")
        if isinstance(callee, ScriptFunction):
            returned = self.inline(callee.node, node)
            if returned is _Unknown:
                raise _Unknown("a script function's result")
            return returned
        if isinstance(func, ast.Name) and func.id in ("range", "len") and func.id not in self.names:
            return _builtin(func.id, [self.value(a) for a in node.args])
        if not isinstance(func, ast.Attribute):
            raise _Unknown("call")
        library = self.library(func.value)
        if library is not None:
            return self.constructed(node, func.attr, library)
        base = self.value(func.value)
        if not isinstance(base, Tensor):
            raise _Unknown(func.attr)
        if func.attr in ("to", "astype", "type"):
            dtypes = [v for v in map(self.known, node.args) if isinstance(v, str)]  # .to(device) is no dtype
            return Tensor(base.shape, self.dtype(node, dtypes[0] if dtypes else base.dtype))
        if func.attr == "reshape":
            shape = _shape([self.value(a) for a in node.args])
            return Tensor(shape, base.dtype)
        if func.attr in ("contiguous", "cpu", "copy"):
            return base
        return _method(base, func.attr, [self.value(a) for a in node.args])

    def constructed(self, node: ast.Call, name: str, library: str) -> Tensor:
        root = library.split(".")[0]
        default = _FLOAT_DEFAULT[root]
        if name in _SHAPED:
            positional = node.args[1:] if library == "jax.random" else node.args  # jax: (key, shape)
            shape_node = next((k.value for k in node.keywords if k.arg in ("shape", "size")), None)
            values = (
                [self.value(shape_node)] if shape_node is not None else [self.value(a) for a in positional]
            )
            return Tensor(_shape(values), self.dtype(node, default), default)
        if name == "arange" and 1 <= len(node.args) <= 3:
            bounds = [self.value(a) for a in node.args]
            if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
                raise _Unknown("arange of non-integers")
            return Tensor((len(range(*bounds)),), self.dtype(node, "int64"), default)
        if name in ("cat", "concatenate", "stack") and node.args:
            parts = self.value(node.args[0])
            axis = next((k.value for k in node.keywords if k.arg in ("dim", "axis")), None)
            dim = self.value(axis if axis is not None else node.args[1]) if len(node.args) > 1 or axis else 0
            if not (
                isinstance(parts, tuple)
                and all(isinstance(p, Tensor) for p in parts)
                and isinstance(dim, int)
            ):
                raise _Unknown(name)
            if len({p.dtype for p in parts}) != 1:
                raise _Unknown(f"{name} of different dtypes")
            shape = script_shapes.joined([p.shape for p in parts], dim, stack=name == "stack")
            return Tensor(shape, parts[0].dtype, default)
        if name in ("tensor", "array", "asarray") and node.args:
            data = self.value(node.args[0])
            shape = _nested_shape(data)
            floats = any(isinstance(v, float) for v in _leaves(data))
            return Tensor(shape, self.dtype(node, default if floats else "int64"), default)
        raise _Unknown(f"{library}.{name}")

    def inline(self, function: ast.FunctionDef, call: ast.Call) -> Any:
        """Read ``function``'s body with the call's arguments (and its parameters' defaults) bound to its
        parameters (the launches in it are the script's); its own names are forgotten after. Its ``return``
        value, or ``_Unknown``."""
        if self.depth >= _DEPTH:
            return _Unknown
        outer = dict(self.names)
        parameters = function.args.args
        defaults = dict(zip([p.arg for p in parameters[::-1]], function.args.defaults[::-1], strict=False))
        given = {p.arg: a for p, a in zip(parameters, call.args, strict=False)}
        given.update((k.arg, k.value) for k in call.keywords if k.arg)
        for parameter in parameters:
            argument = given.get(parameter.arg, defaults.get(parameter.arg))
            value = _Unknown if argument is None else self.known_or_unknown(argument)
            self.bind(ast.Name(parameter.arg, ast.Store()), value)
        self.depth += 1
        try:
            self.block(function.body)
        except _Returned as returned:
            return returned.value
        finally:
            self.depth -= 1
            self.names = outer
        return _Unknown

    def launch(self, node: ast.Call, kernel: str, grid: tuple[int, ...] = ()) -> None:
        parameters = list(self.kernels[kernel])
        fields: dict[str, str] = {}
        try:
            given = [(parameters[i], a) for i, a in enumerate(node.args)]
            given += [(k.arg, k.value) for k in node.keywords if k.arg in parameters]
        except IndexError:
            return
        for parameter, argument in given:
            try:
                value = self.value(argument)
            except _Unknown:
                return
            if isinstance(value, Tensor):
                fields[parameter] = value.spec()
            elif isinstance(value, (bool, int, float)):
                fields[parameter] = str(value).lower() if isinstance(value, bool) else str(value)
            else:
                return  # a tuple, a string ...: not a spec value
        spec = " ".join(f"{p}={fields[p]}" for p in parameters if p in fields)
        self.found.append(ScriptLaunch(kernel, spec, f"{self.script}:{node.lineno}", grid))


def _shape(values: list[Any]) -> tuple[int, ...]:
    """A shape given as one tuple or as separate dimensions."""
    dims = values[0] if len(values) == 1 and isinstance(values[0], tuple) else tuple(values)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise _Unknown("shape")
    return tuple(dims)


def _nested_shape(data: Any) -> tuple[int, ...]:
    if not isinstance(data, tuple):
        return ()
    inner = {_nested_shape(v) for v in data}
    if len(inner) != 1:
        raise _Unknown("ragged literal")
    return (len(data), *inner.pop())


def _leaves(data: Any) -> list[Any]:
    return [leaf for v in data for leaf in _leaves(v)] if isinstance(data, tuple) else [data]


def _arithmetic(op: ast.operator, left: Any, right: Any) -> Tensor:
    """``left op right`` where one side at least is a tensor and the other a tensor or a Python number."""
    operands = [left, right]
    if not all(
        isinstance(v, Tensor) or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in operands
    ):
        raise _Unknown("arithmetic on an unknown")
    tensors = [v for v in operands if isinstance(v, Tensor)]
    if isinstance(op, ast.MatMult):
        if len(tensors) != 2:
            raise _Unknown("@ with a number")
        shape = script_shapes.matmul(left.shape, right.shape)
    else:
        shape = script_shapes.broadcast(*(t.shape for t in tensors))
    first, second = (v.dtype if isinstance(v, Tensor) else v for v in operands)
    return Tensor(shape, script_shapes.promoted(op, first, second, tensors[0].floating), tensors[0].floating)


def _method(base: Tensor, name: str, arguments: list[Any]) -> Tensor:
    """A tensor method of ``_CASTS``/``_ELEMENTWISE``, ``expand`` or ``transpose``."""
    if name in _CASTS and not arguments:
        return Tensor(base.shape, _CASTS[name], base.floating)
    if name in _ELEMENTWISE and not arguments:
        return base
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in arguments):
        raise _Unknown(name)
    if name == "expand" and arguments:
        return Tensor(script_shapes.expanded(base.shape, arguments), base.dtype, base.floating)
    if name == "transpose" and len(arguments) == 2:
        return Tensor(script_shapes.transposed(base.shape, *arguments), base.dtype, base.floating)
    raise _Unknown(name)


def _builtin(name: str, arguments: list[Any]) -> Any:
    """``range(...)`` as a tuple of its ints (bounded), ``len`` of a tuple."""
    if name == "len" and len(arguments) == 1 and isinstance(arguments[0], tuple):
        return len(arguments[0])
    if name == "range" and 1 <= len(arguments) <= 3:
        if all(isinstance(a, int) and not isinstance(a, bool) for a in arguments):
            numbers = range(*arguments)
            if len(numbers) <= _RANGE_LIMIT:
                return tuple(numbers)
    raise _Unknown(name)
