"""Fuzzed profiles through the CLI: corrupted Parquet (real pyarrow files), legacy JSON, CSV exports and
``.pftrace`` traces, seeded and deterministic.

Every case runs ``nki-studio profile report --format json`` in-process (a few also as real subprocesses and in
text form) and must end in exit 0 or 2 with no traceback and no internal error; every exit-0 report must hold
the invariants checked here independently of the product's own checks (unions within the latency, idle >= 0,
overlap within both unions, bytes >= 0, shares and heat in [0, 1], every number finite).

``NKI_STUDIO_FUZZ_CASES`` sets the cases per text format (default 500; Parquet, whose cases write and read a dozen
real files, runs half as many): about two thousand cases, about 30 s of CPU time. ``NKI_STUDIO_FUZZ_SEED``
shifts the seeds. A failure names the case's seed and mutation.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profile"))  # fixturegen, fixturewriters

import fixturegen
from fixturewriters import write_csv, write_legacy_json, write_parquet, write_pftrace, write_summary_json
from nki_studio.cli.main import main
from nki_studio.profile.readers.tables import COLUMNS

CASES = int(os.environ.get("NKI_STUDIO_FUZZ_CASES", "500"))
SEED = int(os.environ.get("NKI_STUDIO_FUZZ_SEED", "0"))
# The suite's 300 s per test would cut a long run short: allow a second per case (a case takes ~10-50 ms).
pytestmark = pytest.mark.timeout(max(300, CASES))

KERNEL = """import nki
import nki.language as nl


@nki.jit
def fuzz_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        x = nl.load(a[i])
        y = nl.load(b[i])
        z = nl.add(x, y)
        nl.store(out[i], value=z)
    return out
"""

# Numbers a corrupt or hostile file may hold where a count, time or index belongs.
HOSTILE_NUMBERS: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    -1,
    -(2**63),
    2**63 - 1,
    2**62,
    2**64 - 1,
    10**30,
    1e308,
    -1e-300,
    0,
    1,
    0.5,
    2**31,
    2**31 - 1,
    65536,
]


def plausible_number(case: Case, old: Any) -> Any:
    """A value a profile could hold but rarely does: valid for the readers, odd for the metrics (huge but in
    range, zero, tiny, a small core index, near the old value)."""
    base = old if isinstance(old, (int, float)) and not isinstance(old, bool) and math.isfinite(old) else 0
    kind = case.rng.choice(("huge", "zero", "small", "near", "scaled"))
    if kind == "huge":
        return case.rng.randrange(2**60, 2**62 - 2**40)
    if kind == "zero":
        return 0
    if kind == "small":
        return case.rng.randrange(0, 4)
    if kind == "near":
        return max(0, int(base) + case.rng.randint(-1000, 1000))
    return type(base)(abs(base) * case.rng.choice((0.001, 0.5, 2, 1000)))


HOSTILE_JSON: list[Any] = [*HOSTILE_NUMBERS, None, True, "", "12", "abc", [], {}, [1, 2], {"a": 1}, "1e400"]
HOSTILE_TEXT = [
    "nan",
    "inf",
    "-inf",
    "-5",
    "1e400",
    "",
    "abc",
    "9" * 30,
    "18446744073709551615",
    "0x10",
    " 1 ",
    "1.5",
]
HOSTILE_LOCATIONS = [
    "/k.py:" + "9" * 30,
    "/k.py:-3",
    "/k.py:²",
    "/k.py:0",
    ":",
    "/k.py:2147483648",
    "[/k.py:1, /k.py:99999999999]",
    "\x00\ufffd:1",
    "/k.py:12:34:56",
]


class Case:
    """One fuzz case: its random source and what was done (for the failure message)."""

    def __init__(self, fmt: str, index: int) -> None:
        self.seed = SEED * 1_000_003 + index
        self.rng = random.Random(f"{fmt}-{self.seed}")
        self.what: list[str] = []

    def note(self, text: str) -> None:
        self.what.append(text)

    def __str__(self) -> str:
        return f"seed {self.seed}: {'; '.join(self.what) or 'unmutated'}"


# ---- the oracle --------------------------------------------------------------------------------------------


def _strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"non-standard JSON constant {name} in the report")

    return json.loads(text, parse_constant=refuse)


def _numbers(value: Any, where: str = "") -> list[tuple[str, float]]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [(where, value)]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _numbers(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in _numbers(v, f"{where}[{i}]")]
    return []


def report_violations(doc: dict[str, Any]) -> list[str]:
    """What is wrong with an exit-0 JSON report (empty when it holds every invariant)."""
    out = [f"{w} = {v}" for w, v in _numbers(doc) if not math.isfinite(v) or v < 0]
    k = doc["kernel"]
    lat = k["latency_ns"]
    top = lat if lat > 0 else math.inf

    def within(name: str, value: Any, hi: float) -> None:
        if value is not None and not 0 <= value <= hi:
            out.append(f"{name} = {value} not in [0, {hi}]")

    for name in (
        "dma_union_ns",
        "compute_union_ns",
        "perfect_pipeline_ns",
        "serialization_gap_ns",
        "unattributed_busy_ns",
        "unattributed_wait_ns",
        "dma_or_compute_ns",
        "idle_ns",
    ):
        within(name, k[name], top)
    within("intersection_ns", k["intersection_ns"], min(k["dma_union_ns"], k["compute_union_ns"]))
    for engine, busy in k["engines"].items():
        within(f"engines.{engine}", busy, top)
    if k["idle_ns"] is not None and lat > 0:
        if k["idle_ns"] + k["dma_or_compute_ns"] != lat:
            out.append(f"idle {k['idle_ns']} + DMA-or-compute {k['dma_or_compute_ns']} != latency {lat}")
        if k["dma_or_compute_ns"] != k["dma_union_ns"] + k["compute_union_ns"] - k["intersection_ns"]:
            out.append("DMA-or-compute is not D + C - I")
    within("dma_bytes", k["dma_bytes"], math.inf)
    for payload in doc["files"]:
        for ln in payload["lines"]:
            where = f"{payload['uri']}:{ln['line']}"
            within(f"{where} busy_ns", ln["busy_ns"], top)
            within(f"{where} wait_ns", ln["wait_ns"], top)
            within(f"{where} dma_ns", ln["dma_ns"], top)
            within(f"{where} exclusive_ns", ln["exclusive_ns"], ln["busy_ns"])
            within(f"{where} dma_overlap_ns", ln["dma_overlap_ns"], ln["busy_ns"])
            for name in ("share", "share_of_compute", "heat"):
                within(f"{where} {name}", ln[name], 1.0)
    return out


_HEADLINE = re.compile(r"^(Latency|DMA union|Engines|Perfect pipeline|DMA bytes|Instructions)")
# A number shown with a unit that is not finite or is negative (engine and file names may hold anything).
_BAD_TEXT = re.compile(r"(?<![\w.])(-\d[\d.,]*|nan|inf)\s?(ns|µs|ms|s|%|B|KiB|MiB|GiB|GB/s)(?!\w)", re.I)


def text_violations(text: str) -> list[str]:
    """Headline lines of a text report that show a non-number or a negative number."""
    return [ln for ln in text.splitlines() if _HEADLINE.match(ln) and _BAD_TEXT.search(ln)]


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """``nki-studio ARGS`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def outcome_problems(code: int, out: str, err: str, fmt: str = "json") -> list[str]:
    """Why one CLI run is not acceptable (empty when it is)."""
    problems = []
    if code not in (0, 2):
        problems.append(f"exit {code}")
    for stream, text in (("stderr", err), ("stdout", out)):
        # "internal check failed": the product's own invariant net caught a wrong number (a bug to fix here).
        if any(bug in text for bug in ("Traceback", "internal error", "internal check failed")):
            problems.append(f"{stream}: {text.strip()[:300]}")
    if code == 2 and not err.strip():
        problems.append("exit 2 without a message")
    if code == 0 and fmt == "json":
        try:
            problems += report_violations(_strict_json(out))
        except (AssertionError, ValueError) as exc:
            problems.append(f"report is not strict JSON: {exc}")
    if code == 0 and fmt == "text":
        problems += [f"text shows {ln!r}" for ln in text_violations(out)]
    return problems


# ---- inputs ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The kernel file and one clean profile of it in every format."""
    root = tmp_path_factory.mktemp("fuzz")
    kernel = root / "ws" / "fuzz_kernel.py"
    kernel.parent.mkdir()
    kernel.write_text(KERNEL, encoding="utf-8")
    tl = fixturegen.kernel_file_timeline(kernel, n_instructions=40, seed=5, iterations=True)
    base = root / "base"
    return {
        "kernel": kernel,
        "parquet": write_parquet(tl, base / "parquet"),
        "json": write_legacy_json(tl, base / "profile.json"),
        "summary-json": write_summary_json(tl, base / "summary.json"),
        "csv": write_csv(tl, base / "csv"),
        "pftrace": write_pftrace(tl, base / "profile.pftrace"),
    }


def _report(path: Path, kernel: Path, fmt: str = "json") -> tuple[int, list[str]]:
    """The exit code of ``profile report`` on ``path`` and what is wrong with the run."""
    code, out, err = run_cli(["profile", "report", str(path), "--source", str(kernel), "--format", fmt])
    return code, outcome_problems(code, out, err, fmt)


# Share of cases that must still give a report (exit 0): the invariants are only checked on those, so a
# mutator that broke every file would test refusals alone.
MIN_REPORTED = 0.15


def _flip_bytes(case: Case, data: bytes) -> bytes:
    b = bytearray(data)
    kind = case.rng.choice(("flip", "truncate", "insert", "duplicate", "zero"))
    case.note(f"bytes {kind}")
    if not b:
        return bytes(b)
    if kind == "flip":
        for _ in range(case.rng.randint(1, 8)):
            b[case.rng.randrange(len(b))] = case.rng.randrange(256)
    elif kind == "truncate":
        del b[case.rng.randrange(len(b)) :]
    elif kind == "insert":
        at = case.rng.randrange(len(b))
        b[at:at] = bytes(case.rng.randrange(256) for _ in range(case.rng.randint(1, 16)))
    elif kind == "duplicate":
        a = case.rng.randrange(len(b))
        n = case.rng.randint(1, 64)
        b[a:a] = b[a : a + n]
    else:
        a = case.rng.randrange(len(b))
        b[a : a + case.rng.randint(1, 32)] = bytes(min(32, len(b) - a))
    return bytes(b)


def _run_cases(fmt: str, make: Callable[[Case, Path], Path], kernel: Path, tmp: Path, n: int = CASES) -> None:
    failures = []
    reported = 0
    for i in range(n):
        case = Case(fmt, i)
        work = tmp / f"case{i % 2}"  # reuse two folders: no thousands of leftovers
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        path = make(case, work)
        code, problems = _report(path, kernel, "text" if i % 10 == 9 else "json")
        reported += code == 0
        if problems:
            failures.append(f"{case}: {problems[:3]}")
    assert not failures, f"{len(failures)} of {n} {fmt} cases failed:\n" + "\n".join(failures[:10])
    assert reported >= MIN_REPORTED * n, f"only {reported} of {n} {fmt} cases gave a report"


# ---- Parquet -----------------------------------------------------------------------------------------------


def _numeric_columns(t: pa.Table) -> list[str]:
    return [f.name for f in t.schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]


def _set_values(col: pa.ChunkedArray, rows: list[int], value: Any) -> pa.Array:
    values = col.to_pylist()
    for r in rows:
        values[r] = value
    if value is None:
        return pa.array(values, col.type)
    if isinstance(value, float) or (isinstance(value, int) and not -(2**63) <= value < 2**63):
        if isinstance(value, int) and 0 <= value < 2**64:
            return pa.array([None if v is None else int(v) for v in values], pa.uint64())
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array(values, pa.int64())


PARQUET_MUTATIONS = (
    *("value", "value", "plausible", "plausible", "plausible"),
    *("null", "swap", "type", "drop", "rows", "bytes", "delete", "location"),
)


def _picked_files(case: Case, base: Path, target: Path, pattern: str) -> Iterator[Path]:
    """``base`` copied to ``target``, then one to three of the copy's ``pattern`` files picked in turn, one for each
    mutation (fewer once mutations have deleted them all)."""
    shutil.copytree(base, target)
    for _ in range(case.rng.choice((1, 1, 2, 3))):
        files = sorted(target.glob(pattern))
        if not files:
            return
        yield case.rng.choice(files)


def _mutate_parquet(case: Case, base: Path, work: Path) -> Path:
    target = work / "parquet"
    for f in _picked_files(case, base, target, "*.parquet"):
        kind = case.rng.choice(PARQUET_MUTATIONS)
        if kind == "bytes":
            f.write_bytes(_flip_bytes(case, f.read_bytes()))
            case.note(f"in {f.name}")
            continue
        if kind == "delete":
            f.unlink()
            case.note(f"deleted {f.name}")
            continue
        try:
            t = pq.read_table(f)
        except (pa.ArrowException, OSError):
            continue  # corrupted by an earlier step
        if kind == "location":
            names = [c for c in ("nki_source_location", "file_path") if c in t.column_names]
            if not names or not t.num_rows:
                continue
            name = case.rng.choice(names)
            rows = case.rng.sample(range(t.num_rows), k=min(t.num_rows, case.rng.randint(1, 3)))
            value = case.rng.choice(HOSTILE_LOCATIONS)
            vals = t.column(name).to_pylist()
            for r in rows:
                vals[r] = value
            t = t.set_column(t.schema.get_field_index(name), name, pa.array(vals, pa.string()))
            case.note(f"{f.stem}.{name} rows {rows} = {value!r}")
        elif kind == "rows":
            how = case.rng.choice(("empty", "duplicate", "reverse"))
            t = (
                t.slice(0, 0)
                if how == "empty"
                else pa.concat_tables([t, t])
                if how == "duplicate"
                else t.take(list(range(t.num_rows - 1, -1, -1)))
            )
            case.note(f"{f.stem} rows {how}")
        else:
            cols = _numeric_columns(t)
            if not cols or not t.num_rows:
                continue
            name = case.rng.choice(cols)
            idx = t.schema.get_field_index(name)
            rows = case.rng.sample(
                range(t.num_rows), k=min(t.num_rows, case.rng.choice((1, 1, 2, t.num_rows)))
            )
            if kind == "value":
                value = case.rng.choice(HOSTILE_NUMBERS)
                t = t.set_column(idx, name, _set_values(t.column(name), rows, value))
                case.note(f"{f.stem}.{name} rows {rows[:3]} = {value}")
            elif kind == "plausible":
                old = t.column(name)[rows[0]].as_py()
                value = plausible_number(case, old)
                if pa.types.is_floating(t.column(name).type):
                    value = float(value)
                t = t.set_column(idx, name, _set_values(t.column(name), rows, value))
                case.note(f"{f.stem}.{name} rows {rows[:3]} = {value} (plausible)")
            elif kind == "null":
                t = t.set_column(idx, name, _set_values(t.column(name), rows, None))
                case.note(f"{f.stem}.{name} rows {rows[:3]} = null")
            elif kind == "swap" and {"start_ts", "end_ts"} <= set(t.column_names):
                s, e = t.column("start_ts"), t.column("end_ts")
                t = t.set_column(t.schema.get_field_index("start_ts"), "start_ts", e)
                t = t.set_column(t.schema.get_field_index("end_ts"), "end_ts", s)
                case.note(f"{f.stem} start/end swapped")
            elif kind == "type":
                t = t.set_column(
                    idx, name, pa.array([str(v) for v in t.column(name).to_pylist()], pa.string())
                )
                case.note(f"{f.stem}.{name} as strings")
            elif kind == "drop":
                t = t.remove_column(idx)
                case.note(f"{f.stem}.{name} dropped")
        pq.write_table(t, f)
    return target


def test_fuzzed_parquet_profiles(workspace: dict[str, Path], tmp_path: Path) -> None:
    _run_cases(
        "parquet",
        lambda c, w: _mutate_parquet(c, workspace["parquet"], w),
        workspace["kernel"],
        tmp_path,
        max(CASES // 2, 1),
    )


# ---- legacy JSON -------------------------------------------------------------------------------------------


def _json_targets(doc: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """(record, field) pairs a mutation may change."""
    out: list[tuple[dict[str, Any], str]] = []
    records: list[Any] = []
    for key in ("instruction", "dma", "summary"):
        if isinstance(doc.get(key), list):
            records += doc[key]
    records += [
        v for v in doc.values() if isinstance(v, dict)
    ]  # metadata; summary-json's {"n_<hash>": {...}}
    for rec in records:
        if isinstance(rec, dict):
            out += [(rec, f) for f in rec]
    return out


def _mutate_json(case: Case, bases: tuple[Path, Path], work: Path) -> Path:
    """A legacy JSON profile (or, one case in five, a summary-json file) with a few fields changed."""
    target = work / "profile.json"
    doc = json.loads(bases[case.rng.random() < 0.2].read_text(encoding="utf-8"))
    for _ in range(case.rng.choice((1, 1, 2, 4))):
        kind = case.rng.choice(
            ("value", "value", "plausible", "plausible", "plausible", "delete", "location", "key", "records")
        )
        targets = _json_targets(doc)
        if kind in ("value", "delete", "plausible") and targets:
            rec, name = case.rng.choice(targets)
            if kind == "delete":
                del rec[name]
                case.note(f"deleted {name}")
            elif kind == "plausible":
                rec[name] = plausible_number(case, rec[name])
                case.note(f"{name} = {rec[name]!r} (plausible)")
            else:
                rec[name] = case.rng.choice(HOSTILE_JSON)
                case.note(f"{name} = {rec[name]!r}")
        elif kind == "location" and isinstance(doc.get("instruction"), list) and doc["instruction"]:
            rec = case.rng.choice(doc["instruction"])
            if not isinstance(rec, dict):
                continue
            rec["nki_source_location"] = case.rng.choice(HOSTILE_LOCATIONS)
            case.note(f"location {rec['nki_source_location']!r}")
        elif kind == "key":
            key = case.rng.choice(("instruction", "dma", "summary", "metadata"))
            doc[key] = case.rng.choice(HOSTILE_JSON)
            case.note(f"{key} = {doc[key]!r}")
        elif kind == "records" and isinstance(doc.get("instruction"), list):
            doc["instruction"] = doc["instruction"][: case.rng.randrange(len(doc["instruction"]) + 1)]
            case.note(f"{len(doc['instruction'])} instructions kept")
    text = json.dumps(doc)  # NaN and Infinity as Python writes them: the reader's json accepts them
    if case.rng.random() < 0.2:
        text = _flip_bytes(case, text.encode()).decode("utf-8", "replace")
    target.write_text(text, encoding="utf-8")
    return target


def test_fuzzed_legacy_json_profiles(workspace: dict[str, Path], tmp_path: Path) -> None:
    _run_cases(
        "json",
        lambda c, w: _mutate_json(c, (workspace["json"], workspace["summary-json"]), w),
        workspace["kernel"],
        tmp_path,
    )


# ---- CSV export --------------------------------------------------------------------------------------------


def _mutate_csv(case: Case, base: Path, work: Path) -> Path:
    target = work / "csv"
    for f in _picked_files(case, base, target, "*.csv"):
        rows = f.read_bytes().decode("utf-8", "replace").splitlines()
        kind = case.rng.choice(("cell", "cell", "cell", "bytes", "header", "rows"))
        if kind == "bytes":
            f.write_bytes(_flip_bytes(case, f.read_bytes()))
            continue
        if kind == "header" and rows:
            cols = rows[0].split(",")
            cols[case.rng.randrange(len(cols))] = case.rng.choice(("", "start_ts", "x"))
            rows[0] = ",".join(cols)
            case.note(f"{f.name} header {rows[0]!r}")
        elif kind == "rows":
            rows = rows[: case.rng.randrange(len(rows) + 1)]
            case.note(f"{f.name} cut to {len(rows)} lines")
        elif len(rows) > 1:
            r = case.rng.randrange(1, len(rows))
            cells = rows[r].split(",")  # the writer quotes no cell of these tables
            c = case.rng.randrange(len(cells))
            plausible = cells[c].isdigit() and case.rng.random() < 0.5
            cells[c] = (
                str(plausible_number(case, int(cells[c]))) if plausible else case.rng.choice(HOSTILE_TEXT)
            )
            rows[r] = ",".join(cells)
            case.note(f"{f.name} row {r} cell {c} = {cells[c]!r}")
        f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return target


def test_fuzzed_csv_exports(workspace: dict[str, Path], tmp_path: Path) -> None:
    _run_cases("csv", lambda c, w: _mutate_csv(c, workspace["csv"], w), workspace["kernel"], tmp_path)


# ---- .pftrace ----------------------------------------------------------------------------------------------


def _hostile_timeline(case: Case, kernel: Path) -> fixturegen.Timeline:
    """A small timeline with hostile times, bytes or cores (values a writer can still encode)."""
    tl = fixturegen.kernel_file_timeline(kernel, n_instructions=12, seed=case.seed, iterations=False)
    arrays = {
        "start": tl.start,
        "end": tl.end,
        "dma_start": tl.dma_start,
        "dma_end": tl.dma_end,
        "dma_bytes": tl.dma_bytes,
        "pcore": tl.pcore,
    }
    name = case.rng.choice(sorted(arrays))
    arr = arrays[name]
    if arr.size:
        # Trace timestamps are unsigned varints: no negatives (the fixture writer cannot place them either).
        value = case.rng.choice([2**64 - 1, 2**63 - 1, 2**62, 2**62 - 1, 2**40, 0, 1, 10**15])
        rows = case.rng.sample(range(arr.size), k=min(arr.size, case.rng.randint(1, 3)))
        arr[rows] = value
        case.note(f"timeline {name} rows {rows} = {value}")
    return tl


def _mutate_pftrace(case: Case, base: Path, kernel: Path, work: Path) -> Path:
    target = work / "profile.pftrace"
    if case.rng.random() < 0.3:
        try:
            write_pftrace(_hostile_timeline(case, kernel), target)
            return target
        except (ValueError, OverflowError):  # the writer cannot encode it: corrupt the clean trace instead
            case.note("unencodable; bytes instead")
    data = base.read_bytes()
    for _ in range(case.rng.choice((1, 1, 2))):
        data = _flip_bytes(case, data)
    target.write_bytes(data)
    return target


def test_fuzzed_pftrace_files(workspace: dict[str, Path], tmp_path: Path) -> None:
    kernel = workspace["kernel"]
    _run_cases("pftrace", lambda c, w: _mutate_pftrace(c, workspace["pftrace"], kernel, w), kernel, tmp_path)


# ---- type-confused columns ---------------------------------------------------------------------------------

# What a corrupt or hand-edited file puts in a numeric column: a float NaN or infinity where an integer belongs (the
# column then turns float64), a negative count or duration, a fraction, a number written as a string.
TYPE_CONFUSIONS: dict[str, Any] = {
    "float NaN": math.nan,
    "infinity": math.inf,
    "negative": -7,
    "negative fraction": -2.5,
    "fraction": 0.5,
    "string": "12",
}
# One-row tables hold ~100 numeric fields: a fixed sample of them (every field of the multi-row tables is taken).
ONE_ROW_SAMPLE = 12


def _confused_columns(base: Path) -> list[tuple[str, str]]:
    """(table, column) for every numeric column the readers read (``readers.tables.COLUMNS``), one-row tables
    sampled."""
    rng = random.Random(SEED)
    out = []
    for f in sorted(base.glob("*.parquet")):
        schema = pq.read_schema(f)
        read = COLUMNS.get(f.stem)
        if read is None:
            continue  # a table no reader opens
        numeric = [
            field.name
            for field in schema
            if (pa.types.is_integer(field.type) or pa.types.is_floating(field.type))
            and (not read or field.name in read)
        ]
        if not read:  # () reads every column: Summary, Metadata
            numeric = sorted(rng.sample(numeric, min(ONE_ROW_SAMPLE, len(numeric))))
        out += [(f.stem, name) for name in numeric]
    return out


def _confused(col: pa.ChunkedArray, value: Any) -> pa.Array:
    """``col`` with its first row set to ``value``, typed as a writer would type the mixed column."""
    values = col.to_pylist()
    values[0] = value
    if isinstance(value, str):
        return pa.array([None if v is None else str(v) for v in values], pa.string())
    if isinstance(value, float):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array(values, pa.int64())


def test_type_confused_parquet_columns(workspace: dict[str, Path], tmp_path: Path) -> None:
    """Every numeric column the readers read, given each confusion in its first row: a refusal naming it (exit 2)
    or a report whose numbers are all finite and in range — never ``nan``, a negative figure or a wrong number."""
    base, kernel = workspace["parquet"], workspace["kernel"]
    failures = []
    columns = _confused_columns(base)
    for table, name in columns:
        t = pq.read_table(base / f"{table}.parquet")
        if not t.num_rows:
            continue
        for i, (label, value) in enumerate(TYPE_CONFUSIONS.items()):
            work = tmp_path / "case"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(base, work)
            confused = t.set_column(t.schema.get_field_index(name), name, _confused(t.column(name), value))
            pq.write_table(confused, work / f"{table}.parquet")
            with warnings.catch_warnings():
                # NumPy warns when a NaN or infinity is cast to an integer: the garbage integer is a wrong number.
                warnings.simplefilter("error", RuntimeWarning)
                code, problems = _report(work, kernel, "text" if i % 3 == 2 else "json")
            if problems:
                failures.append(f"{table}.{name} = {label}: exit {code}, {problems[:2]}")
    assert len(columns) > 30
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures[:10])


# ---- real processes ----------------------------------------------------------------------------------------


def test_fuzzed_profiles_in_real_processes(workspace: dict[str, Path], tmp_path: Path) -> None:
    """A few cases per format through the installed console script: the exit code, stderr and report of a real
    process (interpreter start-up, stdout encoding, the final flush) follow the same rules."""
    exe = Path(sys.executable).with_name("nki-studio")
    makers: dict[str, Callable[[Case, Path], Path]] = {
        "parquet": lambda c, w: _mutate_parquet(c, workspace["parquet"], w),
        "json": lambda c, w: _mutate_json(c, (workspace["json"], workspace["summary-json"]), w),
        "csv": lambda c, w: _mutate_csv(c, workspace["csv"], w),
        "pftrace": lambda c, w: _mutate_pftrace(c, workspace["pftrace"], workspace["kernel"], w),
    }
    failures = []
    for fmt, make in makers.items():
        for i in range(2):
            case = Case(fmt, 10_000 + i)
            work = tmp_path / f"{fmt}{i}"
            work.mkdir()
            path = make(case, work)
            cmd = [
                str(exe),
                "profile",
                "report",
                str(path),
                "--source",
                str(workspace["kernel"]),
                "--format",
                "json",
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            problems = outcome_problems(proc.returncode, proc.stdout, proc.stderr)
            if problems:
                failures.append(f"{fmt} {case}: {problems[:3]}")
    assert not failures, "\n".join(failures)


def test_the_oracle_catches_what_it_must(workspace: dict[str, Path]) -> None:
    """The invariant checks above can fail: a clean report passes, doctored ones do not."""
    code, out, err = run_cli(
        [
            "profile",
            "report",
            str(workspace["parquet"]),
            "--source",
            str(workspace["kernel"]),
            "--format",
            "json",
        ]
    )
    assert code == 0 and outcome_problems(code, out, err) == []
    doc = json.loads(out)
    assert doc["files"] and doc["files"][0]["lines"]
    bad = json.loads(out)
    bad["kernel"]["idle_ns"] = -5
    assert report_violations(bad)
    bad = json.loads(out)
    bad["files"][0]["lines"][0]["share"] = 1.5
    assert report_violations(bad)
    bad = json.loads(out)
    bad["kernel"]["compute_union_ns"] = bad["kernel"]["latency_ns"] + 1
    assert report_violations(bad)
    assert outcome_problems(0, out.replace('"latency_ns": ', '"latency_ns": NaN, "x": ', 1), "")
    assert outcome_problems(2, "", "nki-studio: internal error: OverflowError")
    assert outcome_problems(2, "", "nki-studio profile: internal check failed: kernel.idle_ns = -1")
    assert text_violations("Latency: nan ns\nDMA union -5 ns") == ["Latency: nan ns", "DMA union -5 ns"]
    assert text_violations("Engines (busy union): -1 1.9 µs (6.1%), inf 2 ns (1.0%)") == []
    assert np.isfinite(doc["kernel"]["latency_ns"])
