"""The server's answer to ``initialize``, remembered from an earlier start.

The answer (capabilities, server info) is what pygls derives from the registered features and the client's
capabilities, so it only changes with the client's capabilities or with the server's code. Remembering it lets
a start answer ``initialize`` before pygls and lsprotocol have loaded (``lsp.fastpath``). Entries are keyed
by the request without its per-window parts (process id, workspace folders, settings) and by a fingerprint of
the server (its version, the code of ``nki_studio.lsp``, the files of pygls and lsprotocol), so an edited or
upgraded server does not answer with an old result. Every start checks the early answer against the full
server's and stores the latter.
Standard library only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import sys
from pathlib import Path
from typing import Any

from nki_studio import __version__
from nki_studio.lsp.user_cache import cache_dir, write_atomically

log = logging.getLogger(__name__)

MAX_ENTRIES = 8  # a few clients/settings side by side (each window's settings are part of the key)
# Parts of InitializeParams that differ between windows or settings but do not change the answer (the
# capabilities follow from the registered features and the client's capabilities; settings only change what
# the features do). If that ever stops being true, the full server's answer differs from the one sent early:
# the fast path logs it and stores the new answer (``streams.AlreadySentFilter``).
_PER_WINDOW = (
    "processId",
    "rootPath",
    "rootUri",
    "workspaceFolders",
    "workDoneToken",
    "initializationOptions",
)


def cache_file() -> Path:
    """Where the answers are kept."""
    return cache_dir() / "initialize-results.json"


def _fingerprint() -> list[Any]:
    """What the answer depends on besides the request: this server's code (the content of ``nki_studio.lsp``,
    which registers the features) and its LSP libraries (each file's name and size: they change with their
    version). Independent of where the server is installed, so a reinstalled extension keeps its answers."""
    lsp_dir = Path(__file__).resolve().parent.parent  # nki_studio.lsp, this fast path included
    code = hashlib.blake2b(digest_size=16)
    for f in sorted(lsp_dir.rglob("*.py")):
        code.update(f.relative_to(lsp_dir).as_posix().encode() + b"\0" + f.read_bytes())
    libraries = []
    for name in ("pygls", "lsprotocol"):
        spec = importlib.util.find_spec(name)  # locates the package without running it
        if spec is not None and spec.origin:
            root = Path(spec.origin).parent
            libraries.append(
                [name, sorted((f.relative_to(root).as_posix(), f.stat().st_size) for f in root.rglob("*.py"))]
            )
    return [__version__, sys.version, code.hexdigest(), libraries]


def request_key(params: Any) -> str:
    """The cache key of an ``initialize`` request's params."""
    request = (
        {k: v for k, v in params.items() if k not in _PER_WINDOW} if isinstance(params, dict) else params
    )
    blob = json.dumps([request, _fingerprint()], sort_keys=True, default=str)
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def _load_all(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}  # none yet, or damaged: rebuilt by the next full start
    return loaded if isinstance(loaded, dict) else {}


def load(key: str, path: Path | None = None) -> dict[str, Any] | None:
    """The answer stored under ``key``, or None."""
    result = _load_all(path or cache_file()).get(key)
    return result if isinstance(result, dict) else None


def store(key: str, result: dict[str, Any], path: Path | None = None) -> None:
    """Remember ``result`` under ``key`` (most recent last; the oldest entries beyond MAX_ENTRIES go)."""
    path = path or cache_file()
    entries = _load_all(path)
    entries.pop(key, None)
    entries[key] = result
    kept = dict(list(entries.items())[-MAX_ENTRIES:])
    write_atomically(path, json.dumps(kept).encode())
