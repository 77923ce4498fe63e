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

from nki_studio.core.yielding import checkpoint
from nki_studio.model import nki_semantics as nki
from nki_studio.model.arithmetic import binop
from nki_studio.model.evaluation import (
    STEP_BUDGET,
    ExpressionEvaluator,
    _Break,
    _BudgetExceeded,
    _Continue,
    _Return,
)
from nki_studio.model.evaluator import Frame
from nki_studio.model.syntax import assigned_names, expr_text, load_copy, strip_tuple_call, target_names
from nki_studio.model.tensors import LoopFrame
from nki_studio.model.values import (
    UNKNOWN,
    ClassVal,
    Const,
    DictVal,
    FunctionVal,
    ObjectVal,
    Seq,
    TensorVal,
    Value,
    const_int,
    join,
    join_all,
    named,
)

log = logging.getLogger("nki_studio.model.interpreter")
_DEBUG = bool(os.environ.get("NKI_STUDIO_DEBUG_INTERPRETER"))

UNROLL_MAX = 4  # loops with at most this many known iterations are unrolled exactly


class Interpreter(ExpressionEvaluator):
    """Interprets one root function (a kernel, or a helper analysed on its own) and records facts."""

    # ------------------------------------------------------------------ entry points
    def run_function(self, fn: FunctionVal, args: dict[str, Value]) -> None:
        """Interpret ``fn`` as a root with the given parameter values (others unknown)."""
        checkpoint()  # a user request may want the CPU (core.yielding)
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
            self.havoc_names(assigned_names([stmt]))
        except Exception:  # odd code degrades to unknown, never crashes the linter
            if _DEBUG:
                log.exception("interpreter: statement at line %s failed", getattr(stmt, "lineno", "?"))
            self.havoc_names(assigned_names([stmt]))

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
                if not value.known:
                    self.note_dim_origin(target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            current = self.eval(load_copy(stmt.target))
            value = binop(
                stmt.op, current, self.eval(stmt.value), expr_text(stmt.target), expr_text(stmt.value)
            )
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
            self.havoc_names(assigned_names([stmt]))

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
                doubt = self.uncertain_write(container.created)
                if (
                    doubt is None
                    and index is not None
                    and -len(container.items) <= index < len(container.items)
                ):
                    container.items[index] = value
                else:  # any element may have been written
                    container.items[:] = [
                        join(item, value) if doubt != "loop" else UNKNOWN for item in container.items
                    ]
            elif isinstance(container, DictVal):
                key = self.eval(target.slice)
                doubt = self.uncertain_write(container.created)
                if isinstance(key, Const) and isinstance(key.value, str) and doubt != "loop":
                    old = container.items.get(key.value, UNKNOWN)
                    container.items[key.value] = value if doubt is None else join(old, value)
                else:
                    container.items.clear()
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value)
            if isinstance(obj, ObjectVal):
                doubt = self.uncertain_write(obj.created)
                old = obj.attrs.get(target.attr, UNKNOWN)
                obj.attrs[target.attr] = (
                    value if doubt is None else join(old, value) if doubt == "branch" else UNKNOWN
                )
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
        before = self.frame.env
        envs: list[dict[str, Value]] = []
        branch_id = self.next_seq()
        for index, body in enumerate((stmt.body, stmt.orelse)):
            self.frame.env = dict(before)
            self.branches.append((branch_id, index))
            try:
                self.exec_block(body)
                envs.append(self.frame.env)
            except _Return as ret:
                self.frame.returns.append(ret.value)
            except (_Break, _Continue):
                envs.append(self.frame.env)  # loop exit/continue inside an unknown branch: keep going
            finally:
                self.branches.pop()
        if not envs:
            self.frame.env = before
            raise _Return(join_all(self.frame.returns))
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
                if not self._unrolled_iteration(stmt.body):
                    return
            self.exec_block(stmt.orelse)
            return
        trips = len(items) if items is not None else self.trip_count(iterable)
        first = items[0] if items else UNKNOWN
        self.run_summarised_loop(stmt, stmt.body + stmt.orelse, trips, first)
        if isinstance(iterable, Seq):
            self.use(iterable)  # every element is used by some iteration

    def run_summarised_loop(
        self, stmt: ast.stmt, body: list[ast.stmt], trips: int | None, first: Value
    ) -> None:
        """Run ``body`` once as a representative iteration of a loop that is not unrolled."""
        assigned = self.scopes.assigned.get(id(stmt))
        if assigned is None:
            assigned = assigned_names(body)
            if isinstance(stmt, ast.For):
                assigned |= target_names(stmt.target)
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
            if not self._unrolled_iteration(stmt.body):
                return
        self.run_summarised_loop(stmt, stmt.body, None, UNKNOWN)

    def _unrolled_iteration(self, body: list[ast.stmt]) -> bool:
        """Run one iteration of an unrolled loop; False when it breaks out of the loop."""
        try:
            self.exec_block(body)
        except _Break:
            return False
        except _Continue:
            pass
        return True

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

    def learn_from_test(self, test: ast.expr) -> None:
        """Refine values from an asserted condition: ``x.shape == (a, b)``, ``x.dtype == ...``, ``n == 128``."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for part in test.values:
                self.learn_from_test(part)
            return
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return
        if not isinstance(test.ops[0], ast.Eq):
            return
        left, right = test.left, test.comparators[0]
        for subject, other in ((left, right), (right, left)):
            if self._refine(subject, other):
                return

    def _refine(self, subject: ast.expr, other: ast.expr) -> bool:
        assert self.frame is not None
        subject = strip_tuple_call(subject)
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
        dim_ref = _shape_dim_ref(subject)
        if dim_ref is not None:
            return self._refine_dim(dim_ref[0], dim_ref[1], None, other)
        if isinstance(subject, ast.Name) and not self.lookup(subject.id).known:
            value = self.eval(other)
            if isinstance(value, Const):
                self.frame.env[subject.id] = named(value, subject.id)
                origin = self.frame.dim_origin.get(subject.id)
                if origin is not None:
                    self._refine_dim(origin[0], origin[1], origin[2], other)
                return True
        return False

    def _refine_dim(self, tensor_name: str, index: int, rank: int | None, other: ast.expr) -> bool:
        """``x.shape[i] == v`` (directly or through ``P, F = x.shape``): set dim ``i`` of ``x`` when the rank
        is known (from the unpacking or from a partly known shape)."""
        assert self.frame is not None
        owner = self.lookup(tensor_name)
        value = self.eval(other)
        if not isinstance(owner, TensorVal) or not isinstance(value, Const):
            return False
        if rank is None:  # ``x.shape[0] == 64`` after ``M, N = x.shape`` knows the rank from the unpacking
            rank = next((r for t, _, r in self.frame.dim_origin.values() if t == tensor_name and r), None)
        dims = (
            list(owner.shape) if owner.shape is not None else [UNKNOWN] * rank if rank is not None else None
        )
        if dims is None or not 0 <= index < len(dims) or dims[index].known:
            return False
        dims[index] = named(value, f"{tensor_name}.shape[{index}]")
        self.frame.env[tensor_name] = nki.with_shape(owner, tuple(dims))
        return True

    def note_dim_origin(self, target: ast.expr, source: ast.expr) -> None:
        """Remember ``P, F = x.shape`` / ``N = x.shape[0]`` when ``x``'s shape is unknown."""
        assert self.frame is not None
        if (
            isinstance(target, ast.Tuple)
            and isinstance(source, ast.Attribute)
            and source.attr == "shape"
            and isinstance(source.value, ast.Name)
        ):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    self.frame.dim_origin[elt.id] = (source.value.id, i, len(target.elts))
        elif isinstance(target, ast.Name):
            ref = _shape_dim_ref(source)
            if ref is not None:
                self.frame.dim_origin[target.id] = (ref[0], ref[1], None)


def _shape_dim_ref(node: ast.expr) -> tuple[str, int] | None:
    """``x.shape[i]`` with a literal ``i`` -> (``x``, i)."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.value.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, int)
    ):
        return node.value.value.id, node.slice.value
    return None


def _unpack(value: Value, count: int) -> list[Value]:
    if isinstance(value, Seq) and value.exact and len(value.items) == count:
        return list(value.items)
    return [UNKNOWN] * count
