"""Which module of which package a kernel file is, so it loads the way its project imports it.

A kernel inside a package (``pkg/kernels/k.py`` doing ``from ..helpers import tile``, the layout of
nki-library and most projects) only runs as ``pkg.kernels.k``: loaded as a loose file, its relative imports
fail with "attempted relative import with no known parent package". The package is found as Python's own
import system would find it: the folders holding an ``__init__.py`` above the file make up the dotted name,
and the folder above the top one is the root to put on ``sys.path``. A folder without ``__init__.py`` that
lies under one of the project's source roots (the caller's search path, then ``PYTHONPATH``) is a namespace
package of that root.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

_INIT = "__init__.py"


@dataclass(frozen=True)
class ModuleLocation:
    """The dotted module name a file is imported as, and the folder its top package is imported from."""

    name: str  # e.g. "pkg.kernels.k"
    root: str

    @property
    def package(self) -> str:
        """The package the module belongs to (``pkg.kernels``), what its relative imports resolve against."""
        return self.name.rpartition(".")[0]


def source_roots(search_path: Iterable[str] = ()) -> list[str]:
    """The folders a project's modules are imported from: ``search_path`` first, then ``PYTHONPATH``."""
    entries = [*search_path, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return [os.path.abspath(e) for e in entries if e]


def package_module(path: str, search_path: Iterable[str] = ()) -> ModuleLocation | None:
    """Where ``path`` sits in a package, or None for a loose file (no ``__init__.py`` beside it and under no
    source root at a package depth), which keeps loading as before."""
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.dirname(path)
    parts = [stem]
    while os.path.isfile(os.path.join(folder, _INIT)):
        parts.insert(0, os.path.basename(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if len(parts) > 1:
        return _location(parts, folder)
    for root in source_roots(search_path):
        relative = os.path.relpath(os.path.dirname(path), root)
        if relative == "." or relative.startswith(os.pardir) or os.path.isabs(relative):
            continue
        location = _location([*relative.split(os.sep), stem], root)
        if location is not None:
            return location
    return None


def _location(parts: list[str], root: str) -> ModuleLocation | None:
    if not all(p.isidentifier() for p in parts):
        return None  # a folder Python cannot import by name ("my-kernels"): load the file loose
    return ModuleLocation(".".join(parts), root)
