"""A kernel's simulation kept on disk, so the suite can re-estimate it without simulating it again.

The estimate of a trace takes seconds; simulating the published legacy kernels takes minutes each (README.md,
"Scaling"). ``run.py --trace-cache DIR`` and ``loo_fit.py`` keep each kernel's trace (JSON Lines, the simulator's
own format: ``nki_studio.sim.trace``) and what the run found (output check, capacity warning) under
``DIR/<kernel>-<shape>.jsonl.gz`` and ``.json``. A cached trace is only valid for the simulator that wrote it: clear
the directory after changing the simulator or a kernel (the estimate model may change freely).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

from nki_studio.sim.trace import TraceEvent, read_jsonl, write_jsonl


@dataclasses.dataclass(frozen=True)
class Simulated:
    """One kernel simulated at one shape: its trace and what the run found."""

    shape: dict[str, int]
    scale: float  # measured / simulated size along the kernel's scale_dim
    seconds: float
    nki_version: str  # the NKI version simulated (a legacy kernel's, inferred from its imports)
    check: str
    correct: bool
    capacity: str  # the simulator's first SBUF/PSUM capacity warning, or ""
    trace: list[TraceEvent]


def _stem(directory: Path, kernel_id: str, shape: dict[str, int]) -> Path:
    return directory / (kernel_id + "-" + "-".join(f"{k}{v}" for k, v in sorted(shape.items())))


def load(directory: Path, kernel_id: str, shape: dict[str, int]) -> Simulated | None:
    """The cached simulation of ``kernel_id`` at ``shape``, or None."""
    stem = _stem(directory, kernel_id, shape)
    meta, events = stem.with_suffix(".json"), stem.with_suffix(".jsonl.gz")
    if not (meta.is_file() and events.is_file()):
        return None
    fields: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8"))
    with gzip.open(events, "rt", encoding="utf-8") as stream:
        return Simulated(**fields, trace=list(read_jsonl(stream)))


def save(directory: Path, kernel_id: str, simulated: Simulated) -> None:
    """Keep ``simulated`` for :func:`load`. Each file is written aside and renamed into place, the metadata last,
    so a run reading the directory meanwhile (two runs may share it) never loads half a trace."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = _stem(directory, kernel_id, simulated.shape)
    events = stem.with_suffix(".jsonl.gz")
    with gzip.open(events.with_name(events.name + ".part"), "wt", encoding="utf-8") as stream:
        write_jsonl(simulated.trace, stream)
    events.with_name(events.name + ".part").replace(events)
    fields = {f.name: getattr(simulated, f.name) for f in dataclasses.fields(simulated) if f.name != "trace"}
    meta = stem.with_suffix(".json")
    meta.with_name(meta.name + ".part").write_text(json.dumps(fields), encoding="utf-8")
    meta.with_name(meta.name + ".part").replace(meta)
