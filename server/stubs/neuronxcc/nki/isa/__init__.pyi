"""``neuronxcc.nki.isa`` (``nisa``) of the legacy NKI API (NKI 0.1, "Beta 1", Neuron 2.20-2.26).

Legacy instructions *return* their result tile: ``acc = nisa.nc_matmul(a, b)`` is a new FP32 PSUM tile,
``y = nisa.activation(op=nl.exp, data=x)`` a new SBUF tile; ``dtype=`` picks the result's dtype and ``mask=`` the
elements computed. NKI 0.2 (Neuron 2.27) removed both: every instruction takes its destination first (``dst=``)
[v2.26.1 nki.isa.* pages; Neuron 2.27 release notes]. Signatures: ``nc_matmul``, ``activation``,
``activation_reduce``, ``iota``, ``affine_select`` and ``memset`` from their v2.26.1 pages; the other
value-returning ones are the current instruction's parameters without ``dst``/``name=`` plus ``mask=``/``dtype=``
(inferred from those pages and the 2.27 notes). The instructions the simulator runs only in their current ``dst=``
form, and the enums, are re-exported from ``nki.isa``. ``nki-studio migrate`` rewrites value-returning calls to
``dst=`` calls. Stubs written by nki-studio.
"""

from collections.abc import Sequence
from typing import Any

from nki.isa import bn_aggr as bn_aggr
from nki.isa import bn_stats as bn_stats
from nki.isa import dge_mode as dge_mode
from nki.isa import dma_copy as dma_copy
from nki.isa import engine as engine
from nki.isa import get_nc_version as get_nc_version
from nki.isa import gpsimd_engine as gpsimd_engine
from nki.isa import local_gather as local_gather
from nki.isa import max8 as max8
from nki.isa import nc_find_index8 as nc_find_index8
from nki.isa import nc_match_replace8 as nc_match_replace8
from nki.isa import nc_stream_shuffle as nc_stream_shuffle
from nki.isa import nc_version as nc_version
from nki.isa import oob_mode as oob_mode
from nki.isa import range_select as range_select
from nki.isa import reduce_cmd as reduce_cmd
from nki.isa import scalar_engine as scalar_engine
from nki.isa import select_reduce as select_reduce
from nki.isa import sequence_bounds as sequence_bounds
from nki.isa import tensor_copy_predicated as tensor_copy_predicated
from nki.isa import tensor_engine as tensor_engine
from nki.isa import unknown_engine as unknown_engine
from nki.isa import vector_engine as vector_engine
from nki.language import DTypeLike, NkiTensor

from ..language import ndarray

Op = Any  # an ``nl`` (or NumPy) operator such as ``nl.add`` or ``np.add``
Mask = Any  # a compile-time predicate over index tiles (``neuronxcc.nki.language.Mask``)

# ---------------------------------------------------------------------------------------------- value-returning
def nc_matmul(
    stationary: NkiTensor,
    moving: NkiTensor,
    *,
    is_stationary_onezero: bool = False,
    is_moving_onezero: bool = False,
    is_transpose: bool = False,
    tile_position: Sequence[int] = (),
    tile_size: Sequence[int] = (),
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """``stationary.T @ moving`` on the Tensor engine, returned as a new FP32 PSUM tile [v2.26.1 nki.isa.nc_matmul].

    Both operands in SBUF with the same partition size (<= 128, the contraction); free sizes <= 128 (stationary)
    and <= 512 (moving): ``(128, 126)`` and ``(128, 512)`` give a ``(126, 512)`` tile. ``psum_tile += nisa.nc_matmul(
    ...)`` accumulates a contraction over 128 in PSUM.
    """

def activation(
    op: Op,
    data: NkiTensor,
    *,
    bias: Any = None,
    scale: Any = 1.0,
    reduce_op: Op = None,
    reduce_res: NkiTensor | None = None,
    reduce_cmd: reduce_cmd = ...,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``op(data * scale + bias)`` on the Scalar engine, returned as a new tile; optionally reduced per partition
    into the engine's registers / ``reduce_res`` [v2.26.1 nki.isa.activation]."""

def activation_reduce(
    op: Op,
    data: NkiTensor,
    *,
    reduce_op: Op,
    reduce_res: NkiTensor,
    bias: Any = None,
    scale: Any = 1.0,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``activation`` plus a reduction of its result along the free dims into ``reduce_res`` (one element per
    partition) [v2.26.1 nki.isa.activation_reduce]."""

def nc_transpose(
    data: NkiTensor, engine: engine = ..., *, mask: Mask = None, dtype: DTypeLike | None = None, **kwargs: Any
) -> ndarray:
    """2-D partition/free transpose ``result[f, p] = data[p, f]``; same dtype."""

def tensor_reduce(
    op: Op,
    data: NkiTensor,
    axis: int | Sequence[int],
    negate: bool = False,
    keepdims: bool = False,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """Reduce ``data`` over trailing free axes with ``op`` (optionally negated)."""

def tensor_partition_reduce(
    op: Op, data: NkiTensor, *, mask: Mask = None, dtype: DTypeLike | None = None, **kwargs: Any
) -> ndarray:
    """Reduce across partitions into a (1, free...) tile with add/average/max/bitwise ops."""

def tensor_tensor(
    data1: NkiTensor,
    data2: NkiTensor,
    op: Op,
    engine: engine = ...,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``result = op(data1, data2)`` element-wise (no broadcasting; same partitions and elements per partition)."""

def tensor_tensor_scan(
    data0: NkiTensor,
    data1: NkiTensor,
    initial: Any,
    op0: Op,
    op1: Op,
    reverse0: bool = False,
    reverse1: bool = False,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """Sequential scan per partition: ``prev = op1(op0(data0[:, i], prev), data1[:, i])``."""

def scalar_tensor_tensor(
    data: NkiTensor,
    op0: Op,
    operand0: Any,
    op1: Op,
    operand1: NkiTensor,
    reverse0: bool = False,
    reverse1: bool = False,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``result = op1(op0(data, operand0), operand1)``: a scalar/(P,1) stage then a full-tile stage."""

def tensor_scalar(
    data: NkiTensor,
    op0: Op,
    operand0: Any,
    reverse0: bool = False,
    op1: Op = None,
    operand1: Any = None,
    reverse1: bool = False,
    engine: engine = ...,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``result = op1(op0(data, operand0), operand1)`` with scalar or (P,1) operands broadcast along the free dims."""

def tensor_scalar_reduce(
    data: NkiTensor,
    op0: Op,
    operand0: Any,
    reduce_op: Op,
    reduce_res: NkiTensor | None = None,
    reverse0: bool = False,
    reduce_cmd: reduce_cmd = ...,
    reduce_init: Any = None,
    reduce_res_negate: bool = False,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``result = op0(data, operand0)`` and reduce it per partition into the accumulator / ``reduce_res`` (P,1)."""

def tensor_copy(
    src: NkiTensor, engine: engine = ..., *, mask: Mask = None, dtype: DTypeLike | None = None, **kwargs: Any
) -> ndarray:
    """``result = src`` (bit-exact for equal dtypes, else cast through FP32). SBUF/PSUM in and out."""

def reciprocal(
    data: NkiTensor, *, mask: Mask = None, dtype: DTypeLike | None = None, **kwargs: Any
) -> ndarray:
    """``result = 1 / data`` in FP32 (more precise than the Scalar activation)."""

def dropout(
    data: NkiTensor, prob: Any, *, mask: Mask = None, dtype: DTypeLike | None = None, **kwargs: Any
) -> ndarray:
    """Zero each element with probability ``prob`` (kept values are not rescaled)."""

def dma_transpose(
    src: NkiTensor,
    axes: Sequence[int] | None = None,
    priority: int | None = None,
    dge_mode: dge_mode | int = ...,
    oob_mode: oob_mode = ...,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """Transpose while copying HBM->SBUF or SBUF->SBUF."""

# ---------------------------------------------------------------------------------------------- legacy forms
def iota(expr: Any, dtype: DTypeLike, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """A new SBUF tile holding the values of an index-tile expression (``nl.arange``/``nl.mgrid`` arithmetic) on
    GpSimd [v2.26.1 nki.isa.iota]. NKI 0.2 replaced ``expr`` with ``pattern=``/``offset=``."""

def affine_select(
    pred: Any,
    on_true_tile: NkiTensor,
    on_false_value: Any,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``on_true_tile`` where the affine predicate over index tiles holds, else ``on_false_value``, as a new tile
    (GpSimd; causal masks) [v2.26.1 nki.isa.affine_select]. NKI 0.2 replaced ``pred`` with ``pattern=``/``cmp_op=``."""

def memset(
    shape: Sequence[int],
    value: Any,
    dtype: DTypeLike,
    *,
    mask: Mask = None,
    engine: engine = ...,
    **kwargs: Any,
) -> ndarray:
    """A new tile of ``shape`` filled with ``value`` [v2.26.1 nki.isa.memset]. NKI 0.2: ``nisa.memset(dst, value)``."""
