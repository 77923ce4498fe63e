"""Rule pages and the rule index match the registry (regenerate with ``python -m nki_studio.nkilint.rule_docs``);
the README links the index as its rule list."""

from __future__ import annotations

import os

import pytest
from nki_studio.nkilint.rule import all_rules
from nki_studio.nkilint.rule_docs import generated_pages

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HINT = "run `python -m nki_studio.nkilint.rule_docs` from the repository root"


@pytest.mark.parametrize("code", list(all_rules()))
def test_every_rule_has_a_page_with_examples(code: str) -> None:
    path = os.path.join(ROOT, "docs", "rules", f"{code}.md")
    assert os.path.exists(path), f"{path} missing: {HINT}"
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert code in text
    assert "Bad" in text and "Good" in text


def test_generated_pages_are_current() -> None:
    for path, expected in generated_pages(ROOT).items():
        with open(path, encoding="utf-8") as fh:
            assert fh.read() == expected, f"{path} is stale: {HINT}"


def test_readme_links_the_rule_index() -> None:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    assert "](docs/rules/README.md)" in readme, "README.md must link its rule list, docs/rules/README.md"


def test_every_page_under_docs_rules_is_generated() -> None:
    folder = os.path.join(ROOT, "docs", "rules")
    on_disk = {os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".md")}
    owned = set(generated_pages(ROOT))
    assert on_disk == owned, f"hand-written or orphaned pages: {sorted(on_disk ^ owned)}; {HINT}"
