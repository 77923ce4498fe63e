"""Entry points of the compile-time value analysis: run the interpreter over a module's kernel code.

``interpret(discovery, target)`` is what lint rules use (through ``LintContext.values``);
``describe_allocations`` feeds the language server's hover and ``infer_kernel_inputs`` the "Simulate kernel"
spec inference.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nki_studio.core.findings import Span
from nki_studio.model.interpreter import Interpreter
from nki_studio.model.kernels import FunctionInfo, KernelDiscovery, discover
from nki_studio.model.module_info import ScopeCache
from nki_studio.model.targets import Target
from nki_studio.model.tensors import KernelFacts
from nki_studio.model.values import UNKNOWN, Const, FunctionVal, TensorVal, Value, const_int, make_dtype

log = logging.getLogger("nki_studio.model.analysis")

MAX_ROOTS = 200  # functions interpreted per module (kernels first)
MODULE_STEP_BUDGET = 100_000  # evaluated nodes per module; later roots are skipped once it is spent


@dataclass
class ModuleFacts:
    """Facts of every analysed root (kernels, then helpers of this module not reached by inlining)."""

    path: str
    target: Target
    roots: list[KernelFacts]

    def kernels(self) -> list[KernelFacts]:
        """Facts of the ``@nki.jit`` kernels only."""
        return [r for r in self.roots if r.is_kernel]


def _is_tensor_param(arg: ast.arg, has_default: bool) -> bool:
    """Kernel parameters without a default are tensors unless annotated as a plain Python type."""
    if has_default:
        return False
    ann = arg.annotation
    if isinstance(ann, ast.Name) and ann.id in ("int", "float", "bool", "str", "tuple", "list", "dict"):
        return False
    return not (
        isinstance(ann, ast.Constant) and isinstance(ann.value, str) and ann.value in ("int", "float")
    )


# What a caller knows of a kernel's arguments (a simulate spec): a tensor's (shape, dtype name), or a scalar.
ArgFact = tuple[tuple[int, ...], str] | int | float | bool
KernelArgs = Mapping[str, Mapping[str, ArgFact]]  # kernel name -> parameter -> fact


def _known_value(fact: ArgFact) -> Value:
    if isinstance(fact, tuple):
        shape, dtype = fact
        return TensorVal(tuple(Const(d) for d in shape), make_dtype(dtype), "hbm")
    return Const(fact)


def _root_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, known: Mapping[str, ArgFact]
) -> dict[str, Value]:
    params = _unknown_params(node)
    params.update({name: _known_value(fact) for name, fact in known.items() if name in params})
    return params


def _unknown_params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Value]:
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    n_plain = len(positional) - len(a.defaults)
    params: dict[str, Value] = {}
    for i, arg in enumerate(positional):
        params[arg.arg] = TensorVal(None, None, "hbm") if _is_tensor_param(arg, i >= n_plain) else UNKNOWN
    for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=False):
        params[arg.arg] = (
            TensorVal(None, None, "hbm") if _is_tensor_param(arg, default is not None) else UNKNOWN
        )
    if a.vararg is not None:
        params[a.vararg.arg] = UNKNOWN
    if a.kwarg is not None:
        params[a.kwarg.arg] = UNKNOWN
    return params


def interpret(
    discovery: KernelDiscovery,
    target: Target,
    kernel_args: KernelArgs | None = None,
    *,
    line: int | None = None,
) -> ModuleFacts:
    """Interpret every kernel of the module, then this module's helpers that no kernel inlined. A kernel named
    in ``kernel_args`` starts from those argument values (its simulate spec) instead of unknown ones. ``line``:
    only the kernel whose definition spans that line, when it is in one (a hover needs no other kernel's facts)."""
    scopes = ScopeCache(discovery.resolver)
    module_envs: dict[str, dict[str, Value]] = {}
    inlined: set[ast.AST] = set()
    roots: list[KernelFacts] = []
    own = discovery.module
    candidates: list[FunctionInfo] = [k for k in discovery.kernels if k.module is own]
    candidates += [
        f
        for f in discovery.in_this_module()
        if not f.is_kernel and f.parent is None and "." not in f.qualname
    ]
    if line is not None:
        around = [k for k in candidates if k.is_kernel and k.node.lineno <= line <= (k.node.end_lineno or 0)]
        candidates = around or candidates  # in a helper: its values come from the kernels that inline it
    steps = 0
    for func in candidates[:MAX_ROOTS]:
        if func.node in inlined:
            continue
        if steps > MODULE_STEP_BUDGET:
            break
        scope = scopes.scope(func.module)
        facts = KernelFacts(
            name=func.qualname,
            path=func.module.path,
            span=_name_span(func, scope.lines),
            is_kernel=func.is_kernel,
            legacy=func.kernel_legacy or scope.legacy,
        )
        interp = Interpreter(target, facts, scopes, module_envs)
        try:
            known = (kernel_args or {}).get(func.qualname, {}) if func.is_kernel else {}
            interp.run_function(FunctionVal(func.node, scope), _root_params(func.node, known))
        except Exception:  # an interpreter bug must cost one kernel's facts, not every value rule
            log.exception("value interpreter failed on %s in %s", func.qualname, func.module.path)
            facts = KernelFacts(
                name=facts.name,
                path=facts.path,
                span=facts.span,
                is_kernel=facts.is_kernel,
                legacy=facts.legacy,
                complete=False,
            )
        inlined |= interp.inlined
        steps += interp.steps
        roots.append(facts)
    return ModuleFacts(own.path, target, roots)


def _name_span(func: FunctionInfo, lines: Sequence[str]) -> Span:
    node = func.node
    line = node.lineno
    text = lines[line - 1] if line - 1 < len(lines) else ""
    col = text.find(node.name) + 1 if node.name in text else node.col_offset + 1
    return Span(line, col, line, col + len(node.name))


def interpret_source(
    text: str, path: str, target: Target, kernel_args: KernelArgs | None = None, *, line: int | None = None
) -> ModuleFacts | None:
    """Parse, discover and interpret a module's text (``kernel_args``, ``line``: see :func:`interpret`); None
    when it does not parse."""
    try:
        tree = ast.parse(text, filename=path or "<unknown>")
        return interpret(discover(text, path, tree), target, kernel_args, line=line)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@dataclass(frozen=True)
class AllocationInfo:
    """One allocation as hover shows it."""

    span: Span
    function: str
    api: str
    shape: tuple[int | None, ...] | None
    dtype: str | None
    buffer: str | None
    bytes_per_partition: int | None
    instances: int  # how many are live at once because they outlive iterations of a loop (lower bound)


def describe_allocations(
    text: str, path: str, target: Target, kernel_args: KernelArgs | None = None, *, line: int | None = None
) -> list[AllocationInfo]:
    """Shape, dtype, buffer and bytes per partition of each allocation site in this file, by position
    (``line``: only those of the kernel around that line, when it is in one).

    A site reached several times (unrolled loops, helpers called twice) is listed once per distinct value.
    ``kernel_args`` (from simulate specs) gives kernels their argument shapes and dtypes.
    """
    facts = interpret_source(text, path, target, kernel_args, line=line)
    if facts is None:
        return []
    out: dict[tuple[Span, tuple[int | None, ...] | None, str | None, str | None], AllocationInfo] = {}
    for root in facts.roots:
        for alloc in root.allocations:
            if alloc.path != facts.path:
                continue
            shape = tuple(const_int(d) for d in alloc.shape) if alloc.shape is not None else None
            dtype = alloc.dtype.name if alloc.dtype is not None else None
            key = (alloc.span, shape, dtype, alloc.buffer)
            if key not in out:
                out[key] = AllocationInfo(
                    alloc.span,
                    alloc.function,
                    alloc.api,
                    shape,
                    dtype,
                    alloc.buffer,
                    alloc.bytes_per_partition() if alloc.on_chip else None,
                    alloc.repeat,
                )
    return sorted(out.values(), key=lambda a: (a.span.line, a.span.column))


def infer_kernel_inputs(
    text: str, path: str, kernel_name: str, target: Target | None = None
) -> dict[str, tuple[tuple[int, ...], str | None] | None]:
    """Shapes (and dtypes when asserted) of a kernel's tensor parameters, learned from asserts and unpacking.

    Parameters whose shape the kernel does not pin down map to None. Raises KeyError for an unknown kernel.
    """
    facts = interpret_source(text, path, target or Target())
    if facts is None:
        raise KeyError(kernel_name)
    for root in facts.kernels():
        if root.name != kernel_name:
            continue
        result: dict[str, tuple[tuple[int, ...], str | None] | None] = {}
        for name, value in root.params.items():
            if not isinstance(value, TensorVal):
                continue
            maybe = [const_int(d) for d in value.shape] if value.shape is not None else [None]
            dims = tuple(d for d in maybe if d is not None)
            if len(dims) < len(maybe):
                result[name] = None
            else:
                result[name] = (dims, value.dtype.name if value.dtype is not None else None)
        return result
    raise KeyError(kernel_name)


__all__ = [
    "AllocationInfo",
    "Const",
    "ModuleFacts",
    "describe_allocations",
    "infer_kernel_inputs",
    "interpret",
    "interpret_source",
]
