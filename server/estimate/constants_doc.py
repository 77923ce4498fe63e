"""The constants table of docs/cost-model.md, generated from ``nki_studio.estimate.constants.TABLE``.

``python -m nki_studio.estimate.constants_doc`` rewrites the block between the markers; a test fails when
the page is stale (the pattern of ``nki_studio.nkilint.rule_docs``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from nki_studio.estimate.constants import TABLE

BEGIN = "<!-- estimate-constants:begin -->"
END = "<!-- estimate-constants:end -->"
PAGE = Path(__file__).resolve().parents[2] / "docs" / "cost-model.md"


def render_table() -> str:
    """The Markdown table, between the markers."""
    rows = [
        BEGIN,
        "",
        "| constant | value | unit | source |",
        "| --- | --- | --- | --- |",
        *(f"| `{name}` | {c.value:g} | {c.unit} | {c.source} |" for name, c in TABLE.items()),
        "",
        END,
    ]
    return "\n".join(rows)


def page_with_table(page: str) -> str:
    """``page`` with its marked block replaced by the current table."""
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + render_table() + tail


def main(argv: list[str] | None = None) -> int:
    """Rewrite the table in docs/cost-model.md."""
    del argv
    PAGE.write_text(page_with_table(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
