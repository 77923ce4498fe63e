"""Format auto-detection and the single entry point ``load_profile``."""

from __future__ import annotations

from pathlib import Path

from nki_studio.profile.model import Profile, ProfileError, assign_executions, sort_by_start
from nki_studio.profile.validate import validated

FORMATS = ("parquet", "csv", "legacy-json", "summary-json", "perfetto")


def refuse_special(p: Path) -> None:
    """Raise ProfileError unless ``p`` is a regular file or a directory: opening a FIFO named ``*.json``
    would block forever, a device would be read without end."""
    if not p.exists():
        raise ProfileError(f"{p}: no such file or directory")
    if not (p.is_file() or p.is_dir()):
        raise ProfileError(f"{p}: not a regular file or directory (a FIFO, device or socket); not a profile")


def detect_format(path: str | Path) -> str:
    """Which reader handles ``path``: by directory contents, file extension, then the first bytes."""
    p = Path(path)
    refuse_special(p)
    if p.is_dir():
        if any(p.glob("*.parquet")) or any(p.glob("profiles/global/*/*.parquet")):
            return "parquet"
        from nki_studio.profile.readers.csvfmt import is_csv_dir  # pyarrow.csv: imported only when needed

        if is_csv_dir(p):
            return "csv"
        raise ProfileError(
            f"{p}: a directory without Neuron profile tables (*.parquet or an exported Instruction.csv). Produce "
            "one with `neuron-explorer view -n K.neff -s K.ntff --data-path WS --display-name NAME --ingest-only`."
        )
    if p.suffix in (".pftrace", ".perfetto-trace", ".pb") or p.name.endswith(".pftrace.gz"):
        return "perfetto"
    if p.suffix == ".parquet":
        return "parquet"
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise ProfileError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if not head:
        raise ProfileError(f"{p}: the file is empty")
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.decode("utf-8", "replace")
    if "{" in text:
        return "json"  # legacy full profile or summary-json: decided on the parsed document
    if head[:1] == b"\x0a":
        return "perfetto"
    raise ProfileError(
        f"{p}: not a recognised Neuron profile (expected a Parquet directory, JSON or .pftrace)"
    )


def load_profile(path: str | Path, fmt: str | None = None, *, ignore_schema_version: bool = False) -> Profile:
    """Read any supported profile (``fmt`` forces a reader, else it is detected), rows ordered by start and
    tagged with their execution. Every number is checked first (``validate``): a ProfileError names what is
    out of range."""
    return assign_executions(sort_by_start(validated(_read(Path(path), fmt, ignore_schema_version))))


def _read(p: Path, fmt: str | None, ignore_schema_version: bool) -> Profile:
    refuse_special(p)  # also when ``fmt`` skips detection
    kind = fmt or detect_format(p)
    if kind == "parquet":
        from nki_studio.profile.readers.parquet import read_parquet_dir

        return read_parquet_dir(p.parent if p.is_file() else p, ignore_schema_version=ignore_schema_version)
    if kind == "csv":
        from nki_studio.profile.readers.csvfmt import read_csv_dir

        return read_csv_dir(p)
    if kind in ("json", "legacy-json"):
        from nki_studio.profile.readers.jsonfmt import read_legacy_json

        return read_legacy_json(p)  # falls through to summary-json when the document is one
    if kind == "summary-json":
        from nki_studio.profile.readers.jsonfmt import read_summary_json

        return read_summary_json(p)
    if kind == "perfetto":
        from nki_studio.profile.readers.perfetto import read_pftrace

        return read_pftrace(p)
    raise ProfileError(f"unknown profile format {kind!r}; expected one of {', '.join(FORMATS)}")


# Rough peak bytes per unit while loading and measuring (measured with benchmarks/profile_bench.py: ~240 MB peak
# RSS, interpreter included, for a 1M-row Parquet profile; ~660 MB for a 45 MB / 1M-slice .pftrace); used only to
# refuse loads that cannot fit, so rounded up.
_BYTES_PER_PARQUET_ROW = 300
_PFTRACE_FACTOR = 16
_TEXT_FACTOR = 4


def memory_estimate(path: str | Path, fmt: str | None = None) -> int:
    """Approximate peak memory (bytes) that loading and measuring ``path`` takes; 0 when unknown."""
    p = Path(path)
    try:
        kind = fmt or detect_format(p)
        if kind == "parquet":
            import pyarrow.parquet as pq
            from nki_studio.profile.readers.parquet import resolve_dir, table_files

            files = table_files(resolve_dir(p.parent if p.is_file() else p))
            rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files.get("Instruction", []))
            return rows * _BYTES_PER_PARQUET_ROW
        size = sum(f.stat().st_size for f in p.iterdir()) if p.is_dir() else p.stat().st_size
        return size * (_PFTRACE_FACTOR if kind == "perfetto" else _TEXT_FACTOR)
    except (ProfileError, OSError, ValueError):
        return 0  # the reader itself will report what is wrong


def available_memory() -> int | None:
    """``MemAvailable`` from /proc/meminfo in bytes (None where there is no such file)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def memory_refusal(need: int, available: int | None, share: float = 0.7) -> str | None:
    """Why a load that needs ``need`` bytes must not run with ``available`` bytes free; None when it may."""
    if available is None or need <= share * available:
        return None
    return (
        f"loading this profile would take about {need / 2**30:.1f} GiB of memory but only "
        f"{available / 2**30:.1f} GiB is available; the language server refuses rather than risk being killed. "
        "Run `nki-studio profile report` in a terminal (its own process), or export a smaller range."
    )
