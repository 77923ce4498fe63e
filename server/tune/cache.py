"""Cached candidate outcomes, so a rerun or a widened space simulates only what is new.

The key is a hash of everything the outcome depends on: the candidate's source text, its values, the spec,
the target and NKI version, the backend, the nki-studio version and the calibration
(``tune.calibration.calibration_key``). Only outcomes that do not depend on the machine's load are kept: a
candidate that ran to the oracle (ranked, or failed a metric or raised); a timeout, a memory-limit kill, a
crash or a cancellation is simulated again next time. One JSON file per key, written atomically, under
``.nki-studio/tune-cache/`` of the project (the folder of the nearest ``pyproject.toml``, else the kernel's).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from typing import Any, cast

from nki_studio import __version__
from nki_studio.core.pyproject import find_pyproject
from nki_studio.protocol.tune import TuneCandidate

CACHE_DIR = os.path.join(".nki-studio", "tune-cache")
# statuses whose reason begins with one of these were cut short by a limit: simulated again next time
_NOT_KEPT = ("timeout:", "memory_limit:", "crashed:", "cancelled:", "refused:")


def cache_dir(kernel_path: str) -> str:
    """Where the outcomes of ``kernel_path``'s searches are kept."""
    pyproject = find_pyproject(kernel_path)
    root = os.path.dirname(pyproject) if pyproject else os.path.dirname(os.path.abspath(kernel_path))
    return os.path.join(root, CACHE_DIR)


def cache_key(source: str, values: Mapping[str, Any], context: Mapping[str, Any]) -> str:
    """The hash of a candidate's text and values with ``context`` (spec, target, backend, calibration...)."""
    blob = json.dumps(
        {"source": source, "values": dict(values), "context": dict(context), "version": __version__},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Cache:
    """Outcomes by key in one folder; ``None`` folder: nothing is kept (``--no-cache``)."""

    def __init__(self, folder: str | None) -> None:
        self.folder = folder

    def get(self, key: str) -> TuneCandidate | None:
        """The kept outcome of ``key`` (marked cached), or None."""
        if self.folder is None:
            return None
        try:
            with open(os.path.join(self.folder, f"{key}.json"), encoding="utf-8") as fh:
                row = cast(TuneCandidate, json.load(fh))
        except (OSError, ValueError):
            return None  # absent or torn by a crash: simulate again
        row["cached"] = True
        return row

    def put(self, key: str, row: TuneCandidate) -> None:
        """Keep ``row`` unless a limit cut its run short."""
        if self.folder is None or row["reason"].startswith(_NOT_KEPT):
            return
        os.makedirs(self.folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(row, fh)
        os.replace(tmp, os.path.join(self.folder, f"{key}.json"))
