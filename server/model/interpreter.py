"""A small abstract interpreter that runs kernel code on compile-time values.

NKI specialises a kernel before compiling it: loops are unrolled, helper calls inlined, shapes and constants
folded. This interpreter does the same on the lattice of ``values.py``: exact values where it can follow the
code, ``UNKNOWN`` everywhere else. Loops with a few known iterations are unrolled; longer or unknown loops run
their body once for a representative iteration after forgetting every variable the body assigns (so nothing
loop-carried is trusted). Helpers are interpreted per call site with the caller's argument values.

It never raises on odd code: a statement that fails to evaluate only forgets what it assigns. A step budget
bounds the work per kernel so a huge or pathological module stays fast.
"""

from __future__ import annotations

import ast
import logging
import os
from dataclasses import dataclass, field

from nki_studio.model import builtin_values
from nki_studio.model import nki_semantics as nki
from nki_studio.model.imports import to_canonical
from nki_studio.model.kernels import _is_external
from nki_studio.model.module_info import ModuleScope, ScopeCache
from nki_studio.model.targets import Target
from nki_studio.model.tensors import CallChain, KernelFacts, LoopFrame
from nki_studio.model.values import (
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
    const_num,
    join,
    merge_binds,
    named,
)
from nki_studio.nkilint.findings import Span

log = logging.getLogger("nki_studio.model.interpreter")
_DEBUG = bool(os.environ.get("NKI_STUDIO_DEBUG_INTERPRETER"))

UNROLL_MAX = 4  # loops with at most this many known iterations are unrolled exactly
STEP_BUDGET = 25_000  # evaluated nodes per analysed function (kernel plus inlined helpers)
MAX_CALL_DEPTH = 10
MAX_SEQ_LEN = 4096  # longest tuple/list/range materialised


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _BudgetExceeded(Exception):
    pass


@dataclass
class Frame:
    """One function activation: local variables and the module it runs in."""

    env: dict[str, Value]
    module: ModuleScope
    function: str
    returns: list[Value] = field(default_factory=list)


class Interpreter:
    """Interprets one root function (a kernel, or a helper analysed on its own) and records facts."""

    def __init__(self, target: Target, facts: KernelFacts, scopes: ScopeCache,
                 module_envs: dict[str, dict[str, Value]]) -> None:
        self.target = target
        self.facts = facts
        self.scopes = scopes
        self.seq = 0
        self.steps = 0
        self.loops: list[LoopFrame] = []
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

    # ------------------------------------------------------------------ entry points
    def run_function(self, fn: FunctionVal, args: dict[str, Value]) -> None:
        """Interpret ``fn`` as a root with the given parameter values (others unknown)."""
        frame = Frame(dict(fn.closure.env) if isinstance(fn.closure, Frame) else {}, fn.module, fn.node.name)
        frame.env.update(args)
        self.frame = frame
        self.inlined.add(fn.node)
        try:
            self.exec_block(fn.node.body)
        except _Return as ret:
            frame.returns.append(ret.value)
        except _BudgetExceeded:
            self.facts.complete = False
        except (_Break, _Continue):
            pass
        self.facts.returns.extend(frame.returns)
        self.facts.params = {name: frame.env.get(name, value) for name, value in args.items()}
        self.facts.finish_liveness()

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
        self.pending_imports[module.path] = dict(module.imported_names())  # resolved on first lookup
        for name, node in module.functions.items():
            env[name] = FunctionVal(node, module)
        for name, cls in module.classes.items():
            env[name] = ClassVal(cls, module)
        saved = self.frame
        self.frame = Frame(env, module, "<module>")
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
        if dotted is not None and _is_external(dotted):
            return nki.resolve_qualname(to_canonical(dotted), self.target)
        found = self.scopes.local_symbol(module, local)
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

    # ------------------------------------------------------------------ statements
    def exec_block(self, body: list[ast.stmt]) -> None:
        """Run statements in order."""
        for stmt in body:
            self.exec_stmt(stmt)

    def exec_stmt(self, stmt: ast.stmt) -> None:
        """Run one statement; failures forget what it assigns instead of raising."""
        self._tick()
        try:
            self._exec(stmt)
        except (_Return, _Break, _Continue, _BudgetExceeded):
            raise
        except RecursionError:
            self.havoc_names(_assigned_names([stmt]))
        except Exception:  # odd code degrades to unknown, never crashes the linter
            if _DEBUG:
                log.exception("interpreter: statement at line %s failed", getattr(stmt, "lineno", "?"))
            self.havoc_names(_assigned_names([stmt]))

    def _exec(self, stmt: ast.stmt) -> None:
        assert self.frame is not None
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Call):
                self.eval_call(stmt.value, as_statement=True)
            else:
                self.eval(stmt.value)
        elif isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value)
            for target in stmt.targets:
                self.assign(target, value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            current = self.eval(_load_copy(stmt.target))
            value = self.binop(stmt.op, current, self.eval(stmt.value), _expr_text(stmt.target),
                               _expr_text(stmt.value))
            if isinstance(stmt.target, ast.Subscript):
                self.use(current)
            self.assign(stmt.target, value)
        elif isinstance(stmt, ast.Return):
            raise _Return(self.eval(stmt.value) if stmt.value is not None else Const(None))
        elif isinstance(stmt, ast.If):
            self.exec_if(stmt)
        elif isinstance(stmt, ast.For):
            self.exec_for(stmt)
        elif isinstance(stmt, ast.While):
            self.exec_while(stmt)
        elif isinstance(stmt, ast.Assert):
            self.learn_from_test(stmt.test)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                ctx = self.eval(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, ctx)
            self.exec_block(stmt.body)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # Python closures bind late: keep the frame, read its variables when the function is called.
            self.frame.env[stmt.name] = FunctionVal(stmt, self.frame.module, self.frame)
        elif isinstance(stmt, ast.ClassDef):
            self.frame.env[stmt.name] = ClassVal(stmt, self.frame.module)
        elif isinstance(stmt, ast.Try):
            self.exec_block(stmt.body)
            self.exec_block(stmt.orelse)
            self.exec_block(stmt.finalbody)
        elif isinstance(stmt, ast.Break):
            raise _Break
        elif isinstance(stmt, ast.Continue):
            raise _Continue
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.frame.env.pop(target.id, None)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.havoc_names(_assigned_names([stmt]))

    def assign(self, target: ast.expr, value: Value) -> None:
        """Bind ``value`` to an assignment target (name, tuple unpacking, subscript or attribute)."""
        assert self.frame is not None
        if isinstance(target, ast.Name):
            if isinstance(value, TensorVal) and value.storage is not None and not value.storage.name:
                value.storage.name = target.id
            self.frame.env[target.id] = named(value, target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = _unpack(value, len(target.elts))
            for elt, item in zip(target.elts, items, strict=False):
                if isinstance(elt, ast.Starred):
                    self.assign(elt.value, UNKNOWN)
                else:
                    self.assign(elt, item)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value)
            if isinstance(container, TensorVal):
                self.next_seq()
                view = nki.subscript_tensor(self, container, target.slice, target)
                self.use(container)
                self.use(value)
                del view
            elif isinstance(container, Seq) and container.is_list:
                index = const_int(self.eval(target.slice))
                if index is not None and -len(container.items) <= index < len(container.items):
                    container.items[index] = value
                else:
                    container.items[:] = [UNKNOWN] * len(container.items)
            elif isinstance(container, DictVal):
                key = self.eval(target.slice)
                if isinstance(key, Const) and isinstance(key.value, str):
                    container.items[key.value] = value
                else:
                    container.items.clear()
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value)
            if isinstance(obj, ObjectVal):
                obj.attrs[target.attr] = value
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN)

    def havoc_names(self, names: set[str]) -> None:
        """Forget the values of ``names`` in the running frame."""
        assert self.frame is not None
        for name in names:
            self.frame.env[name] = UNKNOWN

    def exec_if(self, stmt: ast.If) -> None:
        """Take the known branch, or run both and merge what they assign."""
        assert self.frame is not None
        test = self.truth(self.eval(stmt.test))
        if test is True:
            self.exec_block(stmt.body)
            return
        if test is False:
            self.exec_block(stmt.orelse)
            return
        self.learn_from_test(stmt.test, only_names=True)
        before = self.frame.env
        envs: list[dict[str, Value]] = []
        for body in (stmt.body, stmt.orelse):
            self.frame.env = dict(before)
            try:
                self.exec_block(body)
                envs.append(self.frame.env)
            except _Return as ret:
                self.frame.returns.append(ret.value)
            except (_Break, _Continue):
                envs.append(self.frame.env)  # loop exit/continue inside an unknown branch: keep going
        if not envs:
            self.frame.env = before
            raise _Return(_join_all(self.frame.returns))
        merged = dict(envs[0])
        for other in envs[1:]:
            for key in set(merged) | set(other):
                merged[key] = join(merged.get(key, UNKNOWN), other.get(key, UNKNOWN))
        self.frame.env = merged

    def exec_for(self, stmt: ast.For) -> None:
        """Unroll a short known loop, else run one representative iteration with loop-carried state forgotten."""
        iterable = self.eval(stmt.iter)
        items = self.iteration_values(iterable)
        if items is not None and len(items) == 0:
            self.exec_block(stmt.orelse)
            return
        if items is not None and len(items) <= UNROLL_MAX and self.steps < STEP_BUDGET // 2:
            for item in items:
                self.assign(stmt.target, item)
                try:
                    self.exec_block(stmt.body)
                except _Break:
                    return
                except _Continue:
                    continue
            self.exec_block(stmt.orelse)
            return
        trips = len(items) if items is not None else self.trip_count(iterable)
        first = items[0] if items else UNKNOWN
        self.run_summarised_loop(stmt, stmt.body + stmt.orelse, trips, first)
        if isinstance(iterable, Seq):
            self.use(iterable)  # every element is used by some iteration

    def run_summarised_loop(self, stmt: ast.stmt, body: list[ast.stmt], trips: int | None, first: Value) -> None:
        """Run ``body`` once as a representative iteration of a loop that is not unrolled."""
        assigned = self.scopes.assigned.get(id(stmt))
        if assigned is None:
            assigned = _assigned_names(body)
            if isinstance(stmt, ast.For):
                assigned |= _target_names(stmt.target)
            self.scopes.assigned[id(stmt)] = assigned
        self.havoc_names(assigned)
        frame = LoopFrame(trips)
        self.loops.append(frame)
        self.havoc_depth += 1
        try:
            if isinstance(stmt, ast.For):
                self.assign(stmt.target, first)
            self.exec_block(body)
        except (_Break, _Continue):
            pass
        finally:
            self.havoc_depth -= 1
            self.loops.pop()
            frame.end_seq = self.next_seq()
        self.havoc_names(assigned)

    def exec_while(self, stmt: ast.While) -> None:
        """Unroll while the condition is known (a few times), else summarise the body once."""
        for _ in range(UNROLL_MAX * 4):
            test = self.truth(self.eval(stmt.test))
            if test is False:
                self.exec_block(stmt.orelse)
                return
            if test is None:
                break
            try:
                self.exec_block(stmt.body)
            except _Break:
                return
            except _Continue:
                continue
        self.run_summarised_loop(stmt, stmt.body, None, UNKNOWN)

    def iteration_values(self, iterable: Value) -> list[Value] | None:
        """The values a ``for`` loop takes, when known and not too many."""
        if isinstance(iterable, nki.RangeVal):
            return iterable.values()
        if isinstance(iterable, Seq) and iterable.exact:
            return list(iterable.items)
        if isinstance(iterable, DictVal):
            return [Const(k) for k in iterable.items]
        return None

    def trip_count(self, iterable: Value) -> int | None:
        """Number of iterations of a loop over ``iterable`` when known (even if too many to materialise)."""
        if isinstance(iterable, nki.RangeVal):
            return iterable.length()
        return None

    def learn_from_test(self, test: ast.expr, only_names: bool = False) -> None:
        """Refine values from an asserted condition: ``x.shape == (a, b)``, ``x.dtype == ...``, ``n == 128``."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for part in test.values:
                self.learn_from_test(part, only_names)
            return
        if only_names or not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return
        if not isinstance(test.ops[0], ast.Eq):
            return
        left, right = test.left, test.comparators[0]
        for subject, other in ((left, right), (right, left)):
            if self._refine(subject, other):
                return

    def _refine(self, subject: ast.expr, other: ast.expr) -> bool:
        assert self.frame is not None
        subject = _strip_tuple_call(subject)
        if isinstance(subject, ast.Attribute) and isinstance(subject.value, ast.Name):
            owner = self.lookup(subject.value.id)
            if not isinstance(owner, TensorVal):
                return False
            value = self.eval(other)
            if subject.attr == "shape" and isinstance(value, Seq) and owner.shape is None:
                dims = tuple(named(v, f"{subject.value.id}.shape[{i}]") for i, v in enumerate(value.items))
                self.frame.env[subject.value.id] = nki.with_shape(owner, dims)
                return True
            if subject.attr == "dtype" and value.__class__.__name__ == "DType" and owner.dtype is None:
                self.frame.env[subject.value.id] = nki.with_dtype(owner, value)
                return True
            return False
        if isinstance(subject, ast.Name) and not self.lookup(subject.id).known:
            value = self.eval(other)
            if isinstance(value, Const):
                self.frame.env[subject.id] = named(value, subject.id)
                return True
        return False

    # ------------------------------------------------------------------ expressions
    def eval(self, node: ast.expr | None) -> Value:
        """Evaluate an expression to a value (UNKNOWN when it cannot be followed)."""
        if node is None:
            return Const(None)
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise _BudgetExceeded
        kind = type(node)
        if kind is ast.Name:  # the most frequent kinds first
            return self.lookup(node.id)  # type: ignore[attr-defined]
        if kind is ast.Call:
            return self.eval_call(node)  # type: ignore[arg-type]
        if kind is ast.Attribute:
            return self.attribute(self.eval(node.value), node.attr, node)  # type: ignore[attr-defined]
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float, bool, str)) or node.value is None:
                return Const(node.value)
            if node.value is Ellipsis:
                return nki.ELLIPSIS
            return UNKNOWN
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.eval(node.value), node.attr, node)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.eval(node.left), self.eval(node.right), _expr_text(node.left),
                              _expr_text(node.right))
        if isinstance(node, ast.UnaryOp):
            return _unary(node.op, self.eval(node.operand))
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            test = self.truth(self.eval(node.test))
            if test is None:
                return join(self.eval(node.body), self.eval(node.orelse))
            return self.eval(node.body if test else node.orelse)
        if isinstance(node, ast.Call):
            return self.eval_call(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            items: list[Value] = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    inner = self.eval(elt.value)
                    if isinstance(inner, Seq) and inner.exact:
                        items.extend(inner.items)
                        continue
                    return Seq([], is_list=isinstance(node, ast.List), exact=False)
                items.append(self.eval(elt))
            return Seq(items, is_list=isinstance(node, ast.List))
        if isinstance(node, ast.Dict):
            out: dict[str, Value] = {}
            for key, val in zip(node.keys, node.values, strict=False):
                k = self.eval(key) if key is not None else UNKNOWN
                if isinstance(k, Const) and isinstance(k.value, str):
                    out[k.value] = self.eval(val)
            return DictVal(out)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Slice):
            return SliceVal(self.eval(node.lower), self.eval(node.upper),
                            self.eval(node.step) if node.step is not None else Const(1))
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value)
            self.assign(node.target, value)
            return value
        if isinstance(node, ast.JoinedStr):
            return UNKNOWN
        if isinstance(node, ast.Lambda):
            return UNKNOWN
        if isinstance(node, ast.Starred):
            return self.eval(node.value)
        return UNKNOWN

    def attribute(self, owner: Value, attr: str, node: ast.AST) -> Value:
        """``owner.attr`` for API namespaces, tensors, user objects and local modules."""
        if isinstance(owner, (ModuleRef, ApiRef)):
            return nki.resolve_qualname(f"{owner.qualname}.{attr}", self.target)
        if isinstance(owner, TensorVal):
            return nki.tensor_attribute(owner, attr, _expr_text(getattr(node, "value", node)))
        if isinstance(owner, ObjectVal):
            return owner.attrs.get(attr, UNKNOWN)
        if isinstance(owner, _LocalModule):
            env = self.module_env(owner.info)
            return env.get(attr, UNKNOWN)
        if isinstance(owner, ClassVal):
            return builtin_values.class_attribute(self, owner, attr)
        return UNKNOWN

    def binop(self, op: ast.operator, left: Value, right: Value, ltext: str, rtext: str) -> Value:
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
            result = _apply_binop(op, a, b)
        except (ArithmeticError, TypeError, ValueError):
            return UNKNOWN
        if result is None:
            return UNKNOWN
        symbol = _BINOP_SYMBOLS.get(type(op), "?")
        expr = f"{_paren(left.expr or ltext)}{symbol}{_paren(right.expr or rtext)}"
        return Const(result, expr, merge_binds(left.binds, right.binds))

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
        """Chained comparisons of known constants, tuples, dtypes and buffers."""
        left = self.eval(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=False):
            right = self.eval(comp)
            outcome = nki.compare_values(op, left, right)
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
        if isinstance(container, Seq):
            if isinstance(key, SliceVal):
                if not container.exact:
                    return UNKNOWN
                bounds = (const_int(key.start) if key.start.known and not _is_none(key.start) else None,
                          const_int(key.stop) if key.stop.known and not _is_none(key.stop) else None,
                          const_int(key.step))
                if any(v is None and k.known and not _is_none(k) for v, k in
                       zip(bounds, (key.start, key.stop, key.step), strict=False)):
                    return UNKNOWN
                return Seq(container.items[slice(*bounds)], is_list=container.is_list)
            index = const_int(key)
            if index is None or not container.exact or not -len(container.items) <= index < len(container.items):
                # Some element is read: each may be the one, so all stay live; their common value if any.
                self.use(container)
                return _join_all(list(container.items)) if container.items else UNKNOWN
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
            return Seq(out, is_list=True)
        finally:
            self.frame.env = saved

    # ------------------------------------------------------------------ calls
    def eval_call(self, node: ast.Call, as_statement: bool = False) -> Value:
        """Evaluate a call: NKI API, builtin, user function (inlined), user class, or method."""
        func_node = node.func
        if node.args and "assert" in _expr_text(func_node).lower():
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
            return nki.call_api(self, func.qualname, args, kwargs, node, as_statement)
        if isinstance(func, FunctionVal):
            return self.call_function(func, args, kwargs, node)
        if isinstance(func, ClassVal):
            return builtin_values.instantiate(self, func, args, kwargs)
        for arg in (*args, *kwargs.values()):
            self.use(arg)
        return UNKNOWN

    def eval_args(self, node: ast.Call) -> tuple[list[Value], dict[str, Value]]:
        """Positional and keyword argument values (``*seq`` expanded when known)."""
        args: list[Value] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.eval(arg.value)
                if isinstance(inner, Seq) and inner.exact:
                    args.extend(inner.items)
                else:
                    args.append(UNKNOWN)
            else:
                args.append(self.eval(arg))
        kwargs: dict[str, Value] = {}
        for kw in node.keywords:
            value = self.eval(kw.value)
            if kw.arg is None:
                if isinstance(value, DictVal):
                    kwargs.update(value.items)
            else:
                kwargs[kw.arg] = value
        return args, kwargs

    def call_function(self, fn: FunctionVal, args: list[Value], kwargs: dict[str, Value],
                      node: ast.Call) -> Value:
        """Inline a user function at this call site with the caller's values (NKI inlines calls)."""
        if fn.node in self.active or len(self.chain) >= MAX_CALL_DEPTH or isinstance(fn.node, ast.AsyncFunctionDef):
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
            result = _join_all(self.frame.returns) if self.frame.returns else Const(None)
        except _Return as ret:
            result = _join_all([*self.frame.returns, ret.value])
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
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults, strict=False))
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
            env[a.vararg.arg] = Seq(args[len(positional):])
        if a.kwarg is not None:
            known = {p.arg for p in [*positional, *a.kwonlyargs]}
            env[a.kwarg.arg] = DictVal({k: v for k, v in kwargs.items() if k not in known})
        return {k: named(v, k) for k, v in env.items()}


@dataclass(frozen=True, eq=False)
class _LocalModule(Value):
    """A local helper module imported as a whole (``from . import helpers``)."""

    info: ModuleScope


_BUILTINS = frozenset({"range", "len", "min", "max", "abs", "int", "float", "bool", "tuple", "list", "enumerate",
                       "zip", "sum", "divmod", "isinstance", "print", "round", "any", "all", "reversed", "slice",
                       "str", "sorted", "hasattr", "getattr", "type", "dict", "pow"})

_BINOP_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.Div: "/",
                  ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
                  ast.BitXor: "^"}


def _apply_binop(op: ast.operator, a: object, b: object) -> object | None:
    if isinstance(op, ast.Add):
        return a + b  # type: ignore[operator]
    if isinstance(op, ast.Sub):
        return a - b  # type: ignore[operator]
    if isinstance(op, ast.Mult):
        if isinstance(a, str) or isinstance(b, str):
            return None
        return a * b  # type: ignore[operator]
    if isinstance(op, ast.FloorDiv):
        return a // b  # type: ignore[operator]
    if isinstance(op, ast.Mod):
        if isinstance(a, str):
            return None
        return a % b  # type: ignore[operator]
    if isinstance(op, ast.Div):
        return a / b  # type: ignore[operator]
    if isinstance(op, ast.Pow):
        if isinstance(b, (int, float)) and abs(b) > 64:
            return None
        return a ** b  # type: ignore[operator]
    if isinstance(op, ast.LShift):
        if isinstance(b, int) and b > 64:
            return None
        return a << b  # type: ignore[operator]
    if isinstance(op, ast.RShift):
        return a >> b  # type: ignore[operator]
    if isinstance(op, ast.BitAnd):
        return a & b  # type: ignore[operator]
    if isinstance(op, ast.BitOr):
        return a | b  # type: ignore[operator]
    if isinstance(op, ast.BitXor):
        return a ^ b  # type: ignore[operator]
    return None


def _unary(op: ast.unaryop, value: Value) -> Value:
    if isinstance(op, ast.Not):
        if isinstance(value, Const):
            return Const(not value.value)
        return UNKNOWN
    num = const_num(value)
    if num is None:
        return UNKNOWN
    assert isinstance(value, Const)
    if isinstance(op, ast.USub):
        return Const(-num, f"-{_paren(value.expr)}" if value.expr else "", value.binds)
    if isinstance(op, ast.UAdd):
        return value
    if isinstance(op, ast.Invert) and isinstance(num, int):
        return Const(~num)
    return UNKNOWN


def _paren(text: str) -> str:
    if text and not (text.replace("_", "").replace(".", "").isalnum() or text.endswith(("]", ")"))):
        return f"({text})"
    return text


def _expr_text(node: ast.AST) -> str:
    """Short source text of a simple expression, for value derivations."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.Attribute):
        inner = _expr_text(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Subscript):
        inner = _expr_text(node.value)
        index = _expr_text(node.slice)
        return f"{inner}[{index}]" if inner and index else ""
    return ""


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


def _join_all(values: list[Value]) -> Value:
    if not values:
        return UNKNOWN
    result = values[0]
    for value in values[1:]:
        result = join(result, value)
    return result


def _unpack(value: Value, count: int) -> list[Value]:
    if isinstance(value, Seq) and value.exact and len(value.items) == count:
        return list(value.items)
    return [UNKNOWN] * count


def _load_copy(target: ast.expr) -> ast.expr:
    """The target of an augmented assignment read as an expression."""
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
    return target


def _strip_tuple_call(node: ast.expr) -> ast.expr:
    """``tuple(x.shape)`` -> ``x.shape`` (a common assert spelling)."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list")
            and len(node.args) == 1):
        return node.args[0]
    return node


def _target_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _assigned_names(body: list[ast.stmt]) -> set[str]:
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
                    names |= _target_names(target)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            names |= _target_names(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    names |= _target_names(item.optional_vars)
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


