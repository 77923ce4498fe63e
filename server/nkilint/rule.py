"""The Rule unit and the registry of all rules.

A rule is data plus one function: a stable code (``NKI###``), a name, a default severity, a one-line summary,
the NKI versions/generations it applies to, the basis of the rule (stated in the docs or inferred), a bad and a
good example (used verbatim by the docs pages and by the tests), and ``check(ctx) -> Iterable[Finding]``.

Rule modules live in ``nki_studio.nkilint.rules`` and register themselves with the :func:`rule` decorator when
imported; :func:`all_rules` imports that package once. Each rule's code, name, default severity and summary
go into the one catalogue of diagnostic codes (``nki_studio.core.codes``, whose ``FAMILIES`` are the code
ranges); the engine binds the running rule's code, so a check reports with ``ctx.report(node, message)``.

Writing a rule::

    from nki_studio.nkilint.rule import Basis, rule
    from nki_studio.core.findings import Severity

    @rule(code="NKI301", name="partition-dim-too-large", severity=Severity.ERROR, basis=Basis.STATED,
          summary="...", bad="...", good="...")
    def check(ctx: LintContext) -> Iterator[Finding]:
        for func in ctx.kernel_code():          # FunctionInfo of this module's kernel code
            ...
            yield ctx.report(node, "partition dim 256 = TILE*2 (TILE=128) > 128")   # the code is bound
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from nki_studio.core.codes import Code, declare
from nki_studio.core.findings import Finding, Severity
from nki_studio.model.targets import Generation, NkiVersion, Target

if TYPE_CHECKING:
    from nki_studio.nkilint.context import LintContext

CheckFn = Callable[["LintContext"], Iterable[Finding]]


class Basis(str, Enum):
    """Whether the rule restates the NKI docs or is our inference (inferred rules default to warnings)."""

    STATED = "stated"
    INFERRED = "inferred"


@dataclass(frozen=True)
class Example:
    """A code example for the docs page and the tests; ``nki_version`` is the target it is checked against."""

    code: str
    nki_version: str | None = None  # None: the default target version
    checked: bool = True  # False for prose examples (config files) the tests cannot lint


@dataclass(frozen=True)
class Rule:
    """One lint rule: its catalogue entry (code, name, default severity, summary), metadata and check function."""

    entry: Code
    basis: Basis
    check: CheckFn | None  # None: findings produced by the engine itself (syntax, internal error, noqa)
    bad: tuple[Example, ...]
    good: tuple[Example, ...]
    min_version: NkiVersion | None = None  # applies to targets >= this version
    max_version: NkiVersion | None = None  # applies to targets <= this version
    generations: frozenset[Generation] | None = None  # None: every generation
    fixable: bool = False
    sources: str = ""  # reference pages the rule rests on, e.g. "python-subset.md §5; deprecations.md §D"
    scope_note: str = ""  # free text for the docs page, e.g. "error on 0.7, warning on 0.6"
    extra: dict[str, str] = field(default_factory=dict, compare=False)

    def applies_to(self, target: Target) -> bool:
        """Whether the rule runs for this target (version and generation scope)."""
        if self.min_version is not None and target.nki_version < self.min_version:
            return False
        if self.max_version is not None and target.nki_version > self.max_version:
            return False
        return self.generations is None or target.generation in self.generations

    @property
    def code(self) -> str:
        """The stable code, e.g. ``NKI301``."""
        return self.entry.code

    @property
    def name(self) -> str:
        """The rule name, e.g. ``partition-dim-too-large``."""
        return self.entry.name

    @property
    def default_severity(self) -> Severity:
        """Severity unless configured otherwise."""
        return self.entry.severity

    @property
    def summary(self) -> str:
        """One-line description."""
        return self.entry.summary

    @property
    def deprecated(self) -> bool:
        """Findings carry the LSP Deprecated tag."""
        return self.entry.deprecated

    @property
    def docs_path(self) -> str:
        """Repository-relative path of the docs page."""
        return self.entry.docs_path


REGISTRY: dict[str, Rule] = {}
_LOADED = False


_KERNEL_HEADER = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n\n@nki.jit\n"


def kernel_example(params: str, body: str) -> str:
    """Example text of a one-kernel module: the usual three nki imports and ``@nki.jit def kernel(params)`` around
    ``body`` (written unindented; the leading newline is dropped), so rule examples spell only what matters."""
    lines = body.removeprefix("\n").splitlines()
    return (
        _KERNEL_HEADER
        + f"def kernel({params}):\n"
        + "".join(f"    {line}\n" if line else "\n" for line in lines)
    )


def _examples(value: str | Example | Iterable[str | Example]) -> tuple[Example, ...]:
    if isinstance(value, (str, Example)):
        value = [value]
    return tuple(v if isinstance(v, Example) else Example(v) for v in value)


def define_rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    basis: Basis,
    bad: str | Example | Iterable[str | Example],
    good: str | Example | Iterable[str | Example],
    check: CheckFn | None = None,
    min_version: NkiVersion | None = None,
    max_version: NkiVersion | None = None,
    generations: Iterable[Generation] | None = None,
    deprecated: bool = False,
    fixable: bool = False,
    sources: str = "",
    scope_note: str = "",
) -> Rule:
    """Register a rule and declare its code in the catalogue (``nki_studio.core.codes``); raises ValueError on
    a duplicate code or name. ``check=None`` is for the meta rules whose findings the engine itself produces."""
    if code in REGISTRY:
        raise ValueError(f"duplicate rule code {code}")
    if any(r.name == name for r in REGISTRY.values()):
        raise ValueError(f"duplicate rule name {name}")
    REGISTRY[code] = Rule(
        entry=declare(code, name, severity, summary, deprecated=deprecated),
        basis=basis,
        check=check,
        bad=_examples(bad),
        good=_examples(good),
        min_version=min_version,
        max_version=max_version,
        generations=frozenset(generations) if generations is not None else None,
        fixable=fixable,
        sources=sources,
        scope_note=scope_note,
    )
    return REGISTRY[code]


def rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    basis: Basis,
    bad: str | Example | Iterable[str | Example],
    good: str | Example | Iterable[str | Example],
    min_version: NkiVersion | None = None,
    max_version: NkiVersion | None = None,
    generations: Iterable[Generation] | None = None,
    deprecated: bool = False,
    fixable: bool = False,
    sources: str = "",
    scope_note: str = "",
) -> Callable[[CheckFn], CheckFn]:
    """Decorator registering ``check`` as the rule ``code`` (see :func:`define_rule`)."""

    def register(check: CheckFn) -> CheckFn:
        define_rule(
            code=code,
            name=name,
            severity=severity,
            summary=summary,
            basis=basis,
            bad=bad,
            good=good,
            check=check,
            min_version=min_version,
            max_version=max_version,
            generations=generations,
            deprecated=deprecated,
            fixable=fixable,
            sources=sources,
            scope_note=scope_note,
        )
        return check

    return register


def all_rules() -> dict[str, Rule]:
    """Every registered rule by code, sorted; imports the ``rules`` package on first use."""
    global _LOADED
    if not _LOADED:
        from nki_studio.nkilint import rules as pkg

        for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            importlib.import_module(f"{pkg.__name__}.{mod.name}")
        _LOADED = True
    return dict(sorted(REGISTRY.items()))


def get_rule(code: str) -> Rule:
    """The rule with this code (KeyError if unknown)."""
    return all_rules()[code]
