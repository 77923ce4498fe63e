"""Rule and code documentation generated from the registry and the code catalogue, so pages and index cannot drift from
the code.

* ``docs/rules/NKI###.md`` for every code of the catalogue (``nki_studio.core.codes``): lint rules from their
  rule module, other codes (NKI6xx) from their declaration's ``Page``, each with its family's footer;
* ``docs/rules/README.md``: the index of every code, which the project README links as its rule list.

Run ``python -m nki_studio.nkilint.rule_docs`` from the repository root to rewrite them; the tests fail when a
file differs from what this module renders.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterable

from nki_studio.core import (
    perf_codes,  # noqa: F401  (declares the NKI7xx codes and their pages)
    simulation_codes,  # noqa: F401  (declares the NKI6xx codes and their pages)
)
from nki_studio.core.codes import FAMILIES, LINT_SOURCE, Code, Page, catalogue
from nki_studio.model.targets import NkiVersion
from nki_studio.nkilint.rule import Basis, Rule, all_rules

MARKER = (
    "<!-- generated from the code catalogue by nki_studio.nkilint.rule_docs; edit the rule module or the "
    "code's declaration -->"
)


def _version_scope(rule: Rule) -> str:
    def v(x: NkiVersion) -> str:
        return str(x)

    if rule.min_version and rule.max_version:
        text = f"NKI {v(rule.min_version)} to {v(rule.max_version)}"
    elif rule.min_version:
        text = f"NKI {v(rule.min_version)} and later"
    elif rule.max_version:
        text = f"NKI up to {v(rule.max_version)}"
    else:
        text = "every NKI version"
    gens = ", ".join(sorted(g.value for g in rule.generations)) if rule.generations else "every generation"
    return f"{text}; {gens}"


def _basis(rule: Rule) -> str:
    return "stated in the NKI docs" if rule.basis is Basis.STATED else "inferred (see Why)"


def _page(
    code: Code,
    facts: str,
    what: str,
    why: str,
    sections: Iterable[tuple[str, str]],
    examples: Iterable[tuple[str, str]],
    sources: str = "",
    appendix: str = "",
) -> str:
    """The markdown page of one code: header facts, What, Why (plus the family footer), extra sections,
    examples (title, Python code), Sources, appendix and how to suppress or configure it."""
    lines = [MARKER, f"# {code.code} {code.name}", "", facts, "", "## What", what, "", "## Why", why, ""]
    if code.family.footer:
        lines += [code.family.footer, ""]
    for title, text in sections:
        lines += [f"## {title}", text, ""]
    for title, example in examples:
        lines += [f"## {title}", "```python", example.rstrip("\n"), "```", ""]
    if sources:
        lines += ["## Sources", sources, ""]
    if appendix:
        lines += [appendix, ""]
    lines += [
        "Suppress on one line with `# noqa: " + code.code + "`; configure under `[tool.nki-studio]` in "
        "pyproject.toml (`ignore`, `per-file-ignores`, `severity`)."
    ]
    return "\n".join(lines) + "\n"


def render_page(rule: Rule) -> str:
    """The markdown page of one rule."""
    why = inspect.getdoc(rule.check) if rule.check is not None else None
    facts = (
        f"**Severity:** {rule.default_severity.value} · **Basis:** {_basis(rule)} · "
        f"**Scope:** {_version_scope(rule)}"
        + (" · **Quick fix:** yes" if rule.fixable else "")
        + (" · **Tag:** deprecated" if rule.deprecated else "")
    )
    examples = [
        (f"{title} (target NKI {ex.nki_version})" if ex.nki_version else title, ex.code)
        for title, group in (("Bad", rule.bad), ("Good", rule.good))
        for ex in group
    ]
    return _page(
        rule.entry,
        facts,
        rule.summary,
        why or "Produced by the lint engine itself.",
        [("Scope", rule.scope_note)] if rule.scope_note else [],
        examples,
        rule.sources,
    )


def render_code_page(code: Code, page: Page) -> str:
    """The markdown page of a code another analysis reports (NKI6xx: the simulator), from its declaration."""
    facts = (
        f"**Severity:** {code.severity.value} · **Source:** `{code.family.source}` · **Scope:** {page.scope}"
    )
    examples = [("Bad", ex) for ex in page.bad] + [("Good", ex) for ex in page.good]
    return _page(code, facts, page.what, page.why, page.sections, examples, appendix=page.appendix)


def _documented(rules: dict[str, Rule]) -> list[Code]:
    """The codes with a page: registered rules and codes declared with a ``Page`` (a code a test registered
    and removed again stays in the catalogue, without either)."""
    return [c for c in catalogue().values() if c.code in rules or c.page is not None]


def _scope(code: Code, rules: dict[str, Rule]) -> str:
    if code.code in rules:
        return _version_scope(rules[code.code])
    return code.page.scope if code.page is not None else ""


def render_index(rules: dict[str, Rule]) -> str:
    """``docs/rules/README.md``: every code of the catalogue with severity, scope and fix availability."""
    families = " · ".join(
        f"{f.prefix}xx {f.title}" + (f" (reported by `{f.source}`)" if f.source != LINT_SOURCE else "")
        for f in FAMILIES
    )
    lines = [
        "# nki-studio diagnostic codes",
        "",
        MARKER,
        "",
        f"Codes: {families}.",
        "",
        "Severity shown is the default (some rules change it per NKI version, see their pages).",
        "",
        "| code | name | severity | scope | fix | summary |",
        "|---|---|---|---|---|---|",
    ]
    for c in _documented(rules):
        fixable = c.code in rules and rules[c.code].fixable
        lines.append(
            f"| [{c.code}]({c.code}.md) | {c.name} | {c.severity.value} | {_scope(c, rules)} | "
            f"{'yes' if fixable else ''} | {c.summary.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


def generated_pages(root: str) -> dict[str, str]:
    """Path -> content of every page under ``docs/rules/``: one per code of the catalogue, and the index."""
    rules = all_rules()
    out = {}
    for code in catalogue().values():
        path = os.path.join(root, "docs", "rules", f"{code.code}.md")
        if code.code in rules:
            out[path] = render_page(rules[code.code])
        elif code.page is not None:
            out[path] = render_code_page(code, code.page)
    out[os.path.join(root, "docs", "rules", "README.md")] = render_index(rules)
    return out


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated docs under the current directory (the repository root)."""
    root = (argv or sys.argv[1:] or ["."])[0]
    for path, text in generated_pages(root).items():
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
