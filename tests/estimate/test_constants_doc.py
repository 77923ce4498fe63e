"""docs/cost-model.md carries the current constants table (regenerate: ``python -m nki_studio.estimate.constants_doc``)."""

from __future__ import annotations

from nki_studio.estimate.constants import TABLE
from nki_studio.estimate.constants_doc import PAGE, page_with_table


def test_the_constants_table_in_the_docs_is_current() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert page_with_table(page) == page, "run scripts/generate.sh"


def test_every_constant_names_a_source_or_says_inferred() -> None:
    """A source is the ISA docs via hardware.md, a published measurement (named with its address), or the word
    "inferred" (issue 15)."""
    for name, c in TABLE.items():
        published = c.source.startswith("published measurement") and "github.com/" in c.source
        assert c.source.startswith("inferred") or "hardware.md" in c.source or published, name
