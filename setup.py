"""Package discovery and the rule pages: the import package ``nki_studio`` lives in the folder ``server/``.

setuptools cannot discover sub-packages of a renamed folder from pyproject.toml alone, so the list is
computed here; everything else is declared in pyproject.toml. The jedi stubs (``server/stubs``, ``.pyi`` files
only) are listed as namespace packages so their files ship as package data without setuptools' warning.
The generated rule pages (``docs/rules``) are copied into the built package as ``nki_studio/rule_pages`` so a
pip-installed server links diagnostics to them (``nki_studio.core.distribution``); an editable install reads
``docs/rules`` in place.
"""

import shutil
from pathlib import Path

from setuptools import find_namespace_packages, find_packages, setup
from setuptools.command.build_py import build_py

RULE_PAGES = Path(__file__).parent / "docs" / "rules"


class BuildWithRulePages(build_py):
    """``build_py`` plus a copy of ``docs/rules/*.md`` into the package (not for editable installs)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "nki_studio" / "rule_pages"
        target.mkdir(parents=True, exist_ok=True)
        for page in sorted(RULE_PAGES.glob("*.md")):
            shutil.copyfile(page, target / page.name)


stubs = find_namespace_packages("server", include=["stubs", "stubs.*"])
setup(
    packages=["nki_studio"] + [f"nki_studio.{p}" for p in sorted({*find_packages("server"), *stubs})],
    cmdclass={"build_py": BuildWithRulePages},
)
