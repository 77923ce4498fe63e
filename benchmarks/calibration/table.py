"""The measurement table (measurements.toml): read, check and expose it as typed records.

Every record is checked when the table is read, so a missing source, generation, quantity or value, a unit that
does not fit its quantity, or a pair naming an unknown point fails loudly here (and in
tests/calibration/test_measurements.py) rather than as a wrong figure in the benchmark.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TABLE = Path(__file__).with_name("measurements.toml")
ROOT = Path(__file__).resolve().parents[2]

GENERATIONS = ("trn1", "trn2")
# quantity -> its unit in the table
QUANTITIES = {
    "latency": "us",  # kernel execution time
    "active_time": "us",  # time one engine (``engine``) was busy
    "dma_busy": "us",  # union of DMA activity
    "compute_busy": "us",  # union of compute-engine activity
    "overlap": "us",  # time DMA and compute were busy together
    "dma_bytes": "bytes",  # bytes moved by DMA (HBM traffic)
}
ENGINES = ("Tensor", "Vector", "Scalar", "GpSimd")
# published: the measured kernel itself, fetched and run unmodified (published.py); after-description: written
# after a published description
ORIGINS = ("published", "after-description")


class TableError(ValueError):
    """The table breaks one of its rules; the message names the record."""


@dataclass(frozen=True)
class Source:
    """Where numbers were read: a repository file at a commit, a docs page at a Neuron version, or a document."""

    name: str
    repo: str | None
    commit: str | None
    path: str | None
    url: str | None
    neuron: str | None
    document: str | None
    note: str | None

    def cite(self) -> str:
        """One-line citation."""
        if self.document:
            return self.document
        where = f"{self.repo}@{self.commit}:{self.path}"
        return f"{where} (Neuron {self.neuron})" if self.neuron else where


@dataclass(frozen=True)
class Kernel:
    """A kernel that reproduces measured points, and the shapes to run it at."""

    id: str
    file: str | None  # None for a published kernel (its ``original`` is fetched)
    name: str
    origin: str
    original: dict[str, str]
    reference: dict[str, str] | None
    shape: dict[str, int]
    quick: dict[str, int]
    scale_dim: str
    # the cases.py builder of its inputs and NumPy reference (unused with a fetched ``reference``)
    inputs: str

    @property
    def path(self) -> Path | None:
        """The kernel file in this repository (None for a published kernel)."""
        return None if self.file is None else ROOT / self.file


@dataclass(frozen=True)
class Point:
    """One measured quantity of one workload on one generation."""

    id: str
    workload: str
    kernel: str | None
    source: str
    locator: str
    generation: str
    shape: dict[str, int]
    dtype: str
    quantity: str
    engine: str | None
    value: float
    unit: str
    raw: str | None


@dataclass(frozen=True)
class Pair:
    """A published before/after optimisation step (two latency points)."""

    id: str
    step: str
    before: str
    after: str


@dataclass(frozen=True)
class Constant:
    """A documented hardware constant."""

    name: str
    generation: str
    value: float
    unit: str
    source: str
    note: str | None


@dataclass(frozen=True)
class Table:
    """The whole measurement table."""

    sources: dict[str, Source]
    kernels: dict[str, Kernel]
    points: list[Point]
    pairs: list[Pair]
    constants: list[Constant]

    def point(self, point_id: str) -> Point:
        """The point with this id."""
        return next(p for p in self.points if p.id == point_id)


def _require(record: dict[str, Any], keys: tuple[str, ...], what: str) -> None:
    missing = [k for k in keys if record.get(k) in (None, "")]
    if missing:
        raise TableError(f"{what}: missing {', '.join(missing)}")


def _source(name: str, raw: dict[str, Any]) -> Source:
    what = f"source.{name}"
    if not (raw.get("document") or (raw.get("repo") and raw.get("commit") and raw.get("path"))):
        raise TableError(f"{what}: needs repo + commit + path, or document")
    return Source(
        name,
        raw.get("repo"),
        raw.get("commit"),
        raw.get("path"),
        raw.get("url"),
        raw.get("neuron"),
        raw.get("document"),
        raw.get("note"),
    )


def _kernel(kid: str, raw: dict[str, Any], sources: dict[str, Source]) -> Kernel:
    what = f"kernel.{kid}"
    _require(raw, ("name", "origin", "original", "shape", "quick", "scale_dim"), what)
    if raw["origin"] not in ORIGINS:
        raise TableError(f"{what}: origin {raw['origin']!r} is not one of {ORIGINS}")
    if raw["origin"] == "published":
        # fetched and run as measured, at the measured shape only (a fetched reference module fixes the inputs;
        # without one, its cases.py builder builds them at that shape)
        if raw.get("file") or raw["quick"] != raw["shape"]:
            raise TableError(f"{what}: a published kernel has no file, and quick == shape")
    elif not raw.get("file"):
        raise TableError(f"{what}: missing file")
    for ref in (raw["original"], raw.get("reference") or {}):
        if ref and ref.get("source") not in sources:
            raise TableError(f"{what}: unknown source {ref.get('source')!r}")
    if set(raw["shape"]) != set(raw["quick"]) or raw["scale_dim"] not in raw["shape"]:
        raise TableError(f"{what}: shape, quick and scale_dim must name the same dimensions")
    return Kernel(
        kid,
        raw.get("file"),
        raw["name"],
        raw["origin"],
        raw["original"],
        raw.get("reference"),
        raw["shape"],
        raw["quick"],
        raw["scale_dim"],
        raw.get("inputs", kid),
    )


def _point(raw: dict[str, Any], sources: dict[str, Source], kernels: dict[str, Kernel]) -> Point:
    what = f"point {raw.get('id', '?')}"
    _require(
        raw, ("id", "workload", "source", "locator", "generation", "shape", "dtype", "quantity", "unit"), what
    )
    if not isinstance(raw.get("value"), (int, float)):
        raise TableError(f"{what}: value must be a number")
    if raw["source"] not in sources:
        raise TableError(f"{what}: unknown source {raw['source']!r}")
    if raw["generation"] not in GENERATIONS:
        raise TableError(f"{what}: generation {raw['generation']!r} is not one of {GENERATIONS}")
    if QUANTITIES.get(raw["quantity"]) != raw["unit"]:
        raise TableError(f"{what}: quantity {raw['quantity']!r} with unit {raw['unit']!r}")
    if (raw["quantity"] == "active_time") != (raw.get("engine") in ENGINES):
        raise TableError(f"{what}: an active_time names one engine of {ENGINES}, other quantities none")
    kernel = raw.get("kernel")
    if kernel is not None and kernel not in kernels:
        raise TableError(f"{what}: unknown kernel {kernel!r}")
    return Point(
        raw["id"],
        raw["workload"],
        kernel,
        raw["source"],
        raw["locator"],
        raw["generation"],
        raw["shape"],
        raw["dtype"],
        raw["quantity"],
        raw.get("engine"),
        float(raw["value"]),
        raw["unit"],
        raw.get("raw"),
    )


def _pair(raw: dict[str, Any], points: dict[str, Point]) -> Pair:
    what = f"pair {raw.get('id', '?')}"
    _require(raw, ("id", "step", "before", "after"), what)
    for end in (raw["before"], raw["after"]):
        if end not in points or points[end].quantity != "latency":
            raise TableError(f"{what}: {end!r} is not a latency point")
    if points[raw["before"]].generation != points[raw["after"]].generation:
        raise TableError(f"{what}: before and after on different generations")
    return Pair(raw["id"], raw["step"], raw["before"], raw["after"])


def _constant(raw: dict[str, Any], sources: dict[str, Source]) -> Constant:
    what = f"constant {raw.get('name', '?')}"
    _require(raw, ("name", "generation", "unit", "source"), what)
    if not isinstance(raw.get("value"), (int, float)):
        raise TableError(f"{what}: value must be a number")
    if raw["generation"] not in (*GENERATIONS, "all"):
        raise TableError(f"{what}: generation {raw['generation']!r}")
    if raw["source"] not in sources:
        raise TableError(f"{what}: unknown source {raw['source']!r}")
    return Constant(
        raw["name"], raw["generation"], float(raw["value"]), raw["unit"], raw["source"], raw.get("note")
    )


def load(path: Path = TABLE) -> Table:
    """Read and check the table at ``path``; raises :class:`TableError` naming the first broken record."""
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    sources = {name: _source(name, raw) for name, raw in data.get("source", {}).items()}
    kernels = {kid: _kernel(kid, raw, sources) for kid, raw in data.get("kernel", {}).items()}
    points = [_point(raw, sources, kernels) for raw in data.get("point", [])]
    by_id = {p.id: p for p in points}
    if len(by_id) != len(points):
        raise TableError("point ids must be unique")
    for kid in kernels:
        generations = {p.generation for p in points if p.kernel == kid}
        if len(generations) > 1:
            raise TableError(f"kernel.{kid}: points on several generations {sorted(generations)}")
    pairs = [_pair(raw, by_id) for raw in data.get("pair", [])]
    constants = [_constant(raw, sources) for raw in data.get("constant", [])]
    return Table(sources, kernels, points, pairs, constants)
