"""parso's on-disk parse cache (used by jedi for the stubs and typeshed) written atomically, and a damaged
entry read as a miss.

Why: parso pickles straight into the cache file, so a server that ends while a jedi thread is writing (the
server exits at once after ``exit``, ``cli.serve._exit_now``, without joining that thread) leaves a truncated
file; parso then raises on every later load of it (``EOFError``/``UnpicklingError``), and completion and hover
of anything that imports it fail until the user deletes ``~/.cache/jedi``. Seen here: a cut-off
``builtins.pyi`` entry broke two completion tests in a full run. The replacements keep parso's signatures and
file names; they are installed once per process, before jedi is first used (``nki_jedi.NkiJedi``).
"""

from __future__ import annotations

import os
import pickle
import threading
from typing import Any

_installed = False
_lock = threading.Lock()


def install() -> None:
    """Replace parso's cache writer and reader with the atomic / tolerant versions (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        import parso.cache as cache

        load_original = cache._load_from_file_system

        def save(hashed_grammar: str, path: str, item: Any, cache_path: Any = None) -> None:
            target = cache._get_hashed_path(hashed_grammar, path, cache_path=cache_path)
            temp = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"
            try:
                with open(temp, "wb") as f:
                    pickle.dump(item, f, pickle.HIGHEST_PROTOCOL)
                os.replace(temp, target)  # readers see the old file or the whole new one
            except BaseException:
                try:
                    os.unlink(temp)
                except OSError:
                    pass
                raise

        def load(hashed_grammar: str, path: str, p_time: float, cache_path: Any = None) -> Any:
            try:
                return load_original(hashed_grammar, path, p_time, cache_path=cache_path)
            except (EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, TypeError):
                return None  # a damaged or foreign entry: parse again (and the next save replaces it)

        cache._save_to_file_system = save
        cache._load_from_file_system = load
        _installed = True
