"""A bytecode cache for the methods attrs generates, so the language server starts faster.

Importing ``lsprotocol.types`` builds ~550 attrs classes, and attrs writes and compiles the source of each
one's ``__init__``, ``__repr__``, ``__eq__``... at import time: about a third of the server's start-up on a
2-core machine, paid again on every start because generated code never reaches a ``.pyc``. attrs compiles
through the name ``compile`` looked up in its ``attr._make`` module, so binding that name there to a function
that serves code objects from a marshal file (keyed by a digest of file name and source, one file per Python version,
like ``.pyc`` files) skips the compiler from the second start on. If attrs stops looking the name up
there, the binding is simply unused. Nothing else changes: attrs still evaluates the code with its own globals.
"""

from __future__ import annotations

import builtins
import hashlib
import logging
import marshal
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from nki_studio.lsp.user_cache import cache_dir, write_atomically

log = logging.getLogger(__name__)


def cache_file() -> Path:
    """Where the cache lives: ``$XDG_CACHE_HOME/nki-studio`` (else ``~/.cache/nki-studio``), one file per Python
    version (code objects are version-specific). Entries are keyed by their source, so different attrs installs
    (a venv, the extension's bundle) share the file safely."""
    return cache_dir() / f"attrs-code-{sys.implementation.cache_tag or 'py'}.marshal"


class AttrsCodeCache:
    """Serves attrs' ``compile`` calls from a file; ``save`` writes back what was compiled anew."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.codes: dict[bytes, CodeType] = {}
        self.added = 0
        try:
            with open(path, "rb") as fh:
                loaded = marshal.load(fh)
            if isinstance(loaded, dict):
                self.codes = loaded
        except (OSError, EOFError, ValueError, TypeError):
            pass  # no cache yet, or a damaged one: it is rebuilt

    def compile(self, source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        """``compile`` for attrs: cached for plain source strings, passed through otherwise."""
        if args or kwargs or not isinstance(source, str) or not isinstance(filename, str):
            return builtins.compile(source, filename, mode, *args, **kwargs)
        key = hashlib.blake2b(f"{mode}\0{filename}\0{source}".encode(), digest_size=16).digest()
        code = self.codes.get(key)
        if code is None:
            code = builtins.compile(source, filename, mode)
            self.codes[key] = code
            self.added += 1
        return code

    def save(self) -> None:
        """Write the cache if anything was added (atomically; a read-only home just means no cache)."""
        if self.added and write_atomically(self.path, marshal.dumps(self.codes)):
            self.added = 0


def import_lsprotocol_with_cache() -> None:
    """Import ``lsprotocol.types`` (and so pygls' protocol types) with attrs' generated code cached."""
    if "lsprotocol.types" in sys.modules:
        return  # already loaded (``lsp.fastpath.preload``): reading the cache file would be wasted
    try:
        import attr._make as attrs_make

        cache = AttrsCodeCache(cache_file())
    except Exception as exc:  # never let an optimisation stop the server
        log.debug("attrs code cache unavailable: %s", exc)
        import lsprotocol.types

        return
    attrs_make.compile = cache.compile  # type: ignore[attr-defined]
    try:
        import lsprotocol.types  # noqa: F401
    finally:
        del attrs_make.compile  # type: ignore[attr-defined]  # back to the builtin for everything else
    cache.save()
