"""Writers turning a ``fixturegen.Timeline`` into each Neuron profile format (no pytest dependency)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from fixturegen import Timeline, random_hex, summary_fields
from nki_studio.profile.schema import schema_tables

INSTR_ID_BASE = 1000  # Instruction.id values are not row numbers in real data; keep them distinct here too
DMA_ID_BASE = 5000

_ARROW = {
    "int64": pa.int64(),
    "int32": pa.int32(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "string": pa.string(),
    "bool": pa.bool_(),
    "list<int64>": pa.list_(pa.int64()),
    "list<string>": pa.list_(pa.string()),
}


def _table(name: str, n: int, values: dict[str, Any]) -> pa.Table:
    """A table with every documented field of ``name`` in schema order and type; unknown fields null
    (required ones get a neutral value so the file stays schema-valid)."""
    cols, fields = [], []
    for fname, atype, required in schema_tables()[name]:
        typ = _ARROW.get(atype, pa.string())
        if fname in values:
            arr = pa.array(values[fname], type=typ)
        elif required and not pa.types.is_list(typ):
            neutral = "" if pa.types.is_string(typ) else (False if pa.types.is_boolean(typ) else 0)
            arr = pa.array([neutral] * n, type=typ)
        else:
            arr = pa.nulls(n, type=typ)
        cols.append(arr)
        fields.append(pa.field(fname, typ, nullable=not required))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def _kernel_instructions(tl: Timeline) -> tuple[list[str | None], dict[str, list[Any]], dict[str, list[Any]]]:
    """Kernel instruction names per instruction, KernelInstructions rows, KernelIterationVariables rows.

    Single-location instructions get a name; fused (multi-location) ones keep only nki_source_location,
    since one KernelInstructions row holds one file/line."""
    names: list[str | None] = []
    ki: dict[str, list[Any]] = {
        k: []
        for k in (
            "kernel_instruction_name",
            "stack_frame_id",
            "iteration_variables_id",
            "pcore_idx",
            "file_path",
            "line_number",
        )
    }
    kiv: dict[str, list[Any]] = {
        k: []
        for k in (
            "iteration_variable_id",
            "variable_name",
            "variable_value",
            "parent_iteration_variable_id",
            "pcore_idx",
            "file_path",
            "line_number",
        )
    }
    seen: dict[tuple[Any, ...], str] = {}
    iter_ids: dict[tuple[Any, ...], int] = {}
    for i, loc in enumerate(tl.location):
        if loc is None or "," in loc:
            names.append(None)
            continue
        it = tl.iteration[i]
        key = (loc, int(tl.pcore[i]), tuple(sorted(it.items())) if it else ())
        if key not in seen:
            path, _, line = loc.rpartition(":")
            parent: int | None = None
            for var, value in (it or {}).items():  # outermost first
                ikey = (key[1], var, value, parent)
                if ikey not in iter_ids:
                    iter_ids[ikey] = 100 + len(iter_ids)
                    for col, v in zip(
                        kiv, (iter_ids[ikey], var, value, parent, key[1], path, 1), strict=False
                    ):
                        kiv[col].append(v)
                parent = iter_ids[ikey]
            seen[key] = f"inst.{len(seen)}:0"
            for col, v in zip(ki, (seen[key], 1, parent, key[1], path, int(line)), strict=False):
                ki[col].append(v)
        names.append(seen[key])
    return names, ki, kiv


def _partition_columns(tl: Timeline) -> dict[str, Any]:
    """SBUF partition counts as Neuron Explorer records them: written for loads (dest on chip), read for stores."""
    out: dict[str, Any] = {}
    if tl.dma_partitions is not None:
        dest = tl.dma_dest or ["[SB]"] * int(tl.dma_start.size)
        load = np.array(["SB" in d or "PSUM" in d for d in dest])
        out["write_num_sbuf_partitions"] = np.where(load, tl.dma_partitions, 0).astype(np.int32)
        out["read_num_sbuf_partitions"] = np.where(load, 0, tl.dma_partitions).astype(np.int32)
    if tl.dma_transpose is not None:
        out["is_transpose_mode"] = [bool(v) for v in tl.dma_transpose]
    return out


def write_parquet(
    tl: Timeline,
    directory: Path,
    *,
    kernel_instructions: bool = True,
    parts: int = 1,
    schema_version: str | None = None,
    dma_packets: bool = True,
) -> Path:
    """A Neuron Explorer Parquet output directory (``<Table>.parquet``, or ``<Table>_<k>.parquet`` parts)."""
    directory.mkdir(parents=True, exist_ok=True)
    n = tl.n
    names, ki, kiv = _kernel_instructions(tl) if kernel_instructions else ([None] * n, {}, {})
    instr = {
        "start_ts": tl.start,
        "end_ts": tl.end,
        "duration_ns": tl.end - tl.start,
        "engine": tl.engine,
        "timeline_track": tl.track,
        "pcore_idx": tl.pcore,
        "opcode": tl.opcode,
        "operands": [""] * n,
        "id": np.arange(n, dtype=np.int64) + INSTR_ID_BASE,
        "pc": np.arange(n, dtype=np.int64),
        "bir_id": [f"sg0000:{i}" for i in range(n)] if n < 100_000 else None,
        "kernel_instruction_name": names,
        "nki_source_location": tl.location,
        "raw_flops": np.zeros(n, np.int64),
        "adjusted_flops": tl.instr_flops,
        "tensor_instruction_type": tl.instr_kind,
    }
    if tl.instr_operands is not None:
        instr["operands"] = tl.instr_operands
    instr = {k: v for k, v in instr.items() if v is not None}
    tables = {"Instruction": _table("Instruction", n, instr)}
    if ki.get("kernel_instruction_name"):
        tables["KernelInstructions"] = _table("KernelInstructions", len(ki["kernel_instruction_name"]), ki)
    if kiv.get("iteration_variable_id"):
        tables["KernelIterationVariables"] = _table(
            "KernelIterationVariables", len(kiv["iteration_variable_id"]), kiv
        )
    m = tl.dma_start.size
    if m:
        ids = np.arange(m, dtype=np.int64) + DMA_ID_BASE
        tables["DmaPacketAggregated"] = _table(
            "DmaPacketAggregated",
            m,
            {
                "start_ts": tl.dma_start,
                "end_ts": tl.dma_end,
                "duration_ns": tl.dma_end - tl.dma_start,
                "id": ids,
                "pcore_idx": np.zeros(m, np.int64),
                "queue_name": tl.dma_queue,
                "queue_idx": np.zeros(m, np.int64),
                "queue_type": ["input"] * m,
                "op": ["read"] * m,
                "variable": tl.dma_tensor,
                "read_bytes": tl.dma_bytes,
                "write_bytes": tl.dma_bytes,
                "transfer_bytes": tl.dma_bytes,
                "throughput": tl.dma_bytes / np.maximum(tl.dma_end - tl.dma_start, 1) * 1e9,
                "source": tl.dma_source or ["[[INPUT]]"] * m,
                "dest": tl.dma_dest or ["[SB]"] * m,
                "semaphore_id": [f"S[1] ({q})" for q in tl.dma_queue],
                **_partition_columns(tl),
            },
        )
        if dma_packets:
            tables["DmaPacket"] = _table(
                "DmaPacket",
                m,
                {
                    "start_ts": tl.dma_start,
                    "end_ts": tl.dma_end,
                    "duration_ns": tl.dma_end - tl.dma_start,
                    "id": ids + 100_000,
                    "packet_idx": np.zeros(m, np.int32),
                    "packet_aggregation_id": ids,
                    "transfer_bytes": tl.dma_bytes,
                    "pcore_idx": np.zeros(m, np.int64),
                },
            )
        trig = np.flatnonzero(tl.dma_trigger >= 0)
        if trig.size:
            tables["Flow"] = _table(
                "Flow",
                int(trig.size),
                {
                    "in_id": tl.dma_trigger[trig] + INSTR_ID_BASE,
                    "out_id": ids[trig],
                    "in_table": ["Instruction"] * trig.size,
                    "out_table": ["DmaPacketAggregated"] * trig.size,
                },
            )
    if tl.tensors:
        tables["TensorInfo"] = _table(
            "TensorInfo",
            len(tl.tensors),
            {
                "variable_name": [t[0] for t in tl.tensors],
                "type": [t[1] for t in tl.tensors],
                "size": [t[2] for t in tl.tensors],
            },
        )
    if tl.executions:
        ex = tl.executions
        tables["ExecutionInfo"] = _table(
            "ExecutionInfo",
            len(ex),
            {
                "execution_index": [e[0] for e in ex],
                "execution_start_ts": [e[1] for e in ex],
                "execution_end_ts": [e[2] for e in ex],
                "neff_name": ["kernel.neff"] * len(ex),
            },
        )
    summ = summary_fields(tl)
    tables["Summary"] = _table("Summary", 1, {k: [v] for k, v in summ.items()})
    tables["Metadata"] = _table(
        "Metadata",
        1,
        {
            "profile_schema_version": [schema_version or tl.schema_version],
            "num_physical_cores": [int(tl.pcore.max(initial=0)) + 1],
            "dma_ddr_bandwidth": [435e9],
            "tensor_engine_num_rows": [128],
            "tensor_engine_num_cols": [128],
            "tensor_engine_clock_freq": [2.4],
            "instance_type": ["trn2.48xlarge"],
            "profile_name": ["synthetic"],
            "is_simulation": [False],
            **{k: [v] for k, v in tl.metadata.items()},
        },
    )
    for name, table in tables.items():
        if parts > 1 and table.num_rows >= parts:
            step = -(-table.num_rows // parts)
            for k in range(parts):
                pq.write_table(table.slice(k * step, step), directory / f"{name}_{k}.parquet")
        else:
            pq.write_table(table, directory / f"{name}.parquet")
    return directory


def write_legacy_json(tl: Timeline, path: Path) -> Path:
    """Legacy ``--output-format json`` (json-legacy.md §1): ``{summary, metadata, instruction, dma}``."""
    instructions = [
        {
            "timestamp": int(tl.start[i]),
            "duration": int(tl.end[i] - tl.start[i]),
            "label": tl.engine[i],
            "subgroup": tl.track[i],
            "opcode": tl.opcode[i],
            "operands": "",
            "nki_source_location": tl.location[i] or "",
            "subgraph": f"sg{int(tl.pcore[i]):02d}",
        }
        for i in range(tl.n)
    ]
    dma = [
        {
            "timestamp": int(tl.dma_start[j]),
            "duration": int(tl.dma_end[j] - tl.dma_start[j]),
            "semaphore_id": f"S[1] ({tl.dma_queue[j]})",
            "aggregated": "yes",
            "read_size": int(tl.dma_bytes[j]),
            "queue_name": tl.dma_queue[j],
            "variable": tl.dma_tensor[j],
            "transfer_bytes": int(tl.dma_bytes[j]),
        }
        for j in range(tl.dma_start.size)
    ]
    doc = {
        "summary": [summary_fields(tl)],
        "metadata": {"profile_schema_version": tl.schema_version},
        "instruction": instructions,
        "dma": dma,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def write_summary_json(tl: Timeline, path: Path, *, log_prefix: str = "") -> Path:
    """summary-json as ``neuron-explorer view --output-format summary-json`` prints it: ``{"n_<hash>": {...}}``."""
    fields = summary_fields(tl) | {
        "instance_type": "trn2.48xlarge",
        "compiler_version": "2.21.0",
        "runtime_version": "2.31.24",
        "profiler_version": "2.31.0",
    }
    path.write_text(log_prefix + json.dumps({f"n_{random_hex(7)}": fields}, indent=1), encoding="utf-8")
    return path


def _write_csv_table(
    path: Path, columns: list[str], rows: Iterable[tuple[str, int, int, list[object]]]
) -> None:
    """One exported table: every table's rows start with their track, start, end and duration; ``rows`` give the
    track, start and end, then the table's own ``columns``."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["timeline_track", "start_ts", "end_ts", "duration_ns", *columns])
        w.writerows([track, start, end, end - start, *rest] for track, start, end, rest in rows)


def write_csv(tl: Timeline, directory: Path) -> Path:
    """Device Trace Viewer "Export to CSV": one CSV per table, first column ``timeline_track``."""
    directory.mkdir(parents=True, exist_ok=True)
    _write_csv_table(
        directory / "Instruction.csv",
        ["engine", "opcode", "pcore_idx", "id", "nki_source_location"],
        (
            (
                tl.track[i],
                int(tl.start[i]),
                int(tl.end[i]),
                [tl.engine[i], tl.opcode[i], int(tl.pcore[i]), i + INSTR_ID_BASE, tl.location[i] or ""],
            )
            for i in range(tl.n)
        ),
    )
    if tl.dma_start.size:
        _write_csv_table(
            directory / "DmaPacketAggregated.csv",
            ["id", "queue_name", "queue_type", "variable", "transfer_bytes"],
            (
                (
                    tl.dma_queue[j],
                    int(tl.dma_start[j]),
                    int(tl.dma_end[j]),
                    [j + DMA_ID_BASE, tl.dma_queue[j], "input", tl.dma_tensor[j], int(tl.dma_bytes[j])],
                )
                for j in range(tl.dma_start.size)
            ),
        )
    return directory


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def write_pftrace(
    tl: Timeline, path: Path, *, interned: bool = True, reset_every: int = 0, default_track: bool = False
) -> Path:
    """A Neuron-shaped Perfetto trace (perfetto.md §2): one track per engine row and per DMA queue under a
    ``NeuronCore <k>`` process track; instruction slices named by opcode with an ``nki_source_location``
    debug annotation; DMA slices named by tensor with ``transfer_bytes``. Written packet by packet.

    Variants exercise the decoder: ``interned=False`` spells names inline; ``reset_every=N`` clears the
    incremental state every N events and re-interns with *different* ids; ``default_track`` leaves out
    ``track_uuid`` and sets it through ``trace_packet_defaults`` whenever the track changes."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    seq = 7
    tracks: dict[tuple[int, str], int] = {}
    events: list[tuple[int, int, int, int, str, dict[str, Any]]] = []  # (ts, order, kind, uuid, name, args)
    row_free: dict[tuple[int, str], int] = {}
    for i in range(tl.n):
        core, name = int(tl.pcore[i]), tl.track[i]
        # A stack-based reader needs slices on one track to nest; put an overlapping slice on a sibling row.
        k = 0
        while row_free.get((core, name if not k else f"{name} #{k + 1}"), -1) > tl.start[i]:
            k += 1
        tname = name if not k else f"{name} #{k + 1}"
        row_free[(core, tname)] = int(tl.end[i])
        uuid = tracks.setdefault((core, tname), 1000 + len(tracks))
        args = {"nki_source_location": tl.location[i]} if tl.location[i] else {}
        events.append((int(tl.start[i]), 1, 1, uuid, tl.opcode[i], args))
        events.append((int(tl.end[i]), 0, 2, uuid, "", {}))
    for j in range(tl.dma_start.size):
        uuid = tracks.setdefault((0, tl.dma_queue[j]), 1000 + len(tracks))
        events.append(
            (int(tl.dma_start[j]), 1, 1, uuid, tl.dma_tensor[j], {"transfer_bytes": int(tl.dma_bytes[j])})
        )
        events.append((int(tl.dma_end[j]), 0, 2, uuid, "", {}))
    events.sort(key=lambda e: (e[0], e[1]))  # END before BEGIN at equal timestamps
    names: dict[str, int] = {}
    arg_names: dict[str, int] = {}
    strings: dict[str, int] = {}
    with open(path, "wb") as fh:

        def emit(p: Any) -> None:
            data = p.SerializeToString()
            fh.write(b"\x0a" + _varint(len(data)) + data)

        cores = sorted({c for c, _ in tracks})
        for c in cores:
            p = pb.TracePacket()
            p.track_descriptor.uuid = 10 + c
            p.track_descriptor.name = f"NeuronCore {c}"
            emit(p)
        for (c, tname), uuid in tracks.items():
            p = pb.TracePacket()
            p.track_descriptor.uuid = uuid
            p.track_descriptor.parent_uuid = 10 + c
            p.track_descriptor.name = tname
            emit(p)
        first = True
        current_default = -1
        generation = 0
        for k, (ts, _, kind, uuid, name, args) in enumerate(events):
            p = pb.TracePacket()
            p.timestamp = ts
            p.trusted_packet_sequence_id = seq
            if reset_every and k and k % reset_every == 0:
                first, current_default = True, -1
                generation += 1
                names.clear()
                arg_names.clear()
                strings.clear()
            if first:
                p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
                first = False
            else:
                p.sequence_flags = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
            ev = p.track_event
            if default_track:
                if uuid != current_default:
                    p.trace_packet_defaults.track_event_defaults.track_uuid = uuid
                    current_default = uuid
            else:
                ev.track_uuid = uuid
            if kind == 2:
                ev.type = pb.TrackEvent.TYPE_SLICE_END
                emit(p)
                continue
            ev.type = pb.TrackEvent.TYPE_SLICE_BEGIN
            if interned:
                if name not in names:
                    names[name] = len(names) + 1
                    e = p.interned_data.event_names.add()
                    e.iid, e.name = names[name], name
                ev.name_iid = names[name]
            else:
                ev.name = name
            for key, value in args.items():
                a = ev.debug_annotations.add()
                if interned:
                    if key not in arg_names:
                        arg_names[key] = len(arg_names) + 1
                        e2 = p.interned_data.debug_annotation_names.add()
                        e2.iid, e2.name = arg_names[key], key
                    a.name_iid = arg_names[key]
                else:
                    a.name = key
                if isinstance(value, int):
                    a.int_value = value
                elif interned:
                    if value not in strings:
                        strings[value] = len(strings) + 1
                        e3 = p.interned_data.debug_annotation_string_values.add()
                        e3.iid, e3.str = strings[value], value.encode()
                    a.string_value_iid = strings[value]
                else:
                    a.string_value = value
            emit(p)
    return path
