"""Build the normalised ``Profile`` from Arrow tables named and shaped like Neuron Explorer's Parquet tables.

The Parquet, CSV-export and legacy-JSON readers all end here, so a row means the same thing whatever file it
came from. Every table is optional except ``Instruction`` (or ``Summary`` for a summary-only profile);
columns are found by name and cast, extra columns are ignored (parquet-schema.md §1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from nki_studio.profile.intervals import dense_ids
from nki_studio.profile.model import (
    Codes,
    DmaTransfers,
    Execution,
    Locations,
    Profile,
    ProfileError,
    empty_codes,
    make_instructions,
    no_dma,
    no_instructions,
    no_locations,
)
from nki_studio.profile.readers.common import (
    codes_of,
    concat_locations,
    expand_locations,
    filled_numpy,
    null_mask,
    parsed_values,
)
from nki_studio.profile.readers.detail_columns import (
    DMA_COLUMNS,
    INSTRUCTION_COLUMNS,
    TENSOR_INFO_COLUMNS,
    dma_details,
    instruction_details,
    tensor_roles,
)
from nki_studio.profile.validate import clean_scalars, int_values

I64 = npt.NDArray[np.int64]


class TableLike(Protocol):
    """What the builders need of a table: a ``pyarrow.Table``, or the Parquet reader's column-at-a-time source."""

    @property
    def column_names(self) -> list[str]: ...

    @property
    def num_rows(self) -> int: ...

    def column(self, name: str) -> pa.ChunkedArray: ...


# Columns each table contributes (projection list for readers that can project).
COLUMNS: dict[str, tuple[str, ...]] = {
    "Instruction": (  # timeline_track (the UI row) is not needed: engines come from ``engine``
        "start_ts",
        "end_ts",
        "engine",
        "opcode",
        "pcore_idx",
        "id",
        "kernel_instruction_name",
        "nki_source_location",
        "bir_debug_info_source_location",
        *INSTRUCTION_COLUMNS,
    ),
    "KernelInstructions": (
        "kernel_instruction_name",
        "pcore_idx",
        "file_path",
        "line_number",
        "iteration_variables_id",
    ),
    "KernelIterationVariables": (
        "iteration_variable_id",
        "variable_name",
        "variable_value",
        "parent_iteration_variable_id",
    ),
    "DmaPacketAggregated": (
        "start_ts",
        "end_ts",
        "id",
        "pcore_idx",
        "queue_name",
        "queue_type",
        "variable",
        "transfer_bytes",
        *DMA_COLUMNS,
    ),
    "DmaPacket": ("start_ts", "end_ts", "pcore_idx", "packet_aggregation_id", "transfer_bytes", "queue_name"),
    "Flow": ("in_id", "out_id", "in_table", "out_table"),
    "ExecutionInfo": ("execution_index", "execution_start_ts", "execution_end_ts"),
    "Summary": (),  # all columns
    "Metadata": (),
    "Warning": ("message", "category"),
    "TensorInfo": TENSOR_INFO_COLUMNS,
}


def int_column(
    table: TableLike,
    tname: str,
    name: str,
    default: int | None = None,
    dtype: type[np.signedinteger[Any]] = np.int64,
) -> npt.NDArray[Any]:
    """An integer column as ``dtype`` (nulls → ``default``; a column without default is required) after the
    checks of ``nki_studio.profile.validate``; a clear error when it is not numeric or a value is unusable."""
    if name not in table.column_names:
        if default is None:
            raise ProfileError(f"{tname} has no column {name!r}, which is required")
        return np.full(table.num_rows, default, dtype)
    col = table.column(name)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type)):
        shown = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
        raise ProfileError(f"{tname}.{name} has type {shown}, expected an integer column (int64)")
    if pa.types.is_null(col.type):
        if default is None and table.num_rows:
            raise ProfileError(f"{tname}.{name}: every row is empty (null) in a required column")
        return np.full(table.num_rows, default if default is not None else 0, dtype)
    fill = default if default is not None else 0
    wide = (
        np.float64
        if pa.types.is_floating(col.type)
        else np.uint64
        if pa.types.is_unsigned_integer(col.type)
        else np.int64
    )
    values = filled_numpy(col, fill, wide)
    null = null_mask(col) if col.null_count else None  # rare: computed only when there are nulls
    return int_values(values, tname, name, dtype, null, required=default is None)


def str_codes(table: TableLike, tname: str, name: str) -> Codes:
    """A string column as Codes; all-missing when absent; error when it holds non-string data."""
    if name not in table.column_names:
        return empty_codes(table.num_rows)
    col = table.column(name)
    base = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    if not (pa.types.is_string(base) or pa.types.is_large_string(base) or pa.types.is_null(base)):
        raise ProfileError(f"{tname}.{name} has type {base}, expected a string column")
    if pa.types.is_null(base):
        return empty_codes(table.num_rows)
    return codes_of(col)


def first_row(table: pa.Table | None) -> dict[str, Any]:
    """The first row of a one-row table (Summary, Metadata) as a dict."""
    if table is None or table.num_rows == 0:
        return {}
    row = table.slice(0, 1)
    out = {}
    for f in row.schema:
        value = row.column(f.name)[0].as_py()
        # float32 columns (Summary times, bandwidths) come back as e.g. 434.999984e9: keep 7 significant digits.
        if pa.types.is_float32(f.type) and isinstance(value, float):
            value = float(f"{value:.7g}")
        out[f.name] = value
    return out


def profile_from_tables(tables: Mapping[str, TableLike], path: str, fmt: str, notes: list[str]) -> Profile:
    """Assemble a Profile from whichever tables exist."""
    for tname, table in tables.items():
        names = list(table.column_names)
        twice = sorted({c for c in names if names.count(c) > 1})
        if twice:
            raise ProfileError(
                f"{tname} has the column {twice[0]!r} more than once; which one holds the data is unknown"
            )
    # Cleaned here already (``validated`` runs after every reader): the DMA cross-check below reads the Summary.
    summary, s_notes = clean_scalars("Summary", first_row(tables.get("Summary")))
    metadata, m_notes = clean_scalars("Metadata", first_row(tables.get("Metadata")))
    notes = [*notes, *s_notes, *m_notes]
    inst_t = tables.get("Instruction")
    if inst_t is None or inst_t.num_rows == 0:
        if not summary:
            raise ProfileError(
                f"{path}: the profile holds no instructions and no Summary — it is empty. Re-run "
                "`neuron-explorer view ... --ingest-only` on a capture that executed the kernel."
            )
        notes = [*notes, "summary only: no Instruction rows, so there is no per-line heat"]
        return Profile(
            path, fmt, no_instructions(), no_locations(), no_dma(), summary, metadata, [], "", notes
        )

    t = inst_t
    start = int_column(t, "Instruction", "start_ts")
    end = int_column(t, "Instruction", "end_ts")
    if "engine" not in t.column_names or "opcode" not in t.column_names:
        raise ProfileError("Instruction has no 'engine' or 'opcode' column, which are required")
    ins = make_instructions(
        start,
        end,
        str_codes(t, "Instruction", "engine"),
        str_codes(t, "Instruction", "opcode"),
        int_column(t, "Instruction", "pcore_idx", 0, np.int32),
        int_column(t, "Instruction", "id", -1) if "id" in t.column_names else None,
    )
    flops, transpose, kmn = instruction_details(t, ins.engine.mask_of({"Tensor"}))
    ins = dataclasses.replace(ins, flops=flops, transpose=transpose, matmul_kmn=kmn)
    locations = _locations(tables, t, ins.pcore)
    dma = _dma(tables, ins.row_id, len(ins))
    execs = _executions(tables.get("ExecutionInfo"))
    warn = tables.get("Warning")
    if warn is not None and "message" in warn.column_names:
        notes = [*notes, *(f"profile warning: {m}" for m in warn.column("message").to_pylist() if m)]
    if summary.get("dma_active_time") and len(dma):  # a number: clean_scalars dropped anything else
        notes = [*notes, *_cross_check(dma, float(summary["dma_active_time"]))]
    return Profile(
        path,
        fmt,
        ins,
        locations,
        dma,
        summary,
        metadata,
        execs,
        str(metadata.get("profile_schema_version") or ""),
        notes,
        tensor_roles(tables.get("TensorInfo")),
    )


def _cross_check(dma: DmaTransfers, active_s: float) -> list[str]:
    from nki_studio.profile.intervals import union_length

    mine = union_length(dma.start, dma.end)
    theirs = round(active_s * 1e9)
    if theirs and abs(mine - theirs) > max(2, 0.01 * theirs):
        return [
            f"DMA union of {dma.table} is {mine} ns but Summary.dma_active_time says {theirs} ns (sampled DMA data?)"
        ]
    return []


def _locations(tables: Mapping[str, TableLike], t: TableLike, pcore: npt.NDArray[np.int32]) -> Locations:
    """Source locations per instruction: KernelInstructions, else nki_source_location, else BIR debug info."""
    n = t.num_rows
    done = np.zeros(n, bool)
    parts = []
    used: list[str] = []
    ki = tables.get("KernelInstructions")
    if ki is not None and ki.num_rows and "kernel_instruction_name" in t.column_names:
        part = _kernel_instruction_locations(
            tables, ki, str_codes(t, "Instruction", "kernel_instruction_name"), pcore
        )
        if part[0].size:
            parts.append(part)
            done[part[0]] = True
            used.append("KernelInstructions")
    for field in ("nki_source_location", "bir_debug_info_source_location"):
        if field not in t.column_names or done.all():
            continue
        codes = str_codes(t, "Instruction", field)
        row_codes = (
            codes.codes if not parts else np.where(done, -1, codes.codes)
        )  # rows already located: none
        part = expand_locations(parsed_values(codes, f"Instruction.{field}"), row_codes)
        if part[0].size:
            parts.append(part)
            done[part[0]] = True
            used.append(f"Instruction.{field}")
    return concat_locations(parts, " + ".join(used))


def _kernel_instruction_locations(
    tables: Mapping[str, TableLike], ki: TableLike, names: Codes, pcore: npt.NDArray[np.int32]
) -> tuple[I64, Codes, npt.NDArray[np.int32], Codes]:
    """Join Instruction.kernel_instruction_name (+ pcore_idx) → KernelInstructions.file_path, line_number."""
    k_names = ki.column("kernel_instruction_name").to_pylist()
    k_core = int_column(ki, "KernelInstructions", "pcore_idx", -1)
    k_file = ki.column("file_path").to_pylist() if "file_path" in ki.column_names else [None] * ki.num_rows
    k_line = int_column(ki, "KernelInstructions", "line_number", 0)
    k_iter = int_column(ki, "KernelInstructions", "iteration_variables_id", -1)
    labels = _iteration_labels(tables.get("KernelIterationVariables"))
    by_key: dict[tuple[str, int], int] = {}
    for r, name in enumerate(k_names):
        if name is not None:
            by_key[(name, int(k_core[r]))] = r
    core_aware = bool((k_core >= 0).any())
    # One lookup per distinct (name code, core) pair, then a gather — never a Python loop per instruction.
    ncore = int(pcore.max()) + 1 if pcore.size else 1
    pair = names.codes.astype(np.int64) * ncore + (pcore if core_aware else 0)
    valid = names.codes >= 0
    inv, uniq = dense_ids(np.where(valid, pair + 1, 0))
    uniq = uniq - 1
    row_of = np.full(uniq.size, -1, np.int64)
    for u, key in enumerate(uniq):
        if key < 0:
            continue
        name = names.values[int(key // ncore)]
        core = int(key % ncore) if core_aware else -1
        row_of[u] = by_key.get((name, core), by_key.get((name, -1), -1))
    ki_row = row_of[inv]
    per_value: list[tuple[tuple[str, int], ...]] = [
        ((str(k_file[r]), int(k_line[r])),) if k_file[r] and k_line[r] > 0 else () for r in range(ki.num_rows)
    ]
    label_values = tuple(dict.fromkeys(labels.values()))
    label_index = {v: i for i, v in enumerate(label_values)}
    it_codes = np.array([label_index[labels[int(i)]] if int(i) in labels else -1 for i in k_iter], np.int32)
    rows = np.flatnonzero(ki_row >= 0)
    iteration = Codes(label_values, it_codes[ki_row[rows]]) if rows.size else None
    return expand_locations(per_value, ki_row[rows].astype(np.int32), rows.astype(np.int64), iteration)


def _iteration_labels(t: TableLike | None) -> dict[int, str]:
    """``iteration_variable_id`` → "n=0, k=3" (outermost loop first), following parent links."""
    if t is None or t.num_rows == 0:
        return {}
    ids = int_column(t, "KernelIterationVariables", "iteration_variable_id")
    names = (
        t.column("variable_name").to_pylist() if "variable_name" in t.column_names else [None] * t.num_rows
    )
    values = int_column(t, "KernelIterationVariables", "variable_value", 0)
    parents = int_column(t, "KernelIterationVariables", "parent_iteration_variable_id", -1)
    own = {int(i): (names[r] or "?", int(values[r]), int(parents[r])) for r, i in enumerate(ids)}
    out: dict[int, str] = {}
    for start in own:
        chain, cur, seen = [], start, set()
        while cur in own and cur not in seen:  # `seen` guards against cyclic parent links in corrupt data
            seen.add(cur)
            name, value, parent = own[cur]
            chain.append(f"{name}={value}")
            cur = parent
        out[start] = ", ".join(reversed(chain))
    return out


def _dma(tables: Mapping[str, TableLike], instr_ids: I64 | None, n_instr: int) -> DmaTransfers:
    """DMA transfers from DmaPacketAggregated (else DmaPacket), attributed to instructions through Flow."""
    agg = tables.get("DmaPacketAggregated")
    name = "DmaPacketAggregated"
    if agg is None or agg.num_rows == 0:
        agg, name = tables.get("DmaPacket"), "DmaPacket"
    if agg is None or agg.num_rows == 0:
        return no_dma()
    n = agg.num_rows
    ids = int_column(agg, name, "id", -1) if "id" in agg.column_names else np.full(n, -1, np.int64)
    instr = np.full(n, -1, np.int64)
    flow = tables.get("Flow")
    if name == "DmaPacketAggregated" and flow is not None and flow.num_rows and n_instr:
        # Without Instruction.id, Flow's in_id can only be the row number.
        instr = _flow_instr(
            flow, instr_ids if instr_ids is not None else np.arange(n_instr, dtype=np.int64), ids
        )
    source, dest, partitions, transpose = dma_details(agg)
    return DmaTransfers(
        start=int_column(agg, name, "start_ts"),
        end=int_column(agg, name, "end_ts"),
        bytes=int_column(agg, name, "transfer_bytes", 0),
        queue=str_codes(agg, name, "queue_name"),
        tensor=str_codes(agg, name, "variable"),
        queue_type=str_codes(agg, name, "queue_type"),
        pcore=int_column(agg, name, "pcore_idx", 0, np.int32),
        instr=instr,
        table=name,
        partitions=partitions,
        source=source,
        dest=dest,
        transpose=transpose,
    )


def _flow_instr(flow: TableLike, instr_ids: I64, dma_ids: I64) -> I64:
    """For each DMA row, the index of the instruction that triggered it (Flow Instruction → DMA), else -1.

    Table names are matched case-insensitively and both spellings are accepted: observed
    ``Instruction``/``DmaPacketAggregated``, documented ``instruction``/``dma_block`` (parquet-schema.md §4).
    """
    m = _lower_in(flow.column("in_table"), {"instruction"}) & _lower_in(
        flow.column("out_table"), {"dmapacketaggregated", "dma_block"}
    )
    in_id = int_column(flow, "Flow", "in_id")[m]
    out_id = int_column(flow, "Flow", "out_id")[m]
    order_i = np.argsort(instr_ids)
    pos_i = np.searchsorted(instr_ids[order_i], in_id)
    ok_i = (pos_i < instr_ids.size) & (instr_ids[order_i][np.minimum(pos_i, instr_ids.size - 1)] == in_id)
    order_d = np.argsort(dma_ids)
    pos_d = np.searchsorted(dma_ids[order_d], out_id)
    ok_d = (pos_d < dma_ids.size) & (dma_ids[order_d][np.minimum(pos_d, max(dma_ids.size - 1, 0))] == out_id)
    ok = ok_i & ok_d
    out = np.full(dma_ids.size, -1, np.int64)
    out[order_d[pos_d[ok]]] = order_i[pos_i[ok]]
    return out


def _lower_in(column: pa.ChunkedArray, wanted: set[str]) -> npt.NDArray[np.bool_]:
    """Rows whose string, lower-cased, is in ``wanted`` (each distinct value compared once)."""
    codes = codes_of(column)
    return Codes(tuple(v.lower() for v in codes.values), codes.codes).mask_of(wanted)


def _executions(t: TableLike | None) -> list[Execution]:
    if t is None or t.num_rows == 0 or "execution_start_ts" not in t.column_names:
        return []
    idx = int_column(t, "ExecutionInfo", "execution_index", 0)
    s = int_column(t, "ExecutionInfo", "execution_start_ts", -1)
    e = int_column(t, "ExecutionInfo", "execution_end_ts", -1)
    return sorted(
        (Execution(int(i), int(a), int(b)) for i, a, b in zip(idx, s, e, strict=True) if a >= 0 and b > a),
        key=lambda x: x.index,
    )
