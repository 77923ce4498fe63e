"""The four line-level investigations of profile-formats/bounds.md §3, for measured and estimated profiles.

Each explains one gap of the bounds (``nki_studio.profile.bounds``) and puts its findings on source lines with
the numbers behind them: DMA efficiency (descriptor size per ``dma_copy`` line), redundant DMA (input reloads,
compiler spills; in an estimated profile also exact reloads of one HBM byte range), Tensor-engine inefficiency
(K/M/N per ``nc_matmul`` line against the maxima) and redundant transposes. Each reports what it found,
"nothing found", or which prerequisite the profile lacked and how to capture it.

Codes are NKI7xx (``nki_studio.core.perf_codes``); this module only names them.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt
from nki_studio.profile.bounds import Peaks, kernel_dma_mask, peaks
from nki_studio.profile.heatmap import fmt_bytes, fmt_ns
from nki_studio.profile.metrics import NO_SOURCE_HELP
from nki_studio.profile.model import DmaTransfers, Profile
from nki_studio.protocol.analysis import DetailValue, InvestigationJson

# Descriptors under about 4 KiB per partition row are markedly less efficient (bounds.md §3.1).
DESCRIPTOR_BYTES = 4096
# The Tensor engine's K/M/N maxima (bounds.md §3.3; model/targets.py matmul_* limits on every generation).
K_MAX, M_MAX, N_MAX = 128, 128, 512

NO_DGE_HELP = (
    "the profile has no DmaPacketAggregated rows linked to instructions (Flow), so DMA bytes cannot be put on "
    "source lines. Capture with NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 (or `neuron-explorer capture "
    "--enable-dge-notifs`); in swdge and compiler-chosen DMA modes the table may still be missing."
)
NO_FLOPS_HELP = (
    "the profile has no Instruction.adjusted_flops / tensor_instruction_type columns; process the capture "
    "with neuron-explorer >= 2.22 (`neuron-explorer view ... --ingest-only`)."
)
NO_TENSORS_HELP = (
    "the profile has no TensorInfo rows (kernel inputs and outputs with their sizes), so reloads cannot be "
    "told from necessary traffic; process the capture with a neuron-explorer that writes TensorInfo."
)


@dataclass
class LineFinding:
    """One finding on one source line."""

    code: str  # NKI7xx
    file: str  # as recorded in the profile (mapping to workspace files happens in the front ends)
    line: int
    message: str
    numbers: dict[str, Any]

    @classmethod
    def on(cls, code: str, where: tuple[str, int], message: str, numbers: dict[str, Any]) -> LineFinding:
        """The finding ``code`` on ``where`` (a (file, line) key of ``_instr_lines``)."""
        return cls(code, where[0], where[1], message, numbers)


@dataclass
class Investigation:
    """The outcome of one investigation."""

    kind: str  # "dma-efficiency", "redundant-dma", "tensor-engine", "transposes"
    title: str
    status: str  # "found", "nothing found", "unavailable"
    summary: str
    findings: list[LineFinding] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)  # every line examined, with its numbers

    def to_dict(self) -> InvestigationJson:
        """JSON-ready dict (``analysis_json.InvestigationJson``)."""
        # built field by field, not with ``dataclasses.asdict`` (its generic deep copy cost as much as the
        # investigations themselves on a small kernel); the numbers are copied as asdict copied them
        return {
            "kind": self.kind,
            "title": self.title,
            "status": self.status,
            "summary": self.summary,
            "findings": [
                {
                    "code": f.code,
                    "file": f.file,
                    "line": f.line,
                    "message": f.message,
                    "numbers": cast(dict[str, DetailValue], _copy(f.numbers)),
                }
                for f in self.findings
            ],
            "lines": cast(list[dict[str, DetailValue]], _copy(self.lines)),
        }


_IMMUTABLE = (str, int, float, bool, type(None))


def _copy(value: Any) -> Any:
    """A deep copy of JSON-like ``value`` (dicts, lists and tuples of scalars), as ``dataclasses.asdict`` makes
    it: containers rebuilt, immutable scalars shared, anything else ``copy.deepcopy``-ed."""
    if isinstance(value, _IMMUTABLE):
        return value
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if type(value) is tuple:
        return tuple(_copy(v) for v in value)
    return copy.deepcopy(value)


def _instr_lines(profile: Profile) -> tuple[npt.NDArray[np.int64], list[tuple[str, int]]]:
    """Per instruction, the index of its (first) source line in the returned list, -1 when it has none."""
    loc = profile.locations
    n = len(profile.instructions)
    out = np.full(n, -1, np.int64)
    keys: list[tuple[str, int]] = []
    if not loc.instr.size:
        return out, keys
    # Location rows are sorted by instruction (model.sort_by_start): an instruction's first row is where the
    # instruction index changes. Distinct (file, line) pairs come from a presence table, not a sort.
    first_rows = np.flatnonzero(np.concatenate(([True], loc.instr[1:] != loc.instr[:-1])))
    fc = loc.file.codes[first_rows].astype(np.int64)
    ln = loc.line[first_rows].astype(np.int64)
    base = int(ln.max()) + 1
    ok = (fc >= 0) & (ln > 0)
    pair = np.where(ok, fc * base + ln, 0)
    present = np.zeros(max(len(loc.file.values), 1) * base, bool)
    present[pair[ok]] = True
    pairs = np.flatnonzero(present)
    lut = np.full(present.size, -1, np.int64)
    lut[pairs] = np.arange(pairs.size)
    keys.extend((loc.file.values[int(p) // base], int(p) % base) for p in pairs)
    out[loc.instr[first_rows]] = np.where(ok, lut[pair], -1)
    return out, keys


def _by_line(
    mask: npt.NDArray[np.bool_], line: npt.NDArray[np.int64]
) -> list[tuple[int, npt.NDArray[np.int64]]]:
    """The rows of ``mask`` grouped by their line index (rows without a line left out): one sort of the
    selected rows, never one pass over all rows per line."""
    rows = np.flatnonzero(mask & (line >= 0))
    if not rows.size:
        return []
    rows = rows[np.argsort(line[rows], kind="stable")]
    keys = line[rows]
    cuts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    return [(int(keys[g[0]]), rows[g]) for g in np.split(np.arange(rows.size), cuts)]


def _dma_lines(profile: Profile, line_of: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Per DMA transfer, the line index of its triggering instruction (``_instr_lines``), -1 when it has none."""
    dma = profile.dma
    return np.where(dma.instr >= 0, line_of[np.maximum(dma.instr, 0)], -1) if len(line_of) else dma.instr


def dma_efficiency(
    profile: Profile, line_of: npt.NDArray[np.int64], keys: list[tuple[str, int]]
) -> Investigation:
    """§3.1: per ``dma_copy`` line, transfers, bytes, partitions and descriptor size (bytes per partition row)."""
    title = "DMA efficiency (memory_bound → memory_bound_ideal)"
    dma = profile.dma
    kernel = kernel_dma_mask(profile)
    total = int(dma.bytes[kernel].sum())
    if not kernel.any():
        return Investigation("dma-efficiency", title, "nothing found", "no kernel DMA transfers")
    if not keys:
        return Investigation("dma-efficiency", title, "unavailable", NO_SOURCE_HELP)
    dline = _dma_lines(profile, line_of)
    linked = kernel & (dline >= 0)
    coverage = int(dma.bytes[linked].sum()) / total if total else 0.0
    cover_text = f"{coverage:.0%} of the kernel's {fmt_bytes(total)} DMA bytes are linked to a source line"
    if dma.table not in ("DmaPacketAggregated", "estimated"):
        return Investigation(
            "dma-efficiency",
            title,
            "unavailable",
            f"{cover_text}: the {profile.format} profile's DMA rows ({dma.table or 'none'}) carry no instruction "
            f"links; use the Parquet output. {NO_DGE_HELP}",
        )
    if coverage == 0:
        return Investigation("dma-efficiency", title, "unavailable", f"{cover_text}: {NO_DGE_HELP}")
    parts = dma.partitions
    rows: list[dict[str, Any]] = []
    findings: list[LineFinding] = []
    for k, sel in _by_line(linked, dline):
        nbytes = int(dma.bytes[sel].sum())
        row: dict[str, Any] = {
            "file": keys[k][0],
            "line": keys[k][1],
            "transfers": int(sel.size),
            "bytes": nbytes,
            "share": nbytes / total,
        }
        if parts is not None and (parts[sel] > 0).any():
            with_p = sel[parts[sel] > 0]
            row["partitions_per_transfer"] = float(parts[with_p].mean())
            row["descriptor_bytes"] = float(dma.bytes[with_p].sum() / parts[with_p].sum())
        transposed = int(dma.transpose[sel].sum()) if dma.transpose is not None else 0
        row["transposed"] = transposed
        rows.append(row)
        desc = row.get("descriptor_bytes")
        if desc is not None and desc < DESCRIPTOR_BYTES:
            findings.append(
                LineFinding.on(
                    "NKI701",
                    keys[k],
                    f"DMA descriptors of {fmt_bytes(desc)} per partition row (under {fmt_bytes(DESCRIPTOR_BYTES)} is "
                    f"markedly less efficient): {row['transfers']} transfers, {fmt_bytes(nbytes)}, "
                    f"{row['share']:.0%} of the kernel's DMA bytes, {row['partitions_per_transfer']:.0f} partitions "
                    "each. Move wider rows per transfer (a larger free dimension per partition).",
                    row,
                )
            )
        if transposed:
            findings.append(
                LineFinding.on(
                    "NKI702",
                    keys[k],
                    f"{transposed} transposing DMA transfer(s) ({fmt_bytes(nbytes)}): DMA transposes run well below "
                    "the DMA peak; a layout that needs no transpose, or a Tensor-engine transpose, may be faster.",
                    row,
                )
            )
    status = "found" if findings else "nothing found"
    if not findings and not any("descriptor_bytes" in r for r in rows):
        status = "unavailable"
        cover_text += (
            "; the profile records no SBUF partition counts per transfer (read/write_num_sbuf_partitions), so "
            "descriptor sizes are unknown"
        )
    rows.sort(key=lambda r: -r["bytes"])
    return Investigation("dma-efficiency", title, status, cover_text, findings, rows)


def _range_key(pcore: npt.NDArray[np.int32], hbm: npt.NDArray[np.int64], i: int) -> tuple[int, int, int, int]:
    """(core, HBM allocation, first byte, end byte) of transfer i."""
    return int(pcore[i]), int(hbm[i, 0]), int(hbm[i, 1]), int(hbm[i, 2])


@dataclass(frozen=True)
class _KernelDma:
    """What every step of ``redundant_dma`` reads: the transfers, which are the kernel's own, and the source
    line of each (an index into ``keys``, -1 without one)."""

    dma: DmaTransfers
    kernel: npt.NDArray[np.bool_]  # ``kernel_dma_mask``
    line: npt.NDArray[np.int64]  # ``_dma_lines``
    keys: list[tuple[str, int]]  # ``_instr_lines``


def _input_loads(t: _KernelDma, inputs: set[str]) -> npt.NDArray[np.bool_]:
    """The kernel's loads of its inputs: by memory text where the profile has it, else by tensor name."""
    dma = t.dma
    by_source = dma.source.mask_of({"[[INPUT]]"}) if dma.source is not None else dma.tensor.mask_of(inputs)
    return np.asarray(t.kernel & by_source, bool)


def _load_ratios(
    dma: DmaTransfers, loads: npt.NDArray[np.bool_], inputs: dict[str, int]
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Per input tensor, bytes loaded over its size: the ratios by name, and one row per tensor."""
    tensor_of = np.asarray(dma.tensor.codes)
    ratios: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    for name, size in inputs.items():
        c = dma.tensor.values.index(name) if name in dma.tensor.values else -1
        moved = int(dma.bytes[loads & (tensor_of == c)].sum()) if c >= 0 else 0
        ratios[name] = moved / size if size else 0.0
        rows.append({"tensor": name, "size": size, "loaded": moved, "ratio": ratios[name]})
    return ratios, rows


class _RangeLoads(NamedTuple):
    """Input loads grouped by their exact HBM byte range."""

    first: dict[
        tuple[int, int, int, int], int
    ]  # range key (``_range_key``) -> the transfer that loaded it first
    again: dict[tuple[int, str], list[int]]  # (line, tensor) -> transfers of a range already loaded
    broadcast: dict[
        tuple[int, str], list[int]
    ]  # (line, tensor) -> transfers moving more bytes than their range


def _range_loads(t: _KernelDma, hbm: npt.NDArray[np.int64], loads: npt.NDArray[np.bool_]) -> _RangeLoads:
    """Walk the input loads in order, grouping repeats of a range and broadcast loads by line and tensor."""
    groups = _RangeLoads({}, defaultdict(list), defaultdict(list))
    for i in np.flatnonzero(loads):
        key = _range_key(t.dma.pcore, hbm, int(i))
        if key[1] < 0:
            continue
        where = (int(t.line[i]), t.dma.tensor.value(int(i)) or "?")
        if key in groups.first:
            groups.again[where].append(int(i))
        else:
            groups.first[key] = int(i)
        if int(t.dma.bytes[i]) > key[3] - key[2]:  # one transfer reading its bytes several times
            groups.broadcast[where].append(int(i))
    return groups


def _repeated_loads(t: _KernelDma, hbm: npt.NDArray[np.int64], groups: _RangeLoads) -> list[LineFinding]:
    """NKI703 on every line loading an HBM byte range an earlier load already brought in (most transfers
    first), naming the lines of the first loads."""
    findings: list[LineFinding] = []
    for (k, name), idx in sorted(groups.again.items(), key=lambda kv: -len(kv[1])):
        if k < 0:
            continue
        nbytes = int(t.dma.bytes[idx].sum())
        firsts = {int(t.line[groups.first[_range_key(t.dma.pcore, hbm, i)]]) for i in idx}
        at = sorted(t.keys[f][1] for f in firsts if f >= 0 and t.keys[f][0] == t.keys[k][0])
        nums = {"tensor": name, "reloads": len(idx), "reloaded_bytes": nbytes, "first_loaded_at": at}
        findings.append(
            LineFinding.on(
                "NKI703",
                t.keys[k],
                f"reloads {fmt_bytes(nbytes)} of input `{name}` that were already loaded "
                f"({len(idx)} transfer(s) of the same HBM bytes"
                + (f", first loaded at line {', '.join(map(str, at))}" if at else "")
                + "). Keep the tile in SBUF and reuse it.",
                nums,
            )
        )
    return findings


def _broadcast_loads(t: _KernelDma, hbm: npt.NDArray[np.int64], groups: _RangeLoads) -> list[LineFinding]:
    """NKI703 on every line whose loads read their HBM bytes several times (a broadcast load)."""
    findings: list[LineFinding] = []
    for (k, name), idx in groups.broadcast.items():
        if k < 0:
            continue
        span = int(sum(hbm[i, 2] - hbm[i, 1] for i in idx))
        nbytes = int(t.dma.bytes[idx].sum())
        nums = {"tensor": name, "transfers": len(idx), "hbm_bytes": span, "moved_bytes": nbytes}
        findings.append(
            LineFinding.on(
                "NKI703",
                t.keys[k],
                f"moves {fmt_bytes(nbytes)} for {fmt_bytes(span)} of input `{name}`: a broadcast load, "
                "reading the same HBM bytes again for every partition it fills. Load it once and broadcast "
                "on chip (e.g. a partition broadcast or a stride-0 access) if the DMA is the bottleneck.",
                nums,
            )
        )
    return findings


def _tensor_reloads(
    t: _KernelDma, loads: npt.NDArray[np.bool_], ratios: dict[str, float]
) -> list[LineFinding]:
    """NKI703 without byte ranges: every line loading an input the kernel loads more than its size of in all."""
    tensor_of = np.asarray(t.dma.tensor.codes)
    findings: list[LineFinding] = []
    for k, sel in _by_line(loads, t.line):
        for c in np.unique(tensor_of[sel]):
            name = t.dma.tensor.values[c] if c >= 0 else "?"
            if ratios.get(name, 0.0) <= 1.0:
                continue
            nbytes = int(t.dma.bytes[sel[tensor_of[sel] == c]].sum())
            nums = {"tensor": name, "loaded_bytes": nbytes, "tensor_ratio": ratios[name]}
            findings.append(
                LineFinding.on(
                    "NKI703",
                    t.keys[k],
                    f"loads {fmt_bytes(nbytes)} of input `{name}`, which the kernel loads "
                    f"{ratios[name]:.2f}× its size in all: part of it is reloaded. Keep tiles in SBUF and reuse them.",
                    nums,
                )
            )
    return findings


def _spills(t: _KernelDma) -> list[LineFinding]:
    """NKI704 on every line whose transfers read or write a compiler spill buffer (``VIRTUAL`` memory)."""
    dma = t.dma
    if dma.source is None or dma.dest is None:
        return []
    virtual_src = np.array(["VIRTUAL" in v for v in dma.source.values] + [False], bool)[dma.source.codes]
    virtual_dst = np.array(["VIRTUAL" in v for v in dma.dest.values] + [False], bool)[dma.dest.codes]
    reload = t.kernel & virtual_src
    spill_any = t.kernel & (virtual_src | virtual_dst)
    findings: list[LineFinding] = []
    for k in np.unique(t.line[spill_any]):
        if k < 0:
            continue
        rb = int(dma.bytes[reload & (t.line == k)].sum())
        cost = 2 * rb  # save-direction Flow links are partly missing (bounds.md §3.2)
        nums = {"reload_bytes": rb, "cost_bytes": cost}
        findings.append(
            LineFinding.on(
                "NKI704",
                t.keys[k],
                f"the compiler spilled this operation's output to HBM and reloaded it: about {fmt_bytes(cost)} of "
                "DMA (2 × the reloads). Reduce the live SBUF data here (smaller tiles, fewer buffers).",
                nums,
            )
        )
    return findings


def redundant_dma(
    profile: Profile, line_of: npt.NDArray[np.int64], keys: list[tuple[str, int]]
) -> Investigation:
    """§3.2: excess HBM traffic split into input reloads (per tensor, per line and tensor; exact byte-range
    reloads where the profile knows the ranges) and compiler spills."""
    title = "Redundant DMA (inputs read more than once)"
    dma = profile.dma
    if not profile.tensors:
        return Investigation("redundant-dma", title, "unavailable", NO_TENSORS_HELP)
    if set(dma.tensor.values) <= {"unknown", ""}:
        return Investigation("redundant-dma", title, "unavailable", f"tensor names unknown: {NO_DGE_HELP}")
    t = _KernelDma(dma, kernel_dma_mask(profile), _dma_lines(profile, line_of), keys)
    inputs = {tensor.name: tensor.size for tensor in profile.tensors if tensor.role == "IN"}
    loads = _input_loads(t, set(inputs))
    ratios, rows = _load_ratios(dma, loads, inputs)
    hbm = dma.hbm_range
    exact = hbm is not None and bool((hbm[:, 0] >= 0).any())
    if hbm is not None and exact:
        groups = _range_loads(t, hbm, loads)
        findings = _repeated_loads(t, hbm, groups) + _broadcast_loads(t, hbm, groups)
    else:
        findings = _tensor_reloads(t, loads, ratios)
    findings += _spills(t)
    total = int(dma.bytes[t.kernel].sum())
    necessary = sum(tensor.size for tensor in profile.tensors if tensor.role in ("IN", "OUT"))
    method = "exact HBM byte ranges" if exact else "per tensor (TensorInfo sizes)"
    summary = (
        f"DMA moved {fmt_bytes(total)}, the kernel's inputs and outputs are {fmt_bytes(necessary)}: "
        f"excess {fmt_bytes(max(total - necessary, 0))}; reloads found by {method}"
    )
    return Investigation(
        "redundant-dma", title, "found" if findings else "nothing found", summary, findings, rows
    )


def _te_rows(profile: Profile) -> npt.NDArray[np.bool_]:
    ins = profile.instructions
    te = ins.engine.mask_of({"Tensor"})
    return np.asarray(te & (ins.flops > 0), bool) if ins.flops is not None else np.zeros(len(ins), bool)


# Where a measured profile's K/M/N come from. Neuron Explorer documents ``Instruction.operands`` only as "Input
# operands for the instruction", free text (profile-formats/parquet-schema.md, Instruction table; no page of the
# Neuron docs corpus, v2.33, gives its grammar): the reader's ``K*M=a*b N=c`` pattern is inferred from observed
# texts (bounds.md §3.3), so every measured K/M/N figure carries this label. Estimated profiles take them from
# the simulator's operand shapes, which are exact.
INFERRED_KMN = "inferred operand format"


def tensor_engine(
    profile: Profile, line_of: npt.NDArray[np.int64], keys: list[tuple[str, int]], pk: Peaks
) -> Investigation:
    """§3.3: per ``nc_matmul`` line, count, share of hardware FLOPs and K/M/N against 128/128/512."""
    title = "Tensor-engine inefficiency (compute_bound → compute_bound_ideal_flops)"
    ins = profile.instructions
    if ins.flops is None:
        return Investigation("tensor-engine", title, "unavailable", NO_FLOPS_HELP)
    te = _te_rows(profile)
    mm = te & ~ins.transpose if ins.transpose is not None else te
    hw = int(ins.flops[te].sum())
    if not mm.any():
        return Investigation("tensor-engine", title, "nothing found", "no matmuls on the Tensor engine")
    if not keys:
        return Investigation("tensor-engine", title, "unavailable", NO_SOURCE_HELP)
    kmn = ins.matmul_kmn
    measured = profile.provenance != "estimated"
    kmn_source = f"operands text ({INFERRED_KMN})" if measured else "simulator operand shapes"
    rows, findings = [], []
    for k, sel in _by_line(mm, line_of):
        fl = int(ins.flops[sel].sum())
        busy = int((ins.end[sel] - ins.start[sel]).sum())
        ideal = fl / pk.te_flops_per_s * 1e9
        row: dict[str, Any] = {
            "file": keys[k][0],
            "line": keys[k][1],
            "count": int(sel.size),
            "flops": fl,
            "share": fl / hw if hw else 0.0,
            "busy_ns": busy,
            "ideal_ns": ideal,
        }
        known = kmn is not None and (kmn[sel] >= 0).all(axis=1).any()
        if known:
            assert kmn is not None
            good = kmn[sel][(kmn[sel] >= 0).all(axis=1)]
            row.update(K=int(good[:, 0].max()), M=int(good[:, 1].max()), N=int(good[:, 2].max()))
            row["kmn_source"] = kmn_source
        rows.append(row)
        if known and (row["K"] < K_MAX or row["M"] < M_MAX):
            findings.append(
                LineFinding.on(
                    "NKI705",
                    keys[k],
                    f"matmuls with K={row['K']} M={row['M']} N={row['N']} (maxima {K_MAX}/{M_MAX}/{N_MAX}): "
                    f"{row['count']} instruction(s), {row['share']:.0%} of the Tensor-engine FLOPs, "
                    f"{fmt_ns(busy)} busy for {fmt_ns(ideal)} of work at peak. Undersized K or M cuts what an "
                    "instruction delivers without shortening it much: use full 128-row tiles."
                    + (f" (K/M/N from the operands text: {INFERRED_KMN})" if measured else ""),
                    row,
                )
            )
    summary = f"{len(rows)} matmul line(s), {hw / 1e9:.3g} GFLOP on the Tensor engine"
    if kmn is None:
        summary += "; K/M/N not in this profile's operands text, so tile sizes cannot be checked"
    elif measured:
        summary += f"; K/M/N parsed from the operands text ({INFERRED_KMN}: undocumented, may misread)"
    rows.sort(key=lambda r: -r["flops"])
    return Investigation(
        "tensor-engine", title, "found" if findings else "nothing found", summary, findings, rows
    )


def transposes(
    profile: Profile, line_of: npt.NDArray[np.int64], keys: list[tuple[str, int]], pk: Peaks
) -> Investigation:
    """§3.4: per ``nc_transpose`` line, count, transpose FLOPs, time at TE peak and share of all transposes."""
    title = "Redundant Tensor-engine transposes (compute_bound_ideal_flops → useful_flops)"
    ins = profile.instructions
    if ins.flops is None or ins.transpose is None:
        return Investigation("transposes", title, "unavailable", NO_FLOPS_HELP)
    tr = _te_rows(profile) & ins.transpose
    if not tr.any():
        return Investigation("transposes", title, "nothing found", "no Tensor-engine transposes")
    if not keys:
        return Investigation("transposes", title, "unavailable", NO_SOURCE_HELP)
    total = int(ins.flops[tr].sum())
    rows: list[dict[str, Any]] = []
    findings: list[LineFinding] = []
    for k, sel in _by_line(tr, line_of):
        fl = int(ins.flops[sel].sum())
        row: dict[str, Any] = {
            "file": keys[k][0],
            "line": keys[k][1],
            "count": int(sel.size),
            "flops": fl,
            "peak_ns": fl / pk.te_flops_per_s * 1e9,
            "share": fl / total if total else 0.0,
        }
        rows.append(row)
        findings.append(
            LineFinding.on(
                "NKI706",
                keys[k],
                f"{row['count']} Tensor-engine transpose(s): {fmt_ns(row['peak_ns'])} of Tensor-engine time at "
                f"peak, {row['share']:.0%} of all transpose overhead. Taking the operand pre-transposed "
                "(or loading it transposed once) removes them.",
                row,
            )
        )
    return Investigation(
        "transposes", title, "found", f"{int(tr.sum())} transpose(s) on {len(rows)} line(s)", findings, rows
    )


def investigate(profile: Profile, generation: str = "trn2") -> list[Investigation]:
    """All four investigations of one profile, in bounds.md order."""
    line_of, keys = _instr_lines(profile)
    pk = peaks(profile, generation)
    return [
        dma_efficiency(profile, line_of, keys),
        redundant_dma(profile, line_of, keys),
        tensor_engine(profile, line_of, keys, pk),
        transposes(profile, line_of, keys, pk),
    ]
