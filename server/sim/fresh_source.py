"""Load the user's modules from their source, never from ``__pycache__``.

CPython takes a cached ``.pyc`` as current when the source's size and its mtime in whole seconds match the ones
recorded in it. A kernel (or a helper it imports) rewritten within the same second to text of the same length —
an agent fixing one constant, ``operand1=0.5`` back to ``operand1=EPS`` — then runs the previous text's code, and
the simulator reports the old result for the new file. Inside ``fresh_sources()`` the user's files are compiled
from their text each time and no bytecode is written next to them; modules of the simulator, the standard library
and installed packages keep their caches (``userframe.is_internal``).
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType

from nki_studio.sim.userframe import is_internal


class FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """A source loader that compiles the file's current text on every load and writes no bytecode."""

    def get_code(self, fullname: str) -> CodeType:
        """The code of the file's text as it is now."""
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class _FreshFinder(importlib.machinery.FileFinder):
    """The path finder of a user folder: its ``.py`` files load through ``FreshSourceLoader``."""

    def __init__(self, path: str) -> None:
        super().__init__(
            path,
            (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
            (FreshSourceLoader, importlib.machinery.SOURCE_SUFFIXES),
            (importlib.machinery.SourcelessFileLoader, importlib.machinery.BYTECODE_SUFFIXES),
        )


def _user_folder(path: str) -> bool:
    # is_internal judges files: a folder is internal when a file in it would be
    return not is_internal(os.path.join(os.path.abspath(path or "."), "__init__.py"))


def _hook(path: str) -> importlib.machinery.FileFinder:
    if not os.path.isdir(path or ".") or not _user_folder(path):
        raise ImportError("not a user folder")  # the next path hook (the standard FileFinder) takes it
    return _FreshFinder(path)


def _drop_user_finders(keep: Callable[[object], bool]) -> None:
    for entry, finder in list(sys.path_importer_cache.items()):
        if isinstance(entry, str) and not keep(finder) and _user_folder(entry):
            del sys.path_importer_cache[entry]


@contextmanager
def fresh_sources() -> Iterator[None]:
    """User modules imported while the block runs are compiled from their current text (see the module's
    docstring); the finders it created are dropped afterwards, so the import system is as it was."""
    sys.path_hooks.insert(0, _hook)
    # a user folder's finder made before the block (a standard FileFinder) would read __pycache__
    _drop_user_finders(lambda finder: isinstance(finder, _FreshFinder))
    try:
        yield
    finally:
        sys.path_hooks.remove(_hook)
        _drop_user_finders(lambda finder: not isinstance(finder, _FreshFinder))
