"""NKI513: ``@nki.jit`` / ``nki.compiler`` configuration the NKI 0.7 docs do not allow (unknown or wrongly typed
options, a config object in the wrong keyword, ``prefetch_auto`` with a manual prefetch ring, an LNC degree
other than 1 or 2)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.jit_config import (
    CONFIG_CLASSES,
    JIT_CONFIG_KEYWORDS,
    LNC_DEGREES,
    LNC_VARIABLE,
    PREFETCH_RING_VARIABLE,
)
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import NOT_LITERAL, V07, bracket_lnc_kernels, literal_value

_COMPILER = "nki.compiler."
_HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\nfrom nki.compiler import CompileConfig\n\n\n"
_BODY = (
    "def kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x)\n    return out\n"
)


def _type_problem(ctx: LintContext, kind: str, value: ast.expr) -> str | None:
    """Why a literal does not have the documented type (``bool`` or an ``nki.compiler`` enum); None if it may."""
    literal = literal_value(value)
    if kind == "bool":
        if literal is NOT_LITERAL or isinstance(literal, bool):
            return None
        return f"takes a bool, not {literal!r}"
    if literal is not NOT_LITERAL:  # an enum option given a plain constant
        return f"takes an nki.compiler.{kind} member, not {literal!r}"
    api = ctx.aliases.canonical(value)
    if api is not None and api.startswith(_COMPILER) and not api.startswith(f"{_COMPILER}{kind}"):
        return f"takes an nki.compiler.{kind} member, not {api}"
    return None


def _environment_writes(ctx: LintContext) -> dict[str, list[tuple[ast.AST, object]]]:
    """``os.environ[NAME] = value`` and ``os.environ.setdefault(NAME, value)`` in the module: name -> (node, literal)."""
    out: dict[str, list[tuple[ast.AST, object]]] | None = ctx.memo.get("environment_writes")
    if out is not None:
        return out
    out = ctx.memo["environment_writes"] = {}
    if "environ" not in ctx.source:  # a file that never names it writes none (most files: skip the node walk)
        return out
    for node in ctx.nodes:
        key = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Subscript) and ctx.aliases.resolve(target.value) == "os.environ":
                key, value = target.slice, node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setdefault"
            and ctx.aliases.resolve(node.func.value) == "os.environ"
            and len(node.args) == 2
        ):
            key, value = node.args
        if key is not None and value is not None:
            name = literal_value(key)
            if isinstance(name, str):
                out.setdefault(name, []).append((node, literal_value(value)))
    return out


def _config_calls(ctx: LintContext) -> Iterator[Finding]:
    ring = _environment_writes(ctx).get(PREFETCH_RING_VARIABLE)
    calls = sorted(
        ((call, cls) for cls in CONFIG_CLASSES for call in ctx.calls_to(_COMPILER + cls)),
        key=lambda item: (item[0].lineno, item[0].col_offset),
    )
    for call, cls in calls:
        options = CONFIG_CLASSES[cls]
        for kw in call.keywords:
            if kw.arg is None:
                continue
            if kw.arg not in options:
                # Newer pages may list more options, and the 0.7 pages do not say the constructor refuses
                # unknown names (*inferred*): a warning, not an error.
                yield ctx.report(
                    kw,
                    f"`{kw.arg}` is not an NKI 0.7 {cls} option (documented: {', '.join(options)}); "
                    "the compiler may reject it or ignore it",
                    severity=Severity.WARNING,
                )
                continue
            problem = _type_problem(ctx, options[kw.arg], kw.value)
            if problem:
                yield ctx.report(kw.value, f"{cls}.{kw.arg} {problem}")
            if (
                cls == "CompileConfig"
                and kw.arg == "prefetch_auto"
                and literal_value(kw.value) is True
                and ring
            ):
                yield ctx.report(
                    kw,
                    f"CompileConfig(prefetch_auto=True) and {PREFETCH_RING_VARIABLE} (set in this file) are "
                    "mutually exclusive: keep the automatic prefetch ring or the manual one",
                )


def _jit_keywords(ctx: LintContext) -> Iterator[Finding]:
    for call in ctx.calls_to("nki.jit"):
        for kw in call.keywords:
            wanted = JIT_CONFIG_KEYWORDS.get(kw.arg or "")
            if wanted is None or (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                continue
            given = None
            if isinstance(kw.value, ast.Call):
                api = ctx.aliases.canonical(kw.value.func) or ""
                given = api[len(_COMPILER) :] if api.startswith(_COMPILER) else None
            elif isinstance(kw.value, (ast.Dict, ast.Constant, ast.List, ast.Tuple, ast.Set)):
                given = (
                    type(literal_value(kw.value)).__name__
                    if isinstance(kw.value, ast.Constant)
                    else "a literal"
                )
            if given is not None and given != wanted:
                yield ctx.report(
                    kw.value,
                    f"nki.jit({kw.arg}=...) takes an nki.compiler.{wanted}, not {given}",
                )


def _lnc_degrees(ctx: LintContext, kernels: set[str]) -> Iterator[Finding]:
    allowed = " or ".join(str(d) for d in LNC_DEGREES)
    for call in ctx.calls_headed_by(kernels):
        sub = call.func
        if not (
            isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id in kernels
        ):
            continue
        degree = literal_value(sub.slice)
        if isinstance(sub.slice, ast.Tuple) or (
            degree is not NOT_LITERAL and (isinstance(degree, bool) or degree not in LNC_DEGREES)
        ):
            yield ctx.report(sub, f"{ctx.text(sub)}: the LNC degree of a launch is {allowed}")
    for node, value in _environment_writes(ctx).get(LNC_VARIABLE, ()):
        if value is not NOT_LITERAL and str(value).strip() not in {str(d) for d in LNC_DEGREES}:
            yield ctx.report(node, f"{LNC_VARIABLE}={value!r}: set it to {allowed} (nki.jit)")


@rule(
    code="NKI513",
    name="jit-config",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="`@nki.jit` / `nki.compiler` configuration the NKI 0.7 docs do not allow: an unknown or wrongly "
    "typed `CompileConfig`/`SpecializationConfig` option, a config in the wrong `nki.jit` keyword, "
    "`prefetch_auto=True` with `NKI_PREFETCH_RING_SIZE`, or an LNC degree other than 1 or 2.",
    bad=_HEADER + '@nki.jit(compile_config=CompileConfig(dead_code_elim="no"))\n' + _BODY,
    good=_HEADER + "@nki.jit(compile_config=CompileConfig(dead_code_elim=False))\n" + _BODY,
    sources="nki-0.7.md §2.5 and §2.8 ([JIT] v2.33.1 `nki.jit`: compile_config/specialization_config, "
    "NEURON_LOGICAL_NC_CONFIG 1 or 2; [CFG] `nki.compiler`: the CompileConfig/SpecializationConfig attributes "
    "and types, prefetch_auto mutually exclusive with a manual NKI_PREFETCH_RING_SIZE)",
    scope_note="NKI 0.7 and later (`nki.compiler` is new in 0.7). Checked on literals only: option values "
    "that are constants (a bool option given `1` or a string; `address_rotation` given a constant instead of "
    "an `AddressRotation` member), config objects constructed in the `nki.jit` call, `kernel[k](...)` with a "
    "literal `k`, and `os.environ[...] = ...` / `os.environ.setdefault(...)` in the same file. An option the "
    "0.7 pages do not list is a warning (newer releases document more options, and whether the 0.7 constructor "
    "refuses unknown names is not stated).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """NKI 0.7 configures a kernel with `@nki.jit(compile_config=nki.compiler.CompileConfig(...),
    specialization_config=nki.compiler.SpecializationConfig(...))`. Every `CompileConfig` option is a bool
    except `address_rotation` (an `nki.compiler.AddressRotation` member); `SpecializationConfig` has the one
    bool `allow_nested_config_override`. `prefetch_auto=True` builds the DMA prefetch ring automatically and
    cannot be combined with a manual `NKI_PREFETCH_RING_SIZE`. The LNC degree (`NEURON_LOGICAL_NC_CONFIG`, or
    the deprecated `kernel[k]` bracket) is 1 or 2."""
    kernels = bracket_lnc_kernels(ctx)
    yield from _config_calls(ctx)
    yield from _jit_keywords(ctx)
    yield from _lnc_degrees(ctx, kernels)
