"""The profile columns the bounds and investigations read (bounds.md §1, §3), beyond what the heatmap needs:
``Instruction.adjusted_flops``, ``tensor_instruction_type`` and the K/M/N in ``operands``;
``DmaPacketAggregated.source``/``dest``, SBUF partition counts and ``is_transpose_mode``; ``TensorInfo``.

Every column is optional: a profile without it simply leaves that field ``None`` and the analysis that needs
it names what was missing. A numeric column holding a value ``validate`` refuses (NaN, an infinity, a negative
count, a value out of range: a corrupt or type-confused file) is treated as missing the same way, never read as
a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from nki_studio.profile.model import Codes, ProfileError, TensorRole
from nki_studio.profile.readers.common import codes_of, filled_numpy
from nki_studio.profile.validate import int_values

INSTRUCTION_COLUMNS = ("adjusted_flops", "tensor_instruction_type", "operands")
DMA_COLUMNS = ("source", "dest", "read_num_sbuf_partitions", "write_num_sbuf_partitions", "is_transpose_mode")
TENSOR_INFO_COLUMNS = ("variable_name", "type", "size")

# ``operands`` carries K*M and N in an undocumented format (neuron-explorer >= 2.22, bounds.md §3.3): the profile
# docs call the column "Input operands for the instruction", free text (parquet-schema.md), and no Neuron docs page
# (v2.33) gives its grammar. Parsed defensively, format INFERRED: the first "a*b" product is K*M, and N is the
# value of an ``N=``/``N:`` token after it. The investigation labels these figures ``INFERRED_KMN``.
_KMN = r"(?P<k>\d+)\s*\*\s*(?P<m>\d+)(?:.*?\bN\s*[=:]\s*(?P<n>\d+))?"


def _strings(table: Any, name: str) -> Codes | None:
    if name not in table.column_names:
        return None
    col = table.column(name)
    base = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    if not (pa.types.is_string(base) or pa.types.is_large_string(base)):
        return None
    return codes_of(col)


def _ints(table: Any, tname: str, name: str) -> npt.NDArray[np.int64] | None:
    """An optional integer column (nulls as 0), or None when it is absent, not numeric, all null or holds a
    value ``validate.int_values`` refuses."""
    if name not in table.column_names:
        return None
    col = table.column(name)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)) or col.null_count == len(col):
        return None
    try:
        return int_values(filled_numpy(col, 0, np.float64), tname, name)
    except ProfileError:
        return None


def instruction_details(
    table: Any, is_tensor: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64] | None, npt.NDArray[np.bool_] | None, npt.NDArray[np.int32] | None]:
    """``flops``, ``transpose`` and ``matmul_kmn`` of the Instruction table (``is_tensor``: Tensor-engine rows,
    the only ones whose operands are parsed)."""
    flops = _ints(table, "Instruction", "adjusted_flops")
    kind = _strings(table, "tensor_instruction_type")
    transpose = None if kind is None else kind.mask_of({"TRANSPOSE", '["TRANSPOSE"]'})
    return flops, transpose, _kmn(table, is_tensor)


def _kmn(table: Any, is_tensor: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32] | None:
    """K/M/N of the Tensor-engine rows from ``operands``. The column holds about one distinct text per row, so
    only the Tensor rows' texts are taken from Arrow and each distinct one is parsed once."""
    if "operands" not in table.column_names or not is_tensor.any():
        return None
    col = table.column("operands")
    base = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    if not (pa.types.is_string(base) or pa.types.is_large_string(base)):
        return None
    import pyarrow.compute as pc  # ~0.1 s to import: only for profiles whose Tensor rows have operands

    rows = np.flatnonzero(is_tensor)
    texts = col.take(pa.array(rows))
    if pa.types.is_dictionary(texts.type):
        texts = texts.cast(base)
    # Run by Arrow over the Tensor rows at once (a Python regex per row costs seconds at 1M rows).
    found = pc.extract_regex(texts, _KMN)
    values = np.full((rows.size, 3), -1, np.int32)
    for j, field in enumerate(("k", "m", "n")):
        got = pc.struct_field(found, field)
        got = pc.if_else(pc.greater(pc.utf8_length(got), 0), got, pa.scalar(None, pa.string()))  # "": absent
        values[:, j] = filled_numpy(pc.cast(got, pa.int64(), safe=False).combine_chunks(), -1, np.int64)
    if not (values >= 0).any():
        return None
    kmn = np.full((is_tensor.size, 3), -1, np.int32)
    kmn[rows] = values
    return kmn


def dma_details(
    table: Any,
) -> tuple[Codes | None, Codes | None, npt.NDArray[np.int32] | None, npt.NDArray[np.bool_] | None]:
    """``source``, ``dest``, SBUF partitions per transfer and ``transpose`` of DmaPacketAggregated. A load
    writes SBUF partitions and a store reads them, so the larger of the two counts is the transfer's."""
    read_p = _ints(table, "DmaPacketAggregated", "read_num_sbuf_partitions")
    write_p = _ints(table, "DmaPacketAggregated", "write_num_sbuf_partitions")
    parts = None
    if read_p is not None or write_p is not None:
        both = [p for p in (read_p, write_p) if p is not None]
        parts = np.maximum.reduce(both).astype(np.int32) if len(both) > 1 else both[0].astype(np.int32)
    transpose = None
    if "is_transpose_mode" in table.column_names:
        col = table.column("is_transpose_mode")
        if pa.types.is_boolean(col.type) and col.null_count < len(col):
            transpose = np.array([bool(v) for v in col.to_pylist()], bool)
    return _strings(table, "source"), _strings(table, "dest"), parts, transpose


def tensor_roles(table: Any) -> list[TensorRole]:
    """Kernel inputs and outputs from TensorInfo (``type`` IN/OUT), with their sizes in bytes."""
    if (
        table is None
        or table.num_rows == 0
        or not {"variable_name", "type", "size"} <= set(table.column_names)
    ):
        return []
    names = table.column("variable_name").to_pylist()
    kinds = table.column("type").to_pylist()
    sizes = _ints(table, "TensorInfo", "size")
    if sizes is None:
        return []
    return [
        TensorRole(str(n), str(k), int(s))
        for n, k, s in zip(names, kinds, sizes, strict=True)
        if n and k in ("IN", "OUT") and s > 0
    ]
