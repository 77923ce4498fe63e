"""The full server's modules (lsprotocol, pygls, the features) loaded on a thread once the first diagnostics are
out, while the early phase goes on answering the opened document's edits (``early_phase``).

Loading them takes ~0.4-0.6 s of CPU; without this an edit typed right after the open waited for all of it. The
thread only imports: the main thread builds the server afterwards, as before, and finds the modules loaded. An
import that fails here fails again there, where ``create_server`` reports it as before. Safe to run beside the
early lint: the project's modules have no import cycles (``tests/test_import_cycles.py``), so the two threads
cannot deadlock on module locks; one waits for a module the other is loading.
"""

from __future__ import annotations

import importlib
import logging
import threading

log = logging.getLogger(__name__)


class Preload:
    """The loading thread (daemon: a client that goes away mid-load does not keep the process alive)."""

    def __init__(self) -> None:
        self._thread = threading.Thread(target=_load, name="nki-studio-preload", daemon=True)

    def start(self) -> Preload:
        """Start loading; returns self."""
        self._thread.start()
        return self

    def done(self) -> bool:
        """Whether loading has ended (loaded or failed)."""
        return not self._thread.is_alive()

    def wait(self) -> None:
        """Block until loading has ended."""
        self._thread.join()


def _load() -> None:
    try:
        from nki_studio.lsp.attrs_code_cache import import_lsprotocol_with_cache

        import_lsprotocol_with_cache()  # first: pygls imports lsprotocol, which should come from the cache
        from nki_studio.lsp.server import FEATURES

        for name in FEATURES:
            importlib.import_module(f"nki_studio.lsp.features.{name}")
    except Exception as exc:  # the main thread imports again and reports it where it always did
        log.debug("preloading the full server stopped: %s", exc)
