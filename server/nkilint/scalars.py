"""The dtype of ``NkiScalar`` values and the facts (dtype, buffer, shape) of the tensors they come from, followed
through kernel code in source order, for the 0.7 scalar rules (nki-0.7.md §2.4).

A scalar's dtype is the dtype of the tile ``nisa.scalar_load`` read it from and is fixed for life; arithmetic keeps
it. Only what is visible is known: a tensor allocated in kernel code (``nl.ndarray``/``nl.zeros``/... with a literal
``dtype``), a scalar loaded from such a tensor, arithmetic of such scalars. Parameters, loop variables and names
bound in any other way are unknown, so the rules built on these facts cannot raise false alarms on them. A nested
function (a ``fori_loop`` body) starts from what its enclosing function knew where it was defined (closures).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from nki_studio.model.kernels import FunctionInfo
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.ruleutil import own_nodes

SCALAR_LOAD = "nki.isa.scalar_load"
SCALAR_STORE = "nki.isa.scalar_store"
SCALAR_DTYPES = ("int32", "int64")

# Allocating nki.language functions -> position of a positional ``dtype`` (language.md §6).
_ALLOCATIONS = {"ndarray": 1, "zeros": 1, "ones": 1, "full": 2, "empty_like": 1, "zeros_like": 1}
# Documented default buffer where ``buffer=`` is omitted (language.md §6: ndarray/zeros default to sbuf).
_DEFAULT_BUFFER = {"ndarray": "sbuf", "zeros": "sbuf"}
_DTYPE_MODULES = ("nki.language.", "numpy.")
_BUFFERS = frozenset({"sbuf", "psum", "hbm", "shared_hbm", "private_hbm"})


@dataclass(frozen=True)
class TensorFacts:
    """What is known of a tensor allocated in kernel code (``None``: not known)."""

    dtype: str | None  # short dtype name: "int32", "uint32", "float32", ...
    buffer: str | None  # "sbuf", "psum", "hbm", "shared_hbm", "private_hbm"
    shape: tuple[int, ...] | None  # literal shape; None for views and non-literal shapes

    @property
    def on_chip(self) -> bool:
        """Whether the tensor is in SBUF or PSUM."""
        return self.buffer in ("sbuf", "psum")


@dataclass
class ScalarFacts:
    """Per expression node (by ``id``): the dtype of a scalar expression and the facts of a tensor expression, as
    known at that point of the code."""

    scalar: dict[int, str] = field(default_factory=dict)
    tensor: dict[int, TensorFacts] = field(default_factory=dict)

    def dtype(self, node: ast.AST | None) -> str | None:
        """``"int32"``/``"int64"`` when ``node`` is a scalar of known dtype."""
        return None if node is None else self.scalar.get(id(node))

    def tensor_of(self, node: ast.AST | None) -> TensorFacts | None:
        """Facts of the tensor ``node`` names, when known."""
        return None if node is None else self.tensor.get(id(node))


def argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    """The argument at ``position`` or passed as ``keyword``."""
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def scalar_facts(ctx: LintContext) -> ScalarFacts | None:
    """Facts for the file's kernel code, computed once; ``None`` when no kernel code calls ``nisa.scalar_load``
    (then no scalar of known dtype exists)."""
    if not ctx.kernel_calls_to(SCALAR_LOAD):
        return None
    memo = ctx.memo.get("scalar_facts")
    if memo is None:
        memo = _Walker(ctx).run()
        ctx.memo["scalar_facts"] = memo
    return memo


_State = tuple[dict[str, TensorFacts], dict[str, str]]


class _Walker:
    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self.facts = ScalarFacts()
        self.at_def: dict[int, _State] = {}  # state where each nested def statement stands
        self.done: set[int] = set()
        self.tensors: dict[str, TensorFacts] = {}
        self.scalars: dict[str, str] = {}
        self.seen: set[int] = set()

    def run(self) -> ScalarFacts:
        for func in self.ctx.kernel_code():
            self._function(func)
        return self.facts

    def _function(self, func: FunctionInfo) -> None:
        if id(func.node) in self.done:
            return
        self.done.add(id(func.node))
        start: _State = ({}, {})
        if func.parent is not None:
            self._function(func.parent)
            start = self.at_def.get(id(func.node), start)
        self.tensors, self.scalars = dict(start[0]), dict(start[1])
        args = func.node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                self._forget(arg.arg)
        for node in own_nodes(self.ctx, func):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.at_def[id(node)] = (dict(self.tensors), dict(self.scalars))
                self._forget(node.name)
            elif isinstance(node, ast.Assign):
                self._assign(node)
            elif isinstance(node, ast.AugAssign):
                self._aug_assign(node)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    self._eval(node.value)
                self._bind_unknown(node.target)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                self._eval(node.iter)
                self._bind_unknown(node.target)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    self._eval(item.context_expr)
                    if item.optional_vars is not None:
                        self._bind_unknown(item.optional_vars)
            elif isinstance(node, ast.NamedExpr):
                self._eval(node.value)
                self._forget(node.target.id)
            elif isinstance(node, ast.expr):
                self._eval(node)

    def _forget(self, name: str) -> None:
        self.tensors.pop(name, None)
        self.scalars.pop(name, None)

    def _bind_unknown(self, target: ast.expr) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self._forget(node.id)
            elif isinstance(node, ast.expr):
                self._eval(node)  # subscripts/attributes in a target read their base

    def _assign(self, node: ast.Assign) -> None:
        dtype = self._eval(node.value)  # before binding: the value reads the old names
        tensor = self._allocation(node.value) or self.facts.tensor_of(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name):
                self._forget(target.id)
                if dtype is not None:
                    self.scalars[target.id] = dtype
                elif tensor is not None:
                    self.tensors[target.id] = tensor
            else:
                self._bind_unknown(target)

    def _aug_assign(self, node: ast.AugAssign) -> None:
        value = self._eval(node.value)
        if not isinstance(node.target, ast.Name):
            self._bind_unknown(node.target)
            return
        self._eval(node.target)
        current = self.scalars.get(node.target.id)
        self._forget(node.target.id)
        result = _combine(current, value)
        if result is not None:
            self.scalars[node.target.id] = result

    def _eval(self, node: ast.expr) -> str | None:
        """Record facts for ``node`` and its sub-expressions under the current state; the scalar dtype of
        ``node``."""
        if id(node) in self.seen:
            return self.facts.dtype(node)
        self.seen.add(id(node))
        dtype: str | None = None
        if isinstance(node, ast.Name):
            dtype = self.scalars.get(node.id)
            tensor = self.tensors.get(node.id)
            if tensor is not None:
                self.facts.tensor[id(node)] = tensor
        elif isinstance(node, ast.BinOp):
            dtype = _combine(self._eval(node.left), self._eval(node.right))
        elif isinstance(node, ast.UnaryOp):
            inner = self._eval(node.operand)
            dtype = inner if isinstance(node.op, (ast.USub, ast.UAdd)) else None
        elif isinstance(node, ast.Lambda):
            return None  # its own scope
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self._eval(child)
                elif isinstance(child, ast.keyword):
                    self._eval(child.value)
                elif isinstance(child, ast.comprehension):
                    return None  # comprehension scopes are not followed
            if isinstance(node, ast.Subscript):
                base = self.facts.tensor_of(node.value)
                if base is not None:  # a view keeps dtype and buffer, not the shape
                    self.facts.tensor[id(node)] = TensorFacts(base.dtype, base.buffer, None)
            elif isinstance(node, ast.Call) and self.ctx.aliases.canonical(node.func) == SCALAR_LOAD:
                src = self.facts.tensor_of(argument(node, 0, "src"))
                if src is not None and src.dtype in SCALAR_DTYPES:
                    dtype = src.dtype
        if dtype is not None:
            self.facts.scalar[id(node)] = dtype
        return dtype

    def _allocation(self, value: ast.expr) -> TensorFacts | None:
        if not isinstance(value, ast.Call):
            return None
        name = self.ctx.aliases.canonical(value.func)
        if name is None or not name.startswith("nki.language."):
            return None
        short = name.rsplit(".", 1)[1]
        position = _ALLOCATIONS.get(short)
        if position is None:
            return None
        dtype = _dtype_name(self.ctx, argument(value, position, "dtype"))
        buffer = _short_name(
            self.ctx, argument(value, 2 if short != "full" else 3, "buffer"), ("nki.language.",)
        )
        if buffer is not None and buffer not in _BUFFERS:
            buffer = None
        if buffer is None and argument(value, 2 if short != "full" else 3, "buffer") is None:
            buffer = _DEFAULT_BUFFER.get(short)
        shape = (
            _literal_shape(argument(value, 0, "shape")) if short not in ("empty_like", "zeros_like") else None
        )
        if dtype is None and buffer is None:
            return None
        return TensorFacts(dtype, buffer, shape)


def _combine(left: str | None, right: str | None) -> str | None:
    """Dtype of arithmetic of two operands: the known one, or the common one; mixed dtypes are unknown (reported
    once, where they mix)."""
    if left is None or right is None:
        return left or right
    return left if left == right else None


def _dtype_name(ctx: LintContext, node: ast.expr | None) -> str | None:
    """The short name of a dtype written ``nl.int64``/``np.int64``, ``"int64"`` (NKI dtypes are NumPy dtypes, which
    take their names; *inferred*, the simulator accepts it), or a module constant bound once to one of those (library
    code names its dtypes so: ``INDEX_DTYPE = nl.int64``)."""
    if isinstance(node, ast.Name) and node.id not in ctx.aliases.bindings:
        node = _module_constants(ctx).get(node.id, node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return _short_name(ctx, node, _DTYPE_MODULES)


def _module_constants(ctx: LintContext) -> dict[str, ast.expr]:
    """Names bound once in the whole file, by a plain module-level ``NAME = value``, with their value."""
    memo = ctx.memo.get("module_constants")
    if memo is None:
        stores: dict[str, int] = {}
        for node in ctx.nodes:
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stores[node.name] = stores.get(node.name, 0) + 2  # never a constant
            elif isinstance(node, ast.arg):
                stores[node.arg] = stores.get(node.arg, 0) + 2  # a parameter shadows it
        memo = {
            stmt.targets[0].id: stmt.value
            for stmt in ctx.tree.body
            if isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stores.get(stmt.targets[0].id) == 1
        }
        ctx.memo["module_constants"] = memo
    return memo


def _short_name(ctx: LintContext, node: ast.expr | None, modules: tuple[str, ...]) -> str | None:
    if node is None:
        return None
    name = ctx.aliases.canonical(node)
    if name is None or not name.startswith(modules):
        return None
    return name.rsplit(".", 1)[1]


def _literal_shape(node: ast.expr | None) -> tuple[int, ...] | None:
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    dims = []
    for elt in node.elts:
        if not isinstance(elt, ast.Constant) or type(elt.value) is not int:
            return None
        dims.append(elt.value)
    return tuple(dims)
