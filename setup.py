"""Package discovery only: the import package ``nki_studio`` lives in the folder ``server/``.

setuptools cannot discover sub-packages of a renamed folder from pyproject.toml alone, so the list is
computed here; everything else is declared in pyproject.toml.
"""

from setuptools import find_packages, setup

setup(packages=["nki_studio"] + [f"nki_studio.{p}" for p in find_packages("server")])
