"""Package discovery only: the import package ``nki_studio`` lives in the folder ``server/``.

setuptools cannot discover sub-packages of a renamed folder from pyproject.toml alone, so the list is
computed here; everything else is declared in pyproject.toml. The jedi stubs (``server/stubs``, ``.pyi`` files
only) are listed as namespace packages so their files ship as package data without setuptools' warning.
"""

from setuptools import find_namespace_packages, find_packages, setup

stubs = find_namespace_packages("server", include=["stubs", "stubs.*"])
setup(packages=["nki_studio"] + [f"nki_studio.{p}" for p in sorted({*find_packages("server"), *stubs})])
