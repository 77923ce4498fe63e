"""The local cache of downloaded remote profiles: ``<root>/<kernel file stem>.<kernel>/<host>/<UTC time>/``.

A download goes to a hidden ``.partial-*`` sibling first and is renamed into place only when complete, so
a cancelled or failed run never leaves something that looks like a profile.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]+")


def default_root() -> Path:
    """``$XDG_CACHE_HOME/nki-studio/remote-profiles`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nki-studio" / "remote-profiles"


def _component(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("._") or "_"


def entry_dir(root: Path, kernel_file: Path, kernel: str, host: str, when: float | None = None) -> Path:
    """Where one run's profile goes (not created)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if when is None else when))
    return root / _component(f"{kernel_file.stem}.{kernel}") / _component(host) / stamp


def partial_dir(final: Path) -> Path:
    """A fresh hidden download directory next to ``final`` (created)."""
    path = final.parent / f".partial-{final.name}-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True)
    return path


def commit(partial: Path, final: Path) -> Path:
    """Move a complete download into place (a same-second earlier run gets a suffix instead of a merge)."""
    target, n = final, 1
    while target.exists():
        n += 1
        target = final.with_name(f"{final.name}-{n}")
    partial.rename(target)
    return target


def discard(partial: Path) -> None:
    """Remove an incomplete download."""
    shutil.rmtree(partial, ignore_errors=True)
