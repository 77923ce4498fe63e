"""What the installed distribution says about itself: its project URLs (declared once, in pyproject.toml's
``[project.urls]``, read back from the installed metadata) and where the rule documentation pages are.

A wheel carries the generated rule pages inside the package (``nki_studio/rule_pages/``, copied from
``docs/rules`` by ``setup.py`` at build time); a source checkout (editable install) reads ``docs/rules``.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "nki-studio"
RULE_PAGES_URL_LABEL = "Rule pages"  # the [project.urls] entry rule links resolve against on the web

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
_PACKAGED_PAGES = _PACKAGE_DIR / "rule_pages"
_CHECKOUT_PAGES = _PACKAGE_DIR.parent / "docs" / "rules"


@lru_cache(maxsize=1)
def project_urls() -> dict[str, str]:
    """``[project.urls]`` of the installed distribution, label → URL; empty when it is not installed."""
    try:
        entries = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip():
            urls[label.strip()] = url.strip()
    return urls


def rule_page_url(code: str) -> str | None:
    """The web address of a code's rule page (``Rule pages`` URL + ``CODE.md``), or None if none is declared."""
    base = project_urls().get(RULE_PAGES_URL_LABEL)
    return f"{base.rstrip('/')}/{code}.md" if base else None


@lru_cache(maxsize=1)
def rule_pages_dir() -> Path | None:
    """The folder holding ``NKI###.md`` pages: the wheel's packaged copy, else the checkout's ``docs/rules``."""
    for folder in (_PACKAGED_PAGES, _CHECKOUT_PAGES):
        if (folder / "README.md").is_file():
            return folder
    return None


def rule_page(code: str) -> Path | None:
    """The local page of one code, if this installation has it."""
    folder = rule_pages_dir()
    page = folder / f"{code}.md" if folder is not None else None
    return page if page is not None and page.is_file() else None
