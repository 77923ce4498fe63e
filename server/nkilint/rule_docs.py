"""Rule documentation generated from the registry, so pages, index and README cannot drift from the code.

* ``docs/rules/NKI###.md`` for every rule whose page is missing or carries the generated marker (hand-written
  pages of other rule families are left alone);
* ``docs/rules/README.md``: the index of every registered rule;
* the "Rules" section of ``README.md`` between the ``<!-- rules:begin -->``/``<!-- rules:end -->`` markers.

Run ``python -m nki_studio.nkilint.rule_docs`` from the repository root to rewrite them; the tests fail when a
file differs from what this module renders.
"""

from __future__ import annotations

import inspect
import os
import sys

from nki_studio.model.targets import NkiVersion
from nki_studio.nkilint.rule import Basis, Rule, all_rules

MARKER = "<!-- generated from the rule registry by nki_studio.nkilint.rule_docs; edit the rule module -->"
README_BEGIN = "<!-- rules:begin -->"
README_END = "<!-- rules:end -->"


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


def render_page(rule: Rule) -> str:
    """The markdown page of one rule."""
    why = inspect.getdoc(rule.check) if rule.check is not None else None
    lines = [
        MARKER,
        f"# {rule.code} {rule.name}",
        "",
        f"**Severity:** {rule.default_severity.value} · **Basis:** {_basis(rule)} · "
        f"**Scope:** {_version_scope(rule)}"
        + (" · **Quick fix:** yes" if rule.fixable else "")
        + (" · **Tag:** deprecated" if rule.deprecated else ""),
        "",
        "## What",
        rule.summary,
        "",
    ]
    lines += ["## Why", why or "Produced by the lint engine itself.", ""]
    if rule.scope_note:
        lines += ["## Scope", rule.scope_note, ""]
    for title, examples in (("Bad", rule.bad), ("Good", rule.good)):
        for ex in examples:
            suffix = f" (target NKI {ex.nki_version})" if ex.nki_version else ""
            lines += [f"## {title}{suffix}", "```python", ex.code.rstrip("\n"), "```", ""]
    if rule.sources:
        lines += ["## Sources", rule.sources, ""]
    lines += [
        "Suppress on one line with `# noqa: " + rule.code + "`; configure under `[tool.nki-studio]` in "
        "pyproject.toml (`ignore`, `per-file-ignores`, `severity`)."
    ]
    return "\n".join(lines) + "\n"


def render_index(rules: dict[str, Rule]) -> str:
    """``docs/rules/README.md``: every rule with severity, scope and fix availability."""
    lines = [
        "# nkilint rules",
        "",
        MARKER,
        "",
        "Codes: NKI0xx meta · NKI1xx Python subset · NKI2xx deprecations and legacy API · NKI3xx partition "
        "dimension · NKI4xx SBUF/PSUM capacity · NKI5xx ISA operands. Simulation diagnostics (NKI6xx) are "
        "not lint rules; their pages live in this folder too.",
        "",
        "| code | name | severity | scope | fix | summary |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules.values():
        lines.append(
            f"| [{r.code}]({r.code}.md) | {r.name} | {r.default_severity.value} | {_version_scope(r)} | "
            f"{'yes' if r.fixable else ''} | {r.summary.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


def render_readme_section(rules: dict[str, Rule]) -> str:
    """The README's rule list (between the markers)."""
    lines = [
        README_BEGIN,
        "",
        f"{len(rules)} rules; each has a page in [`docs/rules/`](docs/rules/README.md). Severity shown is the "
        "default (some rules change it per NKI version, see their pages).",
        "",
        "| code | name | severity |",
        "|---|---|---|",
    ]
    for r in rules.values():
        lines.append(f"| [{r.code}](docs/rules/{r.code}.md) | {r.name} | {r.default_severity.value} |")
    lines += ["", README_END]
    return "\n".join(lines)


def generated_pages(root: str) -> dict[str, str]:
    """Path -> content of every page this module owns (missing pages, or pages with the marker)."""
    out = {}
    for rule in all_rules().values():
        path = os.path.join(root, "docs", "rules", f"{rule.code}.md")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                if MARKER not in fh.read():
                    continue
        out[path] = render_page(rule)
    out[os.path.join(root, "docs", "rules", "README.md")] = render_index(all_rules())
    return out


def readme_with_rules(readme: str) -> str:
    """README text with its rules section replaced (appended as "## Rules" when the markers are missing)."""
    section = render_readme_section(all_rules())
    if README_BEGIN in readme and README_END in readme:
        head, rest = readme.split(README_BEGIN, 1)
        _, tail = rest.split(README_END, 1)
        return head + section + tail
    return readme.rstrip("\n") + "\n\n## Rules\n\n" + section + "\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated docs under the current directory (the repository root)."""
    root = (argv or sys.argv[1:] or ["."])[0]
    for path, text in generated_pages(root).items():
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as fh:
        current = fh.read()
    with open(readme, "w", encoding="utf-8") as fh:
        fh.write(readme_with_rules(current))
    return 0


if __name__ == "__main__":
    sys.exit(main())
