"""Synthetic Neuron Explorer profiles: timelines plus writers for every format the readers accept.

No pytest dependency: the test-suite and the stand-in ``neuron-explorer`` (issue 7) both import it
(``sys.path.insert(0, "tests/profile"); import fixturegen``). Files are generated at test time, never
committed. Formats follow ``shared/profile-formats``: Parquet tables carry every documented field of schema
7.4.0 with its documented Arrow type (``nki_studio/profile/schema_7_4.json``); unknown encodings (legacy
JSON DMA keys, Perfetto slice argument names) use the spellings the reference calls most likely.

A ``Timeline`` is columnar (NumPy arrays / lists), so the benchmark can build a million instructions fast.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# Walkthrough synthetic timeline (metrics.md §6.2): invented intervals reproducing the published
# Trn2 residual-add + RMSNorm unions (D 69.841 µs, C 190.251 µs, I 56.336 µs, latency 218.666 µs).
WALKTHROUGH_INSTRUCTIONS = [
    ("Sync", "Sync", "EVENT_SEMAPHORE", None, 0, 3000),
    ("Vector", "Vector Engine Row 0", "TENSOR_TENSOR", "rmsnorm.py:41", 19505, 120000),
    ("Vector", "Vector Engine Row 1", "TENSOR_REDUCE", "rmsnorm.py:44", 100000, 150000),
    ("Scalar", "Scalar Engine Row 0", "ACTIVATE", "rmsnorm.py:47", 140000, 209756),
    ("Scalar", "Scalar Engine Row 0", "EVENT_SEMAPHORE", "rmsnorm.py:47", 209756, 215000),
    ("Sync", "Sync", "EVENT_SEMAPHORE", None, 215000, 218666),
]
WALKTHROUGH_DMA = [
    ("qSyncIO0", "x", 6000, 40000, 1048576),
    ("qGpSimdDynamic", "residual", 30000, 75841, 1048576),
]
WALKTHROUGH_LATENCY_NS = 218666


@dataclass
class Timeline:
    """Instruction and DMA columns of one synthetic profile (times in ns)."""

    start: np.ndarray
    end: np.ndarray
    engine: list[str]
    track: list[str]
    opcode: list[str]
    location: list[str | None]  # nki_source_location text; several locations joined by ","
    pcore: np.ndarray
    iteration: list[dict[str, int] | None]
    dma_start: np.ndarray
    dma_end: np.ndarray
    dma_bytes: np.ndarray
    dma_queue: list[str]
    dma_tensor: list[str]
    dma_trigger: np.ndarray  # index of the triggering instruction, -1 none
    total_exec_time_s: float
    executions: list[tuple[int, int, int]] = field(default_factory=list)
    schema_version: str = "7.4.0"
    # Optional bounds inputs (bounds.md §1): per instruction, per DMA transfer, and TensorInfo rows.
    instr_flops: np.ndarray | None = None  # adjusted_flops
    instr_kind: list[str | None] | None = None  # tensor_instruction_type
    instr_operands: list[str] | None = None
    dma_partitions: np.ndarray | None = None  # SBUF partitions (written for loads, read for stores)
    dma_source: list[str] | None = None
    dma_dest: list[str] | None = None
    dma_transpose: np.ndarray | None = None
    tensors: list[tuple[str, str, int]] = field(default_factory=list)  # (variable_name, type, size)
    metadata: dict[str, Any] = field(default_factory=dict)  # Metadata fields overriding the Trn2 defaults

    @property
    def n(self) -> int:
        return int(self.start.size)


def walkthrough_timeline(path_prefix: str = "/home/ubuntu/kernels/") -> Timeline:
    """The metrics.md §6.2 timeline; locations get an absolute compile-host prefix like real profiles."""
    rows = WALKTHROUGH_INSTRUCTIONS
    return Timeline(
        start=np.array([r[4] for r in rows], np.int64),
        end=np.array([r[5] for r in rows], np.int64),
        engine=[r[0] for r in rows],
        track=[r[1] for r in rows],
        opcode=[r[2] for r in rows],
        location=[None if r[3] is None else path_prefix + r[3] for r in rows],
        pcore=np.zeros(len(rows), np.int64),
        iteration=[None] * len(rows),
        dma_start=np.array([d[2] for d in WALKTHROUGH_DMA], np.int64),
        dma_end=np.array([d[3] for d in WALKTHROUGH_DMA], np.int64),
        dma_bytes=np.array([d[4] for d in WALKTHROUGH_DMA], np.int64),
        dma_queue=[d[0] for d in WALKTHROUGH_DMA],
        dma_tensor=[d[1] for d in WALKTHROUGH_DMA],
        dma_trigger=np.full(len(WALKTHROUGH_DMA), -1, np.int64),
        total_exec_time_s=WALKTHROUGH_LATENCY_NS * 1e-9,
        executions=[(0, 0, WALKTHROUGH_LATENCY_NS)],
    )


_ENGINE_HINTS = (
    (re.compile(r"matmul|nc_matmul|transpose"), "Tensor", "MATMUL"),
    (re.compile(r"activation|exp|tanh|gelu|silu|rsqrt|sqrt"), "Scalar", "ACTIVATE"),
    (re.compile(r"iota|affine_select|gpsimd|partition_all_reduce"), "GpSimd", "IOTA"),
    (re.compile(r"reduce|sum\(|max\(|bn_stats"), "Vector", "TENSOR_REDUCE"),
)
_DMA_HINT = re.compile(r"load|store|dma_copy|\.copy\(")


def kernel_timeline(
    remote_path: str,
    source_lines: dict[int, str],
    *,
    n_instructions: int = 400,
    seed: int = 0,
    fused_fraction: float = 0.05,
    unattributed_fraction: float = 0.05,
    wait_fraction: float = 0.1,
    iterations: bool = False,
    cores: int = 1,
) -> Timeline:
    """A plausible timeline for a kernel: instructions spread over ``source_lines`` (line → text).

    Engines follow the line text (matmul → Tensor, activation → Scalar, …); DMA transfers are triggered by
    load/store lines. Each engine row runs its instructions back to back with random gaps, rows overlap.
    """
    rng = np.random.default_rng(seed)
    lines = sorted(source_lines)
    if not lines:
        raise ValueError("kernel_timeline needs at least one source line")
    n = n_instructions
    pick = rng.integers(0, len(lines), n)
    engine, opcode, location, track, iters = [], [], [], [], []
    dur = rng.integers(50, 2000, n).astype(np.int64)
    r = rng.random(n)
    row_time: dict[str, int] = {}
    start = np.zeros(n, np.int64)
    pcore = rng.integers(0, cores, n).astype(np.int64)
    dma: list[tuple[str, str, int, int, int, int]] = []
    for i in range(n):
        line = lines[int(pick[i])]
        text = source_lines[line].lower()
        eng, op = "Vector", "TENSOR_TENSOR"
        for pat, e, o in _ENGINE_HINTS:
            if pat.search(text):
                eng, op = e, o
                break
        if r[i] < wait_fraction:
            op = "EVENT_SEMAPHORE"
        loc: str | None = f"{remote_path}:{line}"
        if r[i] > 1 - unattributed_fraction:
            eng, op, loc = "Sync", "EVENT_SEMAPHORE" if r[i] > 1 - unattributed_fraction / 2 else "NOP", None
        elif r[i] > 1 - unattributed_fraction - fused_fraction:
            other = lines[int(rng.integers(0, len(lines)))]
            if other != line:
                loc = f"{remote_path}:{line},{remote_path}:{other}"
        row = f"{eng} Engine Row {int(rng.integers(0, 2 if eng in ('Vector', 'Scalar') else 1))}"
        key = f"{row}/{pcore[i]}"
        start[i] = row_time.get(key, 1000) + int(rng.integers(0, 300))
        row_time[key] = int(start[i] + dur[i])
        engine.append(eng)
        opcode.append(op)
        location.append(loc)
        track.append(row)
        iters.append({"i": int(rng.integers(0, 4))} if iterations and loc is not None else None)
        if loc is not None and _DMA_HINT.search(text) and op != "EVENT_SEMAPHORE":
            q = "qSyncIO0" if "load" in text else "qScalarDynamic"
            ds = int(start[i] + dur[i]) + int(rng.integers(0, 200))
            dma.append(
                (q, f"t{line}", ds, ds + int(rng.integers(200, 3000)), int(rng.integers(1, 64)) * 4096, i)
            )
    end = start + dur
    span_end = int(max(end.max(), max((d[3] for d in dma), default=0)))
    span_start = int(min(start.min(), min((d[2] for d in dma), default=span_end)))
    return Timeline(
        start=start,
        end=end,
        engine=engine,
        track=track,
        opcode=opcode,
        location=location,
        pcore=pcore,
        iteration=iters,
        dma_start=np.array([d[2] for d in dma], np.int64),
        dma_end=np.array([d[3] for d in dma], np.int64),
        dma_bytes=np.array([d[4] for d in dma], np.int64),
        dma_queue=[d[0] for d in dma],
        dma_tensor=[d[1] for d in dma],
        dma_trigger=np.array([d[5] for d in dma], np.int64),
        total_exec_time_s=(span_end - span_start) * 1e-9,
        executions=[(0, span_start, span_end)],
    )


def kernel_body_lines(source: str) -> dict[int, str]:
    """Statement lines inside the file's ``@...jit`` kernels (all functions when none is decorated so)."""
    import ast

    tree = ast.parse(source)
    text = source.splitlines()
    funcs = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    jitted = [f for f in funcs if any("jit" in ast.unparse(d) for d in f.decorator_list)] or funcs
    lines: dict[int, str] = {}
    for f in jitted:
        body = (
            f.body[1:]
            if f.body
            and isinstance(f.body[0], ast.Expr)
            and isinstance(getattr(f.body[0], "value", None), ast.Constant)
            else f.body
        )
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.stmt):
                    lines[node.lineno] = text[node.lineno - 1]
    return lines


def kernel_file_timeline(
    kernel_file: str | Path, remote_dir: str = "/home/ubuntu/kernels", **kw: Any
) -> Timeline:
    """``kernel_timeline`` over the statement lines of the kernels in a real file."""
    lines = kernel_body_lines(Path(kernel_file).read_text(encoding="utf-8"))
    return kernel_timeline(f"{remote_dir.rstrip('/')}/{Path(kernel_file).name}", lines, **kw)


def profile_timeline(profile: Any) -> Timeline:
    """The timeline of a ``nki_studio.profile.model.Profile`` (an estimated one: a simulated kernel scheduled with
    some cost table), so a profile "measured" on a machine whose costs we chose can be written in every format:
    the calibration tests' hardware stand-in. Locations are the profile's (one per instruction), transfers keep
    their triggering instruction."""
    ins, loc, dma = profile.instructions, profile.locations, profile.dma
    n = len(ins)
    where: list[str | None] = [None] * n
    for i, code, line in zip(loc.instr.tolist(), loc.file.codes.tolist(), loc.line.tolist(), strict=True):
        where[i] = where[i] or f"{loc.file.values[code]}:{line}"
    engines = [ins.engine.values[c] for c in ins.engine.codes.tolist()]
    # an estimated profile's execution window holds its per-execution fixed cost: the machine "measures" it too
    span = (
        (profile.executions[0].start, profile.executions[0].end)
        if profile.executions
        else (
            int(min(ins.start.min(), dma.start.min(initial=ins.start.min()))),
            int(max(ins.end.max(), dma.end.max(initial=0))),
        )
    )
    return Timeline(
        start=ins.start.astype(np.int64),
        end=ins.end.astype(np.int64),
        engine=engines,
        track=[f"{e} Engine Row 0" if e != "Sync" else "Sync" for e in engines],
        opcode=[ins.opcode.values[c] for c in ins.opcode.codes.tolist()],
        location=where,
        pcore=ins.pcore.astype(np.int64),
        iteration=[None] * n,
        dma_start=dma.start.astype(np.int64),
        dma_end=dma.end.astype(np.int64),
        dma_bytes=dma.bytes.astype(np.int64),
        dma_queue=[dma.queue.values[c] for c in dma.queue.codes.tolist()],
        dma_tensor=[dma.tensor.values[c] for c in dma.tensor.codes.tolist()],
        dma_trigger=dma.instr.astype(np.int64),
        total_exec_time_s=(span[1] - span[0]) * 1e-9,
        executions=[(0, span[0], span[1])],
    )


def big_timeline(
    n: int,
    n_lines: int = 300,
    seed: int = 1,
    remote_path: str = "/home/ubuntu/big_kernel.py",
    time_ordered: bool = True,
) -> Timeline:
    """A benchmark-sized timeline built with array operations only (a million rows in well under a second).

    Rows come in start-time order, as a profiler's timeline is written (inferred: the Parquet row order is not
    documented); ``time_ordered=False`` shuffles them to measure the reader's re-sorting cost."""
    rng = np.random.default_rng(seed)
    engines = np.array(["Tensor", "Vector", "Scalar", "GpSimd", "Sync"])
    ops = np.array(["MATMUL", "TENSOR_TENSOR", "ACTIVATE", "IOTA", "EVENT_SEMAPHORE"])
    eng_idx = rng.integers(0, 5, n)
    rows_per_engine = 3
    row = eng_idx * rows_per_engine + rng.integers(0, rows_per_engine, n)
    dur = rng.integers(20, 400, n).astype(np.int64)
    gap = rng.integers(0, 50, n).astype(np.int64)
    # Back-to-back per track: cumulative sum of (gap + dur) within each track.
    order = np.argsort(row, kind="stable")
    step = (gap + dur)[order]
    csum = np.cumsum(step)
    first = np.r_[True, row[order][1:] != row[order][:-1]]
    base = np.maximum.accumulate(np.where(first, csum - step, 0))
    end_sorted = csum - base
    end = np.empty(n, np.int64)
    end[order] = end_sorted
    start = end - dur
    line = rng.integers(1, n_lines + 1, n)
    locs = np.array([f"{remote_path}:{k}" for k in range(n_lines + 1)], dtype=object)
    location = locs[line]
    location[rng.random(n) < 0.03] = None
    track_names = np.array([f"{e} Engine Row {k}" for e in engines for k in range(rows_per_engine)])
    perm = np.argsort(start, kind="stable") if time_ordered else rng.permutation(n)
    start, end, eng_idx, row, location = start[perm], end[perm], eng_idx[perm], row[perm], location[perm]
    return Timeline(
        start=start,
        end=end,
        engine=list(engines[eng_idx]),
        track=list(track_names[row]),
        opcode=list(ops[eng_idx]),
        location=list(location),
        pcore=np.zeros(n, np.int64),
        iteration=[None] * n,
        dma_start=np.zeros(0, np.int64),
        dma_end=np.zeros(0, np.int64),
        dma_bytes=np.zeros(0, np.int64),
        dma_queue=[],
        dma_tensor=[],
        dma_trigger=np.zeros(0, np.int64),
        total_exec_time_s=float(end.max() - start.min()) * 1e-9,
        executions=[(0, int(start.min()), int(end.max()))],
    )


def summary_fields(tl: Timeline) -> dict[str, Any]:
    """Summary values a real profile would carry for this timeline (times in seconds, percents as fractions)."""
    from nki_studio.profile.intervals import union_length

    wait = np.array([o in ("EVENT_SEMAPHORE", "EVENT_SEMAPHORE_RANGE_CLEAR") for o in tl.opcode], bool)
    total = tl.total_exec_time_s
    out: dict[str, Any] = {
        "total_time": total,
        "total_exec_time": total,
        "model_flops": 0,  # always 0 for standalone NKI (metrics.md §5)
        "hbm_read_bytes": int(tl.dma_bytes.sum()),
        "hbm_write_bytes": 0,
        "dma_transfer_total_bytes": int(tl.dma_bytes.sum()),
        "dma_transfer_count": int(tl.dma_bytes.size),
        "dma_transfer_time": float((tl.dma_end - tl.dma_start).sum()) * 1e-9,
        "dma_active_time": union_length(tl.dma_start, tl.dma_end) * 1e-9,
    }
    eng = np.array(tl.engine, dtype=object)
    for e in ("Tensor", "Vector", "Scalar", "GpSimd", "Sync"):
        m = (eng == e) & ~wait
        key = "sync_engine" if e == "Sync" else f"{e.lower()}_engine"
        active = union_length(tl.start[m], tl.end[m]) * 1e-9
        out[f"{key}_active_time"] = active
        out[f"{key}_active_time_percent"] = active / total if total else 0.0
        out[f"{key}_instruction_count"] = int((eng == e).sum())
        out[f"{key}_instruction_time"] = float((tl.end - tl.start)[eng == e].sum()) * 1e-9
    out["dma_active_time_percent"] = out["dma_active_time"] / total if total else 0.0
    return out


def random_hex(seed: int, n: int = 40) -> str:
    """Deterministic hex id (summary-json keys, NEFF hashes)."""
    return "".join(random.Random(seed).choice("0123456789abcdef") for _ in range(n))


def write_all(tl: Timeline, directory: str | Path, stem: str = "profile") -> dict[str, Path]:
    """Every format for one timeline: ``{"parquet": dir, "json": file, "summary-json": file, "perfetto": file, "csv": dir}``."""
    from fixturewriters import write_csv, write_legacy_json, write_parquet, write_pftrace, write_summary_json

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    return {
        "parquet": write_parquet(tl, d / f"{stem}_parquet"),
        "json": write_legacy_json(tl, d / f"{stem}.json"),
        "summary-json": write_summary_json(tl, d / f"{stem}_summary.json"),
        "perfetto": write_pftrace(tl, d / f"{stem}.pftrace"),
        "csv": write_csv(tl, d / f"{stem}_csv"),
    }


def oracle_expectations() -> dict[str, Any]:
    """metrics.md §6.2 expected numbers, for tests and the stand-in's self-check."""
    return json.loads(
        json.dumps(
            {
                "latency_ns": 218666,
                "dma_union_ns": 69841,
                "useful_compute_union_ns": 190251,
                "dma_compute_intersection_ns": 56336,
                "dma_or_compute_union_ns": 203756,
                "idle_ns": 14910,
                "per_engine": {"Scalar": 69756, "Vector": 130495},
                "per_line": {
                    41: (1, 1, 100495, 0, 56336),
                    44: (1, 1, 50000, 0, 0),
                    47: (2, 1, 69756, 5244, 0),
                },
                "dma_total_bytes": 2097152,
            }
        )
    )


def main(argv: list[str] | None = None) -> int:
    """``python tests/profile/fixturegen.py KERNEL.py OUT_DIR [N]``: write every format of a synthetic profile
    of that kernel (labelled synthetic: it is generated, not measured) and print the paths."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print(main.__doc__, file=sys.stderr)
        return 2
    kernel, out = Path(args[0]), Path(args[1])
    tl = kernel_file_timeline(kernel, n_instructions=int(args[2]) if len(args) == 3 else 400, iterations=True)
    for fmt, path in write_all(tl, out, f"{kernel.stem}_synthetic").items():
        print(f"{fmt}: {path}")
    return 0


if __name__ == "__main__":
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).parent))  # fixturewriters sits next to this file
    raise SystemExit(main())
