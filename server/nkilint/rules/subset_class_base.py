"""NKI104: classes used by kernel code must derive from ``NKIObject`` (or ``Enum``) and nothing else."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity, Span
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, V06

_ALLOWED = frozenset({"nki.language.NKIObject", "enum.Enum", "enum.IntEnum", "enum.StrEnum"})


@rule(
    code="NKI104",
    name="class-base",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V02,
    max_version=V06,
    summary="A class used by kernel code does not derive from `nl.NKIObject` (or `Enum`) alone.",
    bad="import nki\nimport nki.language as nl\n\n\nclass Config:\n    def __init__(self, width):\n"
    "        self.width = width\n\n\n@nki.jit\ndef kernel(x):\n    cfg = Config(64)\n"
    "    out = nl.ndarray((128, cfg.width), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\nclass Config(nl.NKIObject):\n"
    "    def __init__(self, width):\n        self.width = width\n\n\n@nki.jit\ndef kernel(x):\n"
    "    cfg = Config(64)\n    out = nl.ndarray((128, cfg.width), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    sources="python-subset.md §5 (Class Support: S; inheritance before 0.7: S, 2.33 release notes)",
    scope_note="Also reports subclassing a user class (class inheritance), unsupported before NKI 0.7.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The NKI language guide: a class used in a kernel must inherit from `NKIObject` and no other class
    (`Enum` subclasses are translated to NKIObject). Class inheritance hierarchies were not supported before
    NKI 0.7, whose tracer runs ordinary Python classes, so the rule is off for 0.7."""
    for module, cls in ctx.discovery.classes:
        if module is not ctx.discovery.module:
            continue
        names = [ctx.aliases.canonical(b) or _local_name(b) for b in cls.bases]
        if len(names) == 1 and names[0] in _ALLOWED:
            continue
        user_bases = [n for n in names if n in module.classes]
        if user_bases:
            msg = (
                f"class {cls.name} subclasses user class {user_bases[0]}: class inheritance is not supported "
                "before NKI 0.7; derive from nl.NKIObject only"
            )
        elif not names:
            msg = f"class {cls.name} is used in kernel code but does not derive from nl.NKIObject"
        else:
            msg = (
                f"class {cls.name} derives from {', '.join(n or '?' for n in names)}; classes used in kernels "
                "must derive from nl.NKIObject (or Enum) and nothing else"
            )
        yield ctx.report(_head(ctx, cls), msg)


def _local_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ast.unparse(node)


def _head(ctx: LintContext, cls: ast.ClassDef) -> Span:
    return ctx.head_span(cls)
