"""Proof inputs read from a tutorial script without running it, for ``migrate_corpus.py``.

The PyTorch/JAX tutorial scripts of the corpus cannot run here (torch's wheel pulls GBs of CUDA, torch_xla needs a
Neuron device), so their kernel launches are read from the text: the script's top level and its ``__main__`` block
are evaluated statement by statement over names, literals and arithmetic, ``argparse`` defaults (``args.nrows``),
and the tensor constructors feeding a kernel call (``torch.rand/randn/ones/zeros/empty/arange/tensor``,
``np.random.*``/``np.ones``..., ``jax.random.uniform/normal``, ``jnp.ones``...), with ``.to``/``.astype``/
``.reshape``/``.T`` -- shapes and dtypes only, nothing is computed. Each kernel call whose arguments are all
arrays and numbers gives that kernel a spec (``a=float32[1,256,512] eps=1e-05``) and the script line it came from;
the proof then simulates the kernel on seeded NumPy arrays of those shapes. A statement that needs anything else
(a device, a function of the script) is skipped and its names forgotten.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


@dataclass(frozen=True)
class Tensor:
    """An array the script builds: its shape and dtype only."""

    shape: tuple[int, ...]
    dtype: str

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
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
            left, right = self.value(node.left), self.value(node.right)
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
            base, key = self.value(node.value), self.value(node.slice)
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
        raise _Unknown(type(node).__name__)

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
            return Tensor(base.shape[::-1], base.dtype)
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
        callee = None if isinstance(func, ast.Attribute) else self.known(func)  # kernel, versions["v1"] ...
        if isinstance(callee, KernelRef):
            self.launch(node, callee.name)
            raise _Unknown("a kernel's result")
        if isinstance(callee, ScriptFunction):
            self.inline(callee.node, node)
            raise _Unknown("a script function's result")
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
        raise _Unknown(func.attr)

    def constructed(self, node: ast.Call, name: str, library: str) -> Tensor:
        root = library.split(".")[0]
        default = _FLOAT_DEFAULT[root]
        if name in _SHAPED:
            positional = node.args[1:] if library == "jax.random" else node.args  # jax: (key, shape)
            shape_node = next((k.value for k in node.keywords if k.arg in ("shape", "size")), None)
            values = (
                [self.value(shape_node)] if shape_node is not None else [self.value(a) for a in positional]
            )
            return Tensor(_shape(values), self.dtype(node, default))
        if name == "arange" and len(node.args) == 1:
            return Tensor((int(self.value(node.args[0])),), self.dtype(node, "int64"))
        if name in ("tensor", "array", "asarray") and node.args:
            data = self.value(node.args[0])
            shape = _nested_shape(data)
            floats = any(isinstance(v, float) for v in _leaves(data))
            return Tensor(shape, self.dtype(node, default if floats else "int64"))
        raise _Unknown(f"{library}.{name}")

    def inline(self, function: ast.FunctionDef, call: ast.Call) -> None:
        """Read ``function``'s body with the call's positional arguments bound to its parameters (the
        launches in it are the script's); its own names are forgotten after."""
        if self.depth >= _DEPTH:
            return
        outer = dict(self.names)
        for parameter, argument in zip(function.args.args, call.args, strict=False):
            try:
                self.names[parameter.arg] = self.value(argument)
            except _Unknown:
                self.names.pop(parameter.arg, None)
        self.depth += 1
        try:
            self.block(function.body)
        finally:
            self.depth -= 1
            self.names = outer

    def launch(self, node: ast.Call, kernel: str) -> None:
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
        self.found.append(ScriptLaunch(kernel, spec, f"{self.script}:{node.lineno}"))


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
