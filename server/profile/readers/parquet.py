"""Reader for Neuron Explorer's Parquet output directory (the default, recommended format).

``<data-path>/profiles/global/<name>@latest/<Table>.parquet`` — big tables split as ``<Table>_0.parquet``,
``_1`` …; a table exists only when the profile has that kind of data (parquet-schema.md §1). Only the
columns the metrics need are read; strings come back dictionary-encoded so each distinct value is handled once.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from nki_studio.profile.model import Profile, ProfileError
from nki_studio.profile.readers.tables import COLUMNS, first_row, profile_from_tables
from nki_studio.profile.schema import check_schema_version

_SPLIT = re.compile(r"^(?P<table>[A-Za-z]+)(?:_(?P<part>\d+))?\.parquet$")


def resolve_dir(path: Path) -> Path:
    """The directory holding the tables: ``path`` itself, or the single ``profiles/global/*@latest`` in it."""
    if any(path.glob("*.parquet")):
        return path
    found = sorted(p for p in path.glob("profiles/global/*") if p.is_dir() and any(p.glob("*.parquet")))
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise ProfileError(
            f"{path} holds several processed profiles ({names}); open one of those directories"
        )
    raise ProfileError(f"{path} contains no .parquet files")


def table_files(directory: Path) -> dict[str, list[Path]]:
    """``{table: [files in part order]}`` for every ``<Table>[_N].parquet`` in the directory."""
    parts: dict[str, list[tuple[int, Path]]] = {}
    for f in directory.iterdir():
        m = _SPLIT.match(f.name)
        if m:
            parts.setdefault(m.group("table"), []).append((int(m.group("part") or -1), f))
    return {t: [f for _, f in sorted(v)] for t, v in parts.items()}


# Optional Instruction string columns that are often entirely null (no debug info, no KernelInstructions):
# when the file's statistics say so they are not read at all, which is the same as the column being absent.
_SKIP_WHEN_NULL = frozenset(
    {"kernel_instruction_name", "nki_source_location", "bir_debug_info_source_location"}
)


# String columns with about one distinct value per row: dictionary-encoding them costs more than it saves.
_PLAIN_STRINGS = frozenset({"operands"})


def _all_null(pf: pq.ParquetFile, name: str, schema: pa.Schema) -> bool:
    """True when every row group's statistics record only nulls for column ``name`` (``schema``: the file's)."""
    md = pf.metadata
    j = schema.get_field_index(name)
    if md.num_rows == 0 or md.num_columns != len(schema) or j < 0:
        return False  # nested schema: column positions do not match, read it
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        stats = rg.column(j).statistics
        if stats is None or not stats.has_null_count or stats.null_count != rg.num_rows:
            return False
    return True


def _unreadable(f: Path, exc: Exception) -> ProfileError:
    return ProfileError(
        f"{f.name}: not a readable Parquet file ({exc}). The file is truncated or corrupt; re-run "
        "`neuron-explorer view ... --ingest-only` or copy the directory again."
    )


class ColumnSource:
    """One table (all its ``<Table>_N.parquet`` parts) read a column at a time, on demand.

    It answers ``column_names``, ``num_rows`` and ``column(name)`` like a ``pyarrow.Table``, but Arrow holds only
    the column being converted, never the whole table next to its NumPy copies: a million-row profile's peak
    memory (and, in a fresh process, the cost of touching that memory the first time) drops by the table size.
    Each column is read once by the code that converts it.
    """

    def __init__(self, files: list[Path], table: str, columns: tuple[str, ...]) -> None:
        self.table = table
        self._parts: list[tuple[Path, pq.ParquetFile, frozenset[str]]] = []  # file, reader, its column names
        names: list[str] = []
        for f in files:
            try:
                schema = pq.ParquetFile(f).schema_arrow
                present = schema.names
                cols = [c for c in columns if c in present] if columns else present
                strings = [
                    c for c in cols if pa.types.is_string(schema.field(c).type) and c not in _PLAIN_STRINGS
                ]
                # ParquetFile, not pq.read_table: the latter goes through pyarrow.dataset, whose import pulls
                # pyarrow.compute (~0.1 s) into a fresh process.
                pf = pq.ParquetFile(f, read_dictionary=strings)
                cols = [c for c in cols if c not in _SKIP_WHEN_NULL or not _all_null(pf, c, schema)]
            except (pa.ArrowException, OSError) as exc:
                raise _unreadable(f, exc) from exc
            # ParquetFile.schema_arrow converts the whole schema on every access: keep the names once.
            self._parts.append((f, pf, frozenset(present)))
            names += [c for c in cols if c not in names]
        self.column_names = names
        self.num_rows = sum(pf.metadata.num_rows for _, pf, _ in self._parts)

    def column(self, name: str) -> pa.ChunkedArray:
        """Column ``name`` over all parts (parts without it contribute nulls)."""
        pieces = []
        for f, pf, present in self._parts:
            try:
                if name in present:
                    pieces.append(pf.read(columns=[name]))
                else:
                    pieces.append(pa.table({name: pa.nulls(pf.metadata.num_rows)}))
            except (pa.ArrowException, OSError) as exc:
                raise _unreadable(f, exc) from exc
        if len(pieces) == 1:
            return pieces[0].column(0)
        try:
            return pa.concat_tables(pieces, promote_options="permissive").column(0)
        except pa.ArrowException as exc:
            raise ProfileError(f"the parts of table {self.table} have incompatible columns: {exc}") from exc

    def read_all(self) -> pa.Table:
        """Every selected column as one table, in one read per part (for the one-row tables: Summary, Metadata)."""
        pieces = []
        for f, pf, present in self._parts:
            try:
                pieces.append(pf.read(columns=[c for c in self.column_names if c in present]))
            except (pa.ArrowException, OSError) as exc:
                raise _unreadable(f, exc) from exc
        if len(pieces) == 1:
            return pieces[0]
        try:
            return pa.concat_tables(pieces, promote_options="permissive")
        except pa.ArrowException as exc:
            raise ProfileError(f"the parts of table {self.table} have incompatible columns: {exc}") from exc


def read_parquet_dir(path: str | Path, *, ignore_schema_version: bool = False) -> Profile:
    """Read a Parquet profile directory into the normalised model."""
    root = resolve_dir(Path(path))
    files = table_files(root)
    notes: list[str] = []
    tables = {}
    if "Metadata" in files:
        tables["Metadata"] = ColumnSource(files["Metadata"], "Metadata", ()).read_all()
        version = str(first_row(tables["Metadata"]).get("profile_schema_version") or "")
        problem = check_schema_version(version) if version else None
        if problem and not ignore_schema_version:
            raise ProfileError(problem)
        if problem:
            notes.append(f"schema check skipped on request: {problem}")
        if not version:
            notes.append("Metadata.profile_schema_version is missing; reading by column names")
    else:
        notes.append("no Metadata table: schema version unknown, reading by column names")
    if "Instruction" not in files and "Summary" not in files:
        present = ", ".join(sorted(files)) or "none"
        raise ProfileError(
            f"{root}: no Instruction or Summary table (tables present: {present}). This directory is not a "
            "processed Neuron Explorer profile, or processing stopped early."
        )
    for table, cols in COLUMNS.items():
        if table in files and table != "Metadata":
            if table == "Instruction" and "Flow" not in files:
                cols = tuple(c for c in cols if c != "id")  # Instruction.id only serves the Flow join
            source = ColumnSource(files[table], table, cols)
            tables[table] = source if cols else source.read_all()
    profile = profile_from_tables(tables, str(root), "parquet", notes)
    del tables
    # Arrow's allocator keeps freed read buffers for reuse by Arrow; NumPy (the metrics) cannot use them, so
    # hand them back now rather than adding them to the peak.
    pa.default_memory_pool().release_unused()
    return profile
