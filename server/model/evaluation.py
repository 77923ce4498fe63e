"""Expression evaluation of the compile-time interpreter: names, imports, operators, views and calls.

Statements, loops and asserts are in ``interpreter.py`` (which subclasses :class:`ExpressionEvaluator`).
Calls of user functions are inlined per call site with the caller's values, as NKI does.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nki_studio.core.findings import Span
from nki_studio.model import builtin_values, index_tiles
from nki_studio.model import nki_semantics as nki
from nki_studio.model.arithmetic import binop, compare_values, unary
from nki_studio.model.evaluator import Frame
from nki_studio.model.imports import to_canonical
from nki_studio.model.index_tiles import IndexGrid, IndexMask, IndexTile
from nki_studio.model.module_info import ModuleScope, ScopeCache
from nki_studio.model.syntax import expr_text
from nki_studio.model.targets import Target
from nki_studio.model.tensors import CallChain, KernelFacts, LoopFrame
from nki_studio.model.values import (
    MAX_SEQ_LEN,
    UNKNOWN,
    ApiRef,
    ClassVal,
    Const,
    DictVal,
    FunctionVal,
    ModuleRef,
    ObjectVal,
    Seq,
    SliceVal,
    TensorVal,
    Value,
    const_int,
    join,
    join_all,
    named,
)

STEP_BUDGET = 25_000  # evaluated nodes per analysed function (kernel plus inlined helpers)
MAX_CALL_DEPTH = 10


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _BudgetExceeded(Exception):
    pass


class ExpressionEvaluator:
    """Expressions, names and calls of the interpreter; statements are in ``interpreter.Interpreter``."""

    def __init__(
        self, target: Target, facts: KernelFacts, scopes: ScopeCache, module_envs: dict[str, dict[str, Value]]
    ) -> None:
        self.target = target
        self.facts = facts
        self.scopes = scopes
        self.seq = 0
        self.steps = 0
        self.loops: list[LoopFrame] = []
        self.branches: list[tuple[int, int]] = []  # (branch point, taken side) of enclosing unknown ifs
        self.masks: list[Value] = []  # legacy mask= of the calls whose arguments are being evaluated
        self.havoc_depth = 0
        self.chain: list[tuple[str, Span]] = []
        self.active: list[ast.AST] = []
        self.inlined: set[ast.AST] = set()
        self.module_envs = module_envs
        self.pending_imports = scopes.pending_imports
        self.frame: Frame | None = None

    # ------------------------------------------------------------------ bookkeeping
    def next_seq(self) -> int:
        """A new event number of the linear trace."""
        self.seq += 1
        return self.seq

    def span(self, node: ast.AST) -> Span:
        """1-based code-point span of a node in the current module."""
        mod = self.module
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        col = mod.column(line, getattr(node, "col_offset", 0))
        end_col = mod.column(end_line, getattr(node, "end_col_offset", None) or 0)
        return Span(line, col, end_line, max(end_col, col + 1) if end_line == line else end_col)

    @property
    def module(self) -> ModuleScope:
        """The module of the running frame."""
        assert self.frame is not None
        return self.frame.module

    @property
    def call_chain(self) -> CallChain:
        """Helper call sites leading to the current frame, outermost first."""
        return tuple(self.chain)

    def context_depth(self) -> tuple[int, int]:
        """(summarised-loop depth, unknown-branch depth) of the code running now."""
        return (self.havoc_depth, len(self.branches))

    def uncertain_write(self, created: tuple[int, int]) -> str | None:
        """How sure a write into a container/object made at ``created`` is: "loop" when it happens in a
        summarised loop the container outlives (the write's value holds for one iteration only), "branch"
        when under an unknown ``if`` it outlives (the write may not happen), else None."""
        if self.havoc_depth > created[0]:
            return "loop"
        if len(self.branches) > created[1]:
            return "branch"
        return None

    def use(self, value: Value) -> None:
        """Record that a tensor (or the tensors inside a tuple/list) is used now, for liveness."""
        if isinstance(value, TensorVal) and value.storage is not None:
            value.storage.last_use = self.seq
        elif isinstance(value, Seq) and len(value.items) <= 64:
            for item in value.items:
                self.use(item)

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise _BudgetExceeded

    # ------------------------------------------------------------------ names
    def new_frame(self, module: ModuleScope, function: str) -> Frame:
        """An empty frame (to evaluate defaults and class bodies in their own module)."""
        return Frame({}, module, function)

    def lookup(self, name: str) -> Value:
        """A variable of the running frame, then the module's globals, then builtins."""
        assert self.frame is not None
        if name in self.frame.env:
            return self.frame.env[name]
        module_env = self.module_env(self.frame.module)
        if name in module_env:
            return module_env[name]
        pending = self.pending_imports.get(self.frame.module.path)
        if pending and name in pending:
            value = self._import_value(self.frame.module, name, pending.pop(name))
            module_env[name] = value
            return value
        if name in _BUILTINS:
            return ApiRef("builtins." + name)
        return UNKNOWN

    def module_env(self, module: ModuleScope) -> dict[str, Value]:
        """Module globals: imports, functions, classes and simple constants, evaluated once per module."""
        env = self.module_envs.get(module.path)
        if env is not None:
            return env
        env = {}
        self.module_envs[module.path] = env
        self.pending_imports[module.path] = dict(module.info.module_imports())  # resolved on first lookup
        for name, node in module.functions.items():
            env[name] = FunctionVal(node, module)
        for name, cls in module.classes.items():
            env[name] = ClassVal(cls, module)
        saved = self.frame
        self.frame = Frame(env, module, nki.MODULE_FRAME)
        try:
            for stmt in module.info.tree.body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    self.exec_stmt(stmt)
        except (_Return, _Break, _Continue, _BudgetExceeded):
            pass
        finally:
            self.frame = saved
        return env

    def _import_value(self, module: ModuleScope, local: str, dotted: str | None) -> Value:
        found = self.scopes.local_symbol(module, local)  # None for NKI/library/stdlib imports
        if isinstance(found, ModuleScope):
            return _LocalModule(found)
        if found is not None:
            other, name = found
            if name in other.functions:
                return FunctionVal(other.functions[name], other)
            if name in other.classes:
                return ClassVal(other.classes[name], other)
            return UNKNOWN
        return nki.resolve_qualname(to_canonical(dotted), self.target) if dotted else UNKNOWN

    # ------------------------------------------------------------------ statement hooks (interpreter.py)
    def exec_block(self, body: list[ast.stmt]) -> None:
        """Run statements in order (implemented by the statement interpreter)."""
        raise NotImplementedError

    def exec_stmt(self, stmt: ast.stmt) -> None:
        """Run one statement (implemented by the statement interpreter)."""
        raise NotImplementedError

    def assign(self, target: ast.expr, value: Value) -> None:
        """Bind a value to an assignment target (implemented by the statement interpreter)."""
        raise NotImplementedError

    def learn_from_test(self, test: ast.expr) -> None:
        """Refine values from an asserted condition (implemented by the statement interpreter)."""
        raise NotImplementedError

    def iteration_values(self, iterable: Value) -> list[Value] | None:
        """The values a loop over ``iterable`` takes (implemented by the statement interpreter)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ expressions
    def eval(self, node: ast.expr | None) -> Value:
        """Evaluate an expression to a value (UNKNOWN when it cannot be followed)."""
        if node is None:
            return Const(None)
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise _BudgetExceeded
        handler = _EVAL.get(type(node))
        return handler(self, node) if handler is not None else UNKNOWN

    def _constant(self, node: ast.Constant) -> Value:
        if isinstance(node.value, (int, float, bool, str)) or node.value is None:
            return Const(node.value)
        return nki.ELLIPSIS if node.value is Ellipsis else UNKNOWN

    def _name(self, node: ast.Name) -> Value:
        return self.lookup(node.id)

    def _attribute(self, node: ast.Attribute) -> Value:
        return self.attribute(self.eval(node.value), node.attr, node)

    def _binop(self, node: ast.BinOp) -> Value:
        left, right = self.eval(node.left), self.eval(node.right)
        if any(isinstance(v, (IndexTile, IndexMask)) for v in (left, right)):
            return index_tiles.tile_binop(node.op, left, right)
        return binop(node.op, left, right, expr_text(node.left), expr_text(node.right))

    def _unaryop(self, node: ast.UnaryOp) -> Value:
        return unary(node.op, self.eval(node.operand))

    def _ifexp(self, node: ast.IfExp) -> Value:
        test = self.truth(self.eval(node.test))
        if test is not None:
            return self.eval(node.body if test else node.orelse)
        branch_id = self.next_seq()
        values = []
        for index, part in enumerate((node.body, node.orelse)):
            self.branches.append((branch_id, index))
            try:
                values.append(self.eval(part))
            finally:
                self.branches.pop()
        return join(values[0], values[1])

    def _sequence(self, node: ast.Tuple | ast.List) -> Value:
        items, exact = self.eval_elements(node.elts)
        return Seq(
            items if exact else [],
            is_list=isinstance(node, ast.List),
            exact=exact,
            created=self.context_depth(),
        )

    def _dict(self, node: ast.Dict) -> Value:
        out: dict[str, Value] = {}
        for key, val in zip(node.keys, node.values, strict=False):
            k = self.eval(key) if key is not None else UNKNOWN
            if isinstance(k, Const) and isinstance(k.value, str):
                out[k.value] = self.eval(val)
        return DictVal(out, created=self.context_depth())

    def _slice(self, node: ast.Slice) -> Value:
        return SliceVal(
            self.eval(node.lower),
            self.eval(node.upper),
            self.eval(node.step) if node.step is not None else Const(1),
        )

    def _named_expr(self, node: ast.NamedExpr) -> Value:
        value = self.eval(node.value)
        self.assign(node.target, value)
        return value

    def _starred(self, node: ast.Starred) -> Value:
        return self.eval(node.value)

    def attribute(self, owner: Value, attr: str, node: ast.AST) -> Value:
        """``owner.attr`` for API namespaces, tensors, user objects and local modules."""
        if isinstance(owner, (ModuleRef, ApiRef)):
            return nki.resolve_qualname(f"{owner.qualname}.{attr}", self.target)
        if isinstance(owner, TensorVal):
            return nki.tensor_attribute(owner, attr, expr_text(getattr(node, "value", node)))
        if isinstance(owner, ObjectVal):
            return owner.attrs.get(attr, UNKNOWN)
        if isinstance(owner, _LocalModule):
            env = self.module_env(owner.info)
            return env.get(attr, UNKNOWN)
        if isinstance(owner, ClassVal):
            return builtin_values.class_attribute(self, owner, attr)
        if isinstance(owner, IndexGrid):
            return index_tiles.grid_attribute(owner, attr)
        return UNKNOWN

    def boolop(self, node: ast.BoolOp) -> Value:
        """``and`` / ``or`` with Python's short-circuit semantics on known truth values."""
        result: Value = UNKNOWN
        for part in node.values:
            result = self.eval(part)
            truth = self.truth(result)
            if truth is None:
                return UNKNOWN
            if isinstance(node.op, ast.And) and not truth:
                return result
            if isinstance(node.op, ast.Or) and truth:
                return result
        return result

    def compare(self, node: ast.Compare) -> Value:
        """Chained comparisons of known constants, tuples, dtypes and buffers; an index tile against a constant
        is a legacy mask predicate (``model.index_tiles.tile_compare``)."""
        left = self.eval(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=False):
            right = self.eval(comp)
            if len(node.ops) == 1 and (isinstance(left, IndexTile) or isinstance(right, IndexTile)):
                return index_tiles.tile_compare(op, left, right)
            outcome = compare_values(op, left, right)
            if outcome is None:
                return UNKNOWN
            if not outcome:
                return Const(False)
            left = right
        return Const(True)

    def truth(self, value: Value) -> bool | None:
        """Python truthiness of a known value, else None."""
        if isinstance(value, Const):
            return bool(value.value)
        if isinstance(value, Seq) and value.exact:
            return bool(value.items)
        if isinstance(value, (TensorVal, FunctionVal, ClassVal, ObjectVal, ModuleRef)):
            return True
        return None

    def subscript(self, node: ast.Subscript) -> Value:
        """``container[key]`` for tensors (views), tuples/lists and dicts."""
        container = self.eval(node.value)
        if isinstance(container, TensorVal):
            self.next_seq()
            view = nki.subscript_tensor(self, container, node.slice, node)
            self.use(container)
            return view
        key = self.eval(node.slice)
        if isinstance(container, IndexTile):
            return index_tiles.tile_subscript(container, key)
        if isinstance(container, ApiRef) and container.qualname == "nki.language.mgrid":
            return index_tiles.mgrid(key)
        if isinstance(container, Seq):
            if isinstance(key, SliceVal):
                if not container.exact:
                    return UNKNOWN
                bounds = (
                    const_int(key.start) if key.start.known and not _is_none(key.start) else None,
                    const_int(key.stop) if key.stop.known and not _is_none(key.stop) else None,
                    const_int(key.step),
                )
                if any(
                    v is None and k.known and not _is_none(k)
                    for v, k in zip(bounds, (key.start, key.stop, key.step), strict=False)
                ):
                    return UNKNOWN
                return Seq(container.items[slice(*bounds)], is_list=container.is_list)
            index = const_int(key)
            if (
                index is None
                or not container.exact
                or not -len(container.items) <= index < len(container.items)
            ):
                # Some element is read: each may be the one, so all stay live; their common value if any.
                self.use(container)
                return join_all(list(container.items)) if container.items else UNKNOWN
            return container.items[index]
        if isinstance(container, DictVal) and isinstance(key, Const) and isinstance(key.value, str):
            return container.items.get(key.value, UNKNOWN)
        if isinstance(container, Const) and isinstance(container.value, str):
            return UNKNOWN
        return UNKNOWN

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> Value:
        """List comprehensions over known short iterables (one generator, optional ifs)."""
        assert self.frame is not None
        if len(node.generators) != 1:
            return Seq([], is_list=True, exact=False)
        gen = node.generators[0]
        items = self.iteration_values(self.eval(gen.iter))
        saved = dict(self.frame.env)
        out: list[Value] = []
        try:
            if items is None or len(items) > MAX_SEQ_LEN:
                self.assign(gen.target, UNKNOWN)
                self.eval(node.elt)  # still record allocations / uses made by the element expression
                return Seq([], is_list=True, exact=False)
            for item in items:
                self.assign(gen.target, item)
                keep = True
                for cond in gen.ifs:
                    truth = self.truth(self.eval(cond))
                    if truth is None:
                        self.frame.env = saved
                        return Seq([], is_list=True, exact=False)
                    keep = keep and truth
                if keep:
                    out.append(self.eval(node.elt))
            return Seq(out, is_list=True, created=self.context_depth())
        finally:
            self.frame.env = saved

    # ------------------------------------------------------------------ calls
    def eval_call(self, node: ast.Call, as_statement: bool = False) -> Value:
        """Evaluate a call: NKI API, builtin, user function (inlined), user class, or method."""
        func_node = node.func
        if node.args and "assert" in expr_text(func_node).lower():
            self.learn_from_test(node.args[0])  # kernel_assert(x.shape == (...), msg) and friends
        if isinstance(func_node, ast.Attribute):
            owner = self.eval(func_node.value)
            if isinstance(owner, TensorVal):
                args, kwargs = self.eval_args(node)
                self.next_seq()
                result = nki.tensor_method(self, owner, func_node.attr, args, kwargs, node)
                self.use(owner)
                for arg in (*args, *kwargs.values()):
                    self.use(arg)
                return result
            if isinstance(owner, Seq) and owner.is_list:
                args, _ = self.eval_args(node)
                return builtin_values.list_method(self, owner, func_node.attr, args)
            if isinstance(owner, DictVal):
                args, _ = self.eval_args(node)
                return builtin_values.dict_method(owner, func_node.attr, args)
            func = self.attribute(owner, func_node.attr, func_node)
        else:
            func = self.eval(func_node)
        args, kwargs = self.eval_args(node)
        if isinstance(func, ApiRef):
            if func.qualname.startswith("builtins."):
                return builtin_values.builtin_call(self, func.qualname[9:], args, kwargs)
            head, _, name = func.qualname.rpartition(".")
            if head == "math":
                return builtin_values.math_call(name, args)
            return nki.call_api(self, func.qualname, args, kwargs, node, as_statement)
        if isinstance(func, FunctionVal):
            return self.call_function(func, args, kwargs, node)
        if isinstance(func, ClassVal):
            return builtin_values.instantiate(self, func, args, kwargs)
        for arg in (*args, *kwargs.values()):
            self.use(arg)
        return UNKNOWN

    def eval_elements(self, elts: list[ast.expr]) -> tuple[list[Value], bool]:
        """Values of tuple/list elements or call arguments, ``*seq`` expanded; False if a ``*`` was unknown
        (an UNKNOWN then stands in its place)."""
        items: list[Value] = []
        exact = True
        for elt in elts:
            if isinstance(elt, ast.Starred):
                inner = self.eval(elt.value)
                if isinstance(inner, Seq) and inner.exact:
                    items.extend(inner.items)
                else:
                    items.append(UNKNOWN)
                    exact = False
            else:
                items.append(self.eval(elt))
        return items, exact

    def eval_args(self, node: ast.Call) -> tuple[list[Value], dict[str, Value]]:
        """Positional and keyword argument values (``*seq`` expanded when known). A legacy ``mask=`` is evaluated
        first: the accesses among the other arguments span only what it keeps (``model.index_tiles``)."""
        mask = next((self.eval(kw.value) for kw in node.keywords if kw.arg == "mask"), None)
        if isinstance(mask, IndexMask):
            self.masks.append(mask)
        try:
            args, _ = self.eval_elements(node.args)
            kwargs: dict[str, Value] = {}
            for kw in node.keywords:
                value = mask if kw.arg == "mask" and mask is not None else self.eval(kw.value)
                if kw.arg is None:
                    if isinstance(value, DictVal):
                        kwargs.update(value.items)
                else:
                    kwargs[kw.arg] = value
            return args, kwargs
        finally:
            if isinstance(mask, IndexMask):
                self.masks.pop()

    def call_function(
        self, fn: FunctionVal, args: list[Value], kwargs: dict[str, Value], node: ast.Call
    ) -> Value:
        """Inline a user function at this call site with the caller's values (NKI inlines calls)."""
        if (
            fn.node in self.active
            or len(self.chain) >= MAX_CALL_DEPTH
            or isinstance(fn.node, ast.AsyncFunctionDef)
        ):
            for arg in (*args, *kwargs.values()):
                self.use(arg)
            return UNKNOWN
        assert self.frame is not None
        env = dict(fn.closure.env) if isinstance(fn.closure, Frame) else {}
        env.update(self.bind_params(fn, args, kwargs))
        caller = self.frame
        self.chain.append((caller.module.path, self.span(node)))
        self.active.append(fn.node)
        self.inlined.add(fn.node)
        self.frame = Frame(env, fn.module, fn.node.name)
        result: Value
        try:
            self.exec_block(fn.node.body)
            result = join_all(self.frame.returns) if self.frame.returns else Const(None)
        except _Return as ret:
            result = join_all([*self.frame.returns, ret.value])
        except (_Break, _Continue):
            result = UNKNOWN
        finally:
            self.frame = caller
            self.active.pop()
            self.chain.pop()
        return result

    def bind_params(self, fn: FunctionVal, args: list[Value], kwargs: dict[str, Value]) -> dict[str, Value]:
        """Parameter values of an inlined call: positional, keyword, then defaults (evaluated in the callee)."""
        a = fn.node.args
        positional = [*a.posonlyargs, *a.args]
        env: dict[str, Value] = {}
        for param, value in zip(positional, args, strict=False):
            env[param.arg] = value
        defaults = dict(
            zip([p.arg for p in positional[len(positional) - len(a.defaults) :]], a.defaults, strict=False)
        )
        kw_defaults = {p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False) if d is not None}
        saved = self.frame
        self.frame = Frame({}, fn.module, fn.node.name)
        try:
            for param in [*positional, *a.kwonlyargs]:
                name = param.arg
                if name in env:
                    continue
                if name in kwargs:
                    env[name] = kwargs[name]
                elif name in defaults:
                    env[name] = self.eval(defaults[name])
                elif name in kw_defaults:
                    env[name] = self.eval(kw_defaults[name])
                else:
                    env[name] = UNKNOWN
        finally:
            self.frame = saved
        if a.vararg is not None:
            env[a.vararg.arg] = Seq(args[len(positional) :])
        if a.kwarg is not None:
            known = {p.arg for p in [*positional, *a.kwonlyargs]}
            env[a.kwarg.arg] = DictVal({k: v for k, v in kwargs.items() if k not in known})
        return {k: named(v, k) for k, v in env.items()}


@dataclass(frozen=True, eq=False)
class _LocalModule(Value):
    """A local helper module imported as a whole (``from . import helpers``)."""

    info: ModuleScope


_BUILTINS = frozenset(
    {
        "range",
        "len",
        "min",
        "max",
        "abs",
        "int",
        "float",
        "bool",
        "tuple",
        "list",
        "enumerate",
        "zip",
        "sum",
        "divmod",
        "isinstance",
        "print",
        "round",
        "any",
        "all",
        "reversed",
        "slice",
        "str",
        "sorted",
        "hasattr",
        "getattr",
        "type",
        "dict",
        "pow",
    }
)


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


# Expression kind -> evaluator (kinds not listed, e.g. f-strings and lambdas, are UNKNOWN).
_E = ExpressionEvaluator
_EVAL: dict[type, Callable[[ExpressionEvaluator, Any], Value]] = {
    ast.Name: _E._name,
    ast.Call: _E.eval_call,
    ast.Attribute: _E._attribute,
    ast.Constant: _E._constant,
    ast.BinOp: _E._binop,
    ast.Subscript: _E.subscript,
    ast.Tuple: _E._sequence,
    ast.List: _E._sequence,
    ast.Compare: _E.compare,
    ast.UnaryOp: _E._unaryop,
    ast.BoolOp: _E.boolop,
    ast.IfExp: _E._ifexp,
    ast.Dict: _E._dict,
    ast.Slice: _E._slice,
    ast.ListComp: _E.comprehension,
    ast.GeneratorExp: _E.comprehension,
    ast.NamedExpr: _E._named_expr,
    ast.Starred: _E._starred,
}
