"""The one catalogue of diagnostic codes: code, name, default severity, family and docs page of every
diagnostic nki-studio reports, whichever analysis produces it.

A family is a code prefix (``NKI6``) with a title, the ``source`` its findings carry (the tool that reports
them) and an optional footer for its generated docs pages. Lint rules (NKI0xx-NKI5xx) declare their codes
when ``nki_studio.nkilint.rule`` registers them; codes of other analyses are declared where the family is
(``simulation_codes`` for NKI6xx, ``perf_codes`` for NKI7xx). A new family is one :class:`Family` in :data:`FAMILIES` plus the
:func:`declare` calls of its codes. Severity overrides, ``select``/``ignore`` and ``# noqa`` work on every
code of the catalogue alike; the docs pages and index are generated from it (``nki_studio.nkilint.rule_docs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nki_studio.core.findings import Finding, Fix, Related, Severity, Span

LINT_SOURCE = "nkilint"

# The page text shared by the rules that compute values (partition dims, capacities, operand shapes).
_VALUE_RULES_FOOTER = (
    "Values the interpreter cannot compute (unknown shapes, loop bounds, kernel arguments without an assert) "
    "never make this rule fire; an allocation or operand it could not size is left out, so reported totals "
    "are lower bounds. Limits per generation come from `server/model/targets.py`."
)


@dataclass(frozen=True)
class Family:
    """A range of codes: ``prefix`` (``"NKI6"``), what they are about, who reports them, a docs page footer."""

    prefix: str
    title: str
    source: str = LINT_SOURCE  # Finding.source of its diagnostics
    footer: str = ""  # appended to every generated page of the family


FAMILIES: tuple[Family, ...] = (
    Family("NKI0", "meta"),
    Family("NKI1", "Python subset"),
    Family("NKI2", "deprecations and legacy API"),
    Family("NKI3", "partition dimension", footer=_VALUE_RULES_FOOTER),
    Family("NKI4", "SBUF/PSUM capacity", footer=_VALUE_RULES_FOOTER),
    Family("NKI5", "ISA operands", footer=_VALUE_RULES_FOOTER),
    Family(
        "NKI6",
        "simulation",
        source="nki-sim",
        footer="Reported by the simulation side of nki-studio (source `nki-sim`: the spec parser, and the results "
        "of `nki-studio simulate` or simulate-on-save), not by `nki-studio lint`.",
    ),
    Family(
        "NKI7",
        "performance investigations",
        source="nki-perf",
        footer="Reported by the profile analysis of nki-studio (source `nki-perf`: `nki-studio profile analyze`, "
        "`nki-studio simulate --analyze`, a profile loaded in the editor, or the estimate of a simulate-on-save), for "
        "measured and estimated profiles alike; switched off with the setting `nki-studio.perfInvestigations`. See "
        "`shared/profile-formats/bounds.md` §3 for the method.",
    ),
    Family("NKI9", "internal errors"),
)


@dataclass(frozen=True)
class Page:
    """The docs page text of a code that is not a lint rule (a rule's page is rendered from the rule)."""

    scope: str
    what: str  # the full "What" paragraph (``Code.summary`` is its one-line form)
    why: str
    bad: tuple[str, ...]  # Python examples
    good: tuple[str, ...]
    sections: tuple[tuple[str, str], ...] = ()  # (title, markdown) between Why and the examples
    appendix: str = ""  # markdown after the examples


@dataclass(frozen=True)
class Code:
    """One diagnostic code and the facts every finding of it shares."""

    code: str  # "NKI301"
    name: str  # "partition-dim-too-large"
    severity: Severity  # default; config may override it
    summary: str  # one line, for the docs index
    family: Family
    deprecated: bool = False  # findings carry the LSP Deprecated tag
    page: Page | None = field(default=None, compare=False)

    @property
    def docs_path(self) -> str:
        """Repository-relative path of the docs page."""
        return f"docs/rules/{self.code}.md"

    def finding(
        self,
        path: str,
        span: Span,
        message: str,
        *,
        severity: Severity | None = None,
        fix: Fix | None = None,
        related: tuple[Related, ...] = (),
        unnecessary: bool = False,
    ) -> Finding:
        """A finding of this code: name, severity (unless ``severity`` overrides the default), deprecated tag
        and source come from the catalogue."""
        return Finding(
            path=path,
            span=span,
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            fix=fix,
            deprecated=self.deprecated,
            unnecessary=unnecessary,
            related=related,
            source=self.family.source,
        )


_CATALOGUE: dict[str, Code] = {}


def family_of(code: str) -> Family:
    """The family a code belongs to (the longest matching prefix); ValueError when none does."""
    matching = [f for f in FAMILIES if code.startswith(f.prefix)]
    if not matching:
        raise ValueError(f"{code}: no code family has this prefix (add one to FAMILIES)")
    return max(matching, key=lambda f: len(f.prefix))


def declare(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    deprecated: bool = False,
    page: Page | None = None,
) -> Code:
    """Add a code to the catalogue and return its entry. Declaring the same facts again returns the existing
    entry (a re-registered test rule); ValueError on a conflicting code or name, or a code of no family."""
    entry = Code(code, name, severity, summary, family_of(code), deprecated, page)
    existing = _CATALOGUE.get(code)
    if existing is not None:
        if existing != entry:
            raise ValueError(f"duplicate diagnostic code {code}")
        return existing
    if any(c.name == name for c in _CATALOGUE.values()):
        raise ValueError(f"duplicate diagnostic name {name}")
    _CATALOGUE[code] = entry
    return entry


def lookup(code: str) -> Code:
    """The catalogue entry of ``code`` (KeyError if it was never declared)."""
    return _CATALOGUE[code]


def catalogue() -> dict[str, Code]:
    """Every declared code, sorted (lint codes are declared when ``nkilint.rule.all_rules`` loads the rules)."""
    return dict(sorted(_CATALOGUE.items()))
