"""Which local names of a function *definitely* hold an on-chip tensor or a runtime register.

A cheap, flow-insensitive pass for the Python-subset rules ("no Python ``if`` on a tensor", "no NumPy on a
tensor"): a name counts as a tensor only when every assignment to it in the function produces one (an
``nl.ndarray``/``nl.zeros``/... allocation, an ``nl`` math result, a view of a known tensor). Parameters are
never assumed to be tensors -- a kernel argument may be a Python value -- so unknown stays unknown and the
rules cannot raise false alarms on them. Registers are ``nisa.register_alloc()``/``nisa.scalar_load()``
results, ``nl.dynamic_range`` loop variables, the loop variable of a ``nl.fori_loop``/``nl.while_loop`` body (when
the caller names it) and arithmetic or comparisons of registers (traced, nki-0.7.md §2.4). Grids are the
``nl.tiles``/``nl.blocks``/``nl.alloc_tiles``/``nl.alloc_blocks`` results, their tile selections and
``nl.empty_like`` of a grid; a grid's ``.data`` is a tensor (nki-0.7.md §2.6).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from operator import attrgetter

from nki_studio.model.imports import ImportAliases
from nki_studio.model.nki_api import (
    ISA_REGISTER_RESULTS,
    LANGUAGE_GRID_RESULTS,
    LANGUAGE_TENSOR_RESULTS,
    TENSOR_VIEW_METHODS,
)


class Kind(str, Enum):
    """What a name holds at run time."""

    TENSOR = "tensor"
    REGISTER = "register"  # VirtualRegister or NkiScalar: a value computed on the device
    GRID = "grid"  # NkiTileGrid / NkiBlockGrid (0.7): not an NkiTensor; ``.data`` is one


# Calls and view methods by the result their stub declares (``nki_api``, generated from the stubs). The stub of
# ``nl.empty_like`` returns ``Any`` (of a grid it is a grid, nki-0.7.md §2.6): of a tensor it is a tensor.
_NL_TENSOR_RESULTS = LANGUAGE_TENSOR_RESULTS | {"empty_like"}
_REGISTER_RESULTS = frozenset(f"nki.isa.{name}" for name in ISA_REGISTER_RESULTS)
_GRID_RESULTS = frozenset(f"nki.language.{name}" for name in LANGUAGE_GRID_RESULTS)
# Operators that keep a register a register (NkiScalar arithmetic and comparisons are traced; nki-0.7.md §2.4).
_REGISTER_UNARY = (ast.USub, ast.UAdd, ast.Invert)
_REGISTER_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Statements/expressions that bind names (the only nodes :func:`classify` looks at).
_BINDING_STATEMENTS = (
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.For,
    ast.AsyncFor,
    ast.With,
    ast.AsyncWith,
)
_BINDING_NODES = frozenset({*_BINDING_STATEMENTS, ast.NamedExpr})
_POSITION = attrgetter("lineno", "col_offset")


@dataclass
class FunctionKinds:
    """Definite kinds of the names of one function."""

    kinds: dict[str, Kind] = field(default_factory=dict)
    # Whether any name was ever a register: arithmetic and comparisons need looking at only then (a fast path
    # for the common function without registers).
    has_registers: bool = False

    def of(self, node: ast.expr) -> Kind | None:
        """Kind of an expression: a known name, a subscript/view of a known tensor, a tile selection of a grid
        (a grid) or its ``.data`` (a tensor), arithmetic or a comparison involving a register (a register)."""
        if isinstance(node, ast.Name):
            return self.kinds.get(node.id)
        if isinstance(node, ast.Subscript):
            inner = self.of(node.value)
            return inner if inner in (Kind.TENSOR, Kind.GRID) else None
        if isinstance(node, ast.Attribute):
            return Kind.TENSOR if node.attr == "data" and self.of(node.value) is Kind.GRID else None
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            if not self.has_registers:
                return None
            if isinstance(node, ast.BinOp):
                return self._register_of((node.left, node.right))
            if isinstance(node, ast.UnaryOp):
                return self.of(node.operand) if isinstance(node.op, _REGISTER_UNARY) else None
            if not all(isinstance(op, _REGISTER_COMPARISONS) for op in node.ops):
                return None  # `reg is None`, `x in regs`: Python identity/containment, no register value
            return self._register_of((node.left, *node.comparators))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in TENSOR_VIEW_METHODS
            and self.of(node.func.value) is Kind.TENSOR
        ):
            return Kind.TENSOR
        return None

    def _register_of(self, operands: tuple[ast.expr, ...]) -> Kind | None:
        """REGISTER when an operand is one and none is a tensor or grid (then the expression is something else)."""
        register = False
        for operand in operands:
            kind = self.of(operand)
            if kind is Kind.REGISTER:
                register = True
            elif kind is not None:
                return None
        return Kind.REGISTER if register else None


# The expressions :meth:`FunctionKinds.of` can find a tensor in, whatever the names' kinds: a name, a subscript or
# view of one, a grid's ``.data``, ``-``/``+``/``~`` applied to one. Arithmetic and comparisons give a register or
# nothing; ``not``, constants and everything else nothing.
_MAY_BE_TENSOR = frozenset({ast.Name, ast.Subscript, ast.Attribute, ast.Call})


def may_be_tensor(node: ast.expr) -> bool:
    """False when :meth:`FunctionKinds.of` cannot give :attr:`Kind.TENSOR` for ``node`` in any function, so a
    rule looking for tensors needs no classification of the names to skip it."""
    if type(node) is ast.UnaryOp:
        return isinstance(node.op, _REGISTER_UNARY)
    return type(node) in _MAY_BE_TENSOR


def binding_nodes(by_type: Mapping[type, Sequence[ast.AST]]) -> list[ast.AST] | None:
    """The nodes :func:`classify` reads (assignments, loops, ``with``) in source order, from a function's own
    nodes grouped by type (``model.kernels.ModuleInfo.own_by_type``): a few short lists instead of a pass over
    every node. A function's own statements never nest inside an expression, so their position is their
    traversal order; a ``:=`` can (an ``if``-expression's test comes before its body in the traversal), so with
    one the caller passes every own node instead (None)."""
    if ast.NamedExpr in by_type:
        return None
    found = [node for kind in _BINDING_STATEMENTS for node in by_type.get(kind, ())]
    found.sort(key=_POSITION)
    return found


def classify(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    aliases: ImportAliases,
    nodes: list[ast.AST] | None = None,
    register_params: frozenset[str] = frozenset(),
) -> FunctionKinds:
    """Definite tensor/register/grid names of ``func`` (nested functions are separate scopes and skipped).

    ``nodes``: the function's own nodes in source order when the caller already has them (or only those it
    reads, :func:`binding_nodes`). ``register_params``:
    parameters known to hold a register (the loop variable of a ``fori_loop``/``while_loop`` body); every other
    parameter is unknown."""
    result = FunctionKinds()
    candidates: dict[str, Kind | None] = {}
    for name in register_params:
        candidates[name] = result.kinds[name] = Kind.REGISTER
        result.has_registers = True

    touched: list[str] = []

    def record(name: str, kind: Kind | None) -> None:
        if name in candidates and candidates[name] is not kind:
            candidates[name] = None  # assigned different kinds: not definite
        else:
            candidates.setdefault(name, kind)
        touched.append(name)

    for node in nodes if nodes is not None else _own_nodes(func):
        if type(node) not in _BINDING_NODES:
            continue
        if isinstance(node, ast.Assign):
            assigned = value_kind(node.value, aliases, result)  # one value for all targets
            for target in node.targets:
                if isinstance(target, ast.Name):
                    record(target.id, assigned)
                else:
                    for name in _bound_names(target):
                        record(name, None)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            value = node.value if isinstance(node, ast.AnnAssign) else None
            record(node.target.id, value_kind(value, aliases, result) if value is not None else None)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            is_dyn = (
                isinstance(node.iter, ast.Call)
                and aliases.canonical(node.iter.func) == "nki.language.dynamic_range"
            )
            for name in _bound_names(node.target):
                record(name, Kind.REGISTER if is_dyn else None)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    for name in _bound_names(item.optional_vars):
                        record(name, None)
        elif isinstance(node, ast.NamedExpr):
            record(node.target.id, None)
        else:
            continue
        # Refresh the definite set as we go so views of earlier tensors classify (source order suffices); only
        # the names this statement bound can have changed.
        for name in touched:
            kind = candidates[name]
            if kind is None:
                result.kinds.pop(name, None)
            else:
                result.kinds[name] = kind
                result.has_registers = result.has_registers or kind is Kind.REGISTER
        touched.clear()
    for arg in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]:
        if arg.arg not in register_params:
            result.kinds.pop(arg.arg, None)
    return result


def value_kind(value: ast.expr, aliases: ImportAliases, known: FunctionKinds) -> Kind | None:
    """Kind of an expression in a function whose names so far are ``known``: what ``known.of`` gives, plus
    calls (an allocation, a ``nisa.scalar_load``...) and arithmetic or comparisons involving such a call
    (``nisa.scalar_load(t) > 0`` is a register, as the if_else page's example writes it)."""
    if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Compare)) and _has_register_call(value, aliases):
        return _register_expression(value, aliases, known)
    if isinstance(value, ast.Call):
        name = aliases.canonical(value.func)
        if name is not None:
            if name in _REGISTER_RESULTS:
                return Kind.REGISTER
            if name in _GRID_RESULTS:
                return Kind.GRID
            if name == "nki.language.empty_like" and value.args and known.of(value.args[0]) is Kind.GRID:
                return Kind.GRID  # a grid keeps its type (nki-0.7.md §2.6 [EL])
            if name.startswith("nki.language.") and name.rsplit(".", 1)[1] in _NL_TENSOR_RESULTS:
                return Kind.TENSOR
            return None
    return known.of(value)


def _has_register_call(node: ast.expr, aliases: ImportAliases) -> bool:
    return any(
        isinstance(n, ast.Call) and aliases.canonical(n.func) in _REGISTER_RESULTS for n in ast.walk(node)
    )


def _register_expression(node: ast.expr, aliases: ImportAliases, known: FunctionKinds) -> Kind | None:
    """REGISTER for arithmetic/comparisons whose operands are registers (calls included) and no other kind,
    following ``FunctionKinds.of``'s rules."""
    if isinstance(node, ast.BinOp):
        operands: tuple[ast.expr, ...] = (node.left, node.right)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, _REGISTER_UNARY):
            return None
        operands = (node.operand,)
    elif isinstance(node, ast.Compare):
        if not all(isinstance(op, _REGISTER_COMPARISONS) for op in node.ops):
            return None
        operands = (node.left, *node.comparators)
    else:
        return value_kind(node, aliases, known)
    kinds = [value_kind(o, aliases, known) for o in operands]
    if Kind.REGISTER in kinds and all(k in (None, Kind.REGISTER) for k in kinds):
        return Kind.REGISTER
    return None


def _bound_names(target: ast.expr) -> list[str]:
    if type(target) is ast.Name:  # the common case (``for i in ...``), without a walk
        return [target.id]
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _own_nodes(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """Nodes of ``func`` in source order, not descending into nested functions, classes or lambdas."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(func.body))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out
