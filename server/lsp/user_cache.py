"""The server's files in the user's cache folder (``$XDG_CACHE_HOME/nki-studio``, else ``~/.cache/nki-studio``):
things worth keeping between starts that can be rebuilt at any time. Standard library only."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """The folder (not created here)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nki-studio"


def write_atomically(path: Path, data: bytes) -> bool:
    """Replace ``path`` with ``data`` in one step (readers see the old or the new file, never half of one).
    Returns False when it could not be written (a read-only home just means no cache)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        return True
    except OSError as exc:
        log.debug("%s not written: %s", path, exc)
        return False
