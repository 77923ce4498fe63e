"""Tensor Engine instructions (isa.md §1): ``nc_matmul`` and ``nc_transpose`` (MX matmul: ``mx.py``)."""

from __future__ import annotations

import weakref

import numpy as np
from nki_studio.sim import checks, context, untaken
from nki_studio.sim.access import write
from nki_studio.sim.errors import HardwareLimitError, NotImplementedInSimulator
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction, engine, matmul_perf_mode
from nki_studio.sim.tensor import NkiTensor
from threadpoolctl import ThreadpoolController

_MATMUL = "nisa.nc_matmul"
_FP8 = frozenset({"float8_e4m3", "float8_e5m2", "float8_e4m3fn"})
_WIDE = frozenset({"float32", "tfloat32"})


_blas: ThreadpoolController | None = None


def _single_thread_blas() -> None:
    """Run BLAS on one thread for the rest of this simulation: PE-array matmuls are at most 128 x 128 x 8192,
    where OpenBLAS thread hand-offs cost more than they save (up to 50x slower on a loaded 2-core machine,
    see benchmarks/sim_bench.py). Toggling per instruction costs ~1 ms, so the limit is set once per
    simulation and the original thread count comes back when the simulation context is released."""
    global _blas
    ctx = context.current()
    if ctx.shared.get("blas_single_thread"):
        return
    if _blas is None:
        _blas = ThreadpoolController()
    limiter = _blas.limit(limits=1, user_api="blas")
    ctx.shared["blas_single_thread"] = True
    weakref.finalize(ctx, limiter.restore_original_limits)


def pe_matmul(stationary: np.ndarray, moving: np.ndarray) -> np.ndarray:
    """``stationary[K, M].T @ moving[K, N]`` in FP32 (np.dot passes the transpose to BLAS without a copy)."""
    _single_thread_blas()
    return np.dot(stationary.T, moving)


def _input_dtypes(op: str, st: NkiTensor, mv: NkiTensor) -> None:
    """isa.md §1.1: fp8/bf16/fp16/tf32/fp32 inputs (float8_e4m3fn from v4); fp32/tf32 only with each other;
    legacy float8_e4m3 and OCP float8_e4m3fn never together."""
    allowed = set(c.FLOAT_DTYPES)
    if c.nc_version() < 4:
        allowed.discard("float8_e4m3fn")
    a = c.dtype_in(op, "stationary", st, frozenset(allowed))
    b = c.dtype_in(op, "moving", mv, frozenset(allowed))
    if (a in _WIDE) != (b in _WIDE):
        raise HardwareLimitError(
            f"{op}: a {a} stationary cannot be multiplied with a {b} moving tensor "
            f"(float32/tfloat32 only combine with each other)"
        )
    if {a, b} == {"float8_e4m3", "float8_e4m3fn"}:
        raise HardwareLimitError(f"{op}: float8_e4m3 and float8_e4m3fn cannot be mixed in one matmul")


def tiling(op: str, tile_position: object, tile_size: object, k: int, m: int, perf: str) -> None:
    """Row/column tiling of the PE array (isa.md §1.1). AMBIGUOUS there: the parameter docs forbid column
    tiling, the body text and a legacy test use it; we accept column tiling (docs/simulator.md)."""
    if not tile_position and not tile_size:
        return
    if not tile_position or not tile_size:
        raise HardwareLimitError(f"{op}: tile_position and tile_size must be given together")
    try:
        (row, col), (rows, cols) = ((int(x) for x in tile_position), (int(x) for x in tile_size))  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise HardwareLimitError(f"{op}: tile_position/tile_size must be pairs of ints") from None
    sizes = (32, 64, 128) if c.nc_version() >= 3 else (64, 128)
    for what, size, start in (("row", rows, row), ("column", cols, col)):
        if size not in sizes:
            raise HardwareLimitError(f"{op}: tile {what} size {size} is not one of {sizes} on this target")
        if start % size or not 0 <= start < 128:
            raise HardwareLimitError(
                f"{op}: tile {what} start {start} must be a multiple of {size} below 128"
            )
    if k > rows:
        raise HardwareLimitError(f"{op}: stationary partitions {k} exceed the tile row size {rows}")
    if m > cols:
        raise HardwareLimitError(f"{op}: stationary free size {m} exceeds the tile column size {cols}")
    if perf == matmul_perf_mode.double_row.value and cols != 128:
        raise HardwareLimitError(f"{op}: perf_mode=double_row cannot be combined with column tiling")


_INDIRECT_DTYPES = ("float16", "bfloat16", "float8_e4m3", "float8_e5m2", "float8_e4m3fn")
_TENSOR_GROUP = 32  # offsets per index column on the Tensor engine (isa.md §0.8)


def tensor_engine_view(op: str, role: str, t: NkiTensor, *, tiled: bool, inputs: bool = True) -> NkiTensor:
    """An operand as the Tensor engine reads/writes it: an ``.indirect()`` view regrouped to 32-offset index
    groups (v4+, isa.md §0.8 and §1.1: 16-bit/FP8 inputs only, no tiling); other views unchanged."""
    if not t.is_indirect():
        return t
    c.require_version(op, 4, f"with an indirect {role}")
    if tiled:
        raise HardwareLimitError(
            f"{op}: tensor indirection ({role}) cannot be combined with tile_position/tile_size"
        )
    if inputs:
        c.dtype_in(op, role, t, _INDIRECT_DTYPES)
    regrouped = t.regrouped(_TENSOR_GROUP)
    if regrouped is None:
        raise NotImplementedInSimulator(
            f"{op} with an indirect {role}", "only a view made by .indirect() itself (not a view of it)"
        )
    return regrouped


def psum_bank(op: str, dst: NkiTensor) -> None:
    """Before v4 a matmul writes within one 2 KiB PSUM bank (isa.md §1.1 "one PSUM bank of FP32").
    Bank positions are counted from the start of each partition row of the PSUM tensor, i.e. PSUM
    tensors are taken to start on a bank boundary *(inferred: explicit PSUM addresses must, [MIG])*."""
    if c.nc_version() >= 4 or dst.is_indirect() or dst._data is not dst.storage.data or not dst.size:
        return
    row = dst.storage.data.size // max(dst.storage.shape[0], 1)
    first = dst.offset % row
    span = sum((n - 1) * abs(s) for n, s in zip(dst.shape[1:], dst.strides[1:], strict=False))
    size = dst.dtype.itemsize
    bank = c.limits().psum_bank_bytes
    if (first * size) // bank != ((first + span) * size + size - 1) // bank:
        raise HardwareLimitError(
            f"{op} dst (bytes {first * size}..{(first + span + 1) * size} of its PSUM "
            f"partition row) crosses a {bank}-byte PSUM bank boundary"
        )


def moving_limit(dst: NkiTensor) -> int:
    lim = c.limits()
    return (
        lim.matmul_moving_free_max_bf16 if dst.dtype_name == "bfloat16" else lim.matmul_moving_free_max_fp32
    )


def accumulate_into(op: str, dst: NkiTensor, result: np.ndarray, accumulate: object) -> None:
    """PSUM accumulation (isa.md §1.1, implementation choice documented there): every PSUM element carries a
    "written by a matmul" flag; ``accumulate=None`` accumulates exactly where it is set, per element, so
    overlapping partial writes (convolution pattern) accumulate; ``True`` on unflagged PSUM warns."""
    flags = c.psum_flags(dst)
    if flags is None:  # untracked reinterpreted view
        write(dst, result, accumulate=bool(accumulate))
        return
    fl = np.asarray(flags)
    if accumulate is None:
        if fl.all():
            write(dst, result, accumulate=True)
        elif not fl.any():
            write(dst, result)
        else:
            current = c.mat(dst).reshape(dst.shape)
            write(dst, np.where(fl, current + result.reshape(dst.shape), result.reshape(dst.shape)))
    elif accumulate:
        if not fl.all():
            context.warn(f"{op}(accumulate=True) into PSUM that no matmul wrote: undefined on hardware")
        write(dst, result, accumulate=True)
    else:
        write(dst, result)
    flags[...] = True


@untaken.instruction
def nc_matmul(
    dst: NkiTensor,
    stationary: NkiTensor,
    moving: NkiTensor,
    is_stationary_onezero: bool = False,
    is_moving_onezero: bool = False,
    is_transpose: bool = False,
    accumulate: bool | None = None,
    tile_position: object = (),
    tile_size: object = (),
    perf_mode: object = matmul_perf_mode.none,
    name: str | None = None,
) -> NkiInstruction:
    """``dst[M, N] (+)= stationary[K, M].T @ moving[K, N]`` in FP32 (isa.md §1.1)."""
    op = _MATMUL
    d = c.tensor(op, "dst", dst, c.PSUM)
    st = c.tensor(op, "stationary", stationary, c.SBUF)
    mv = c.tensor(op, "moving", moving, c.SBUF)
    # "incompatible with tiling": tile_position must be (0, 0) or unset (isa.md §1.1)
    tiled = isinstance(tile_position, (tuple, list)) and any(int(x) for x in tile_position)
    if is_transpose and mv.is_indirect():
        raise HardwareLimitError(f"{op}: with is_transpose=True, moving may not use tensor indirection")
    d = tensor_engine_view(op, "dst", d, tiled=tiled, inputs=False)
    st = tensor_engine_view(op, "stationary", st, tiled=tiled)
    mv = tensor_engine_view(op, "moving", mv, tiled=tiled)
    perf = perf_mode.value if isinstance(perf_mode, matmul_perf_mode) else str(perf_mode or "none")
    if perf not in ("none", "double_row"):
        raise HardwareLimitError(f"{op}: perf_mode={perf_mode!r} is not an nisa.matmul_perf_mode member")
    lim = c.limits()
    k = checks.same_partitions(op, stationary=st, moving=mv)
    m, n = checks.free_size(st), checks.free_size(mv)
    if is_transpose:
        return _pe_transpose(op, d, st, mv, k, m, name)
    if perf == "double_row":
        c.require_version(op, 3, "perf_mode=double_row")
        c.dtype_in(op, "stationary", st, _FP8)
        c.dtype_in(op, "moving", mv, _FP8)
        if st.ndim < 3 or st.shape[1] != 2 or mv.ndim < 3 or mv.shape[1] != 2:
            raise HardwareLimitError(
                f"{op}: perf_mode=double_row needs stationary [K, 2, M] and moving [K, 2, N], "
                f"got {list(st.shape)} and {list(mv.shape)}"
            )
        m, n = m // 2, n // 2
    _input_dtypes(op, st, mv)
    if d.dtype_name not in lim.psum_dst_dtypes:
        raise HardwareLimitError(
            f"{op} dst dtype {d.dtype_name} is not supported on {lim.generation.value}; "
            f"expected {' or '.join(lim.psum_dst_dtypes)}"
        )
    if k > lim.matmul_contraction_max:
        raise HardwareLimitError(
            f"{op} contraction (partition) size {k} exceeds maximum {lim.matmul_contraction_max}"
        )
    if m > lim.matmul_stationary_free_max:
        raise HardwareLimitError(
            f"{op} stationary free size {m} exceeds maximum {lim.matmul_stationary_free_max}"
        )
    n_max = moving_limit(d)
    if n > n_max:
        raise HardwareLimitError(
            f"{op} moving free size {n} exceeds maximum {n_max} for a {d.dtype_name} dst "
            f"on {lim.generation.value}"
        )
    if d.shape[0] != m or checks.free_size(d) != n:
        raise HardwareLimitError(
            f"{op} dst must be [{m}, {n}] (stationary free x moving free), got {list(d.shape)}"
        )
    tiling(op, tile_position, tile_size, k, m, perf)
    psum_bank(op, d)
    kk = 2 * k if perf == "double_row" else k
    context.issue(
        op, "tensor", reads={"stationary": st, "moving": mv}, writes={"dst": d}, flops=2 * kk * m * n
    )
    s_vals = c.mat(st).reshape(kk, m)  # double_row: [K, 2, M] row-major is the 2K contraction
    v_vals = c.mat(mv).reshape(kk, n)
    accumulate_into(op, d, pe_matmul(s_vals, v_vals), accumulate)
    return c.handle(op, name)


def _pe_transpose(
    op: str, d: NkiTensor, st: NkiTensor, mv: NkiTensor, k: int, m: int, name: str | None
) -> NkiInstruction:
    """``is_transpose=True``: bit-exact transpose of ``stationary`` through the PE array (v3+ bit-accurate;
    isa.md §1.1). The output may keep a 16-bit input dtype; otherwise it is float32."""
    if d.shape[0] != m or checks.free_size(d) != k:
        raise HardwareLimitError(f"{op}(is_transpose=True) dst must be [{m}, {k}], got {list(d.shape)}")
    if d.dtype_name not in (st.dtype_name, "float32"):
        raise HardwareLimitError(
            f"{op}(is_transpose=True) dst dtype {d.dtype_name} must be float32 or the "
            f"stationary dtype {st.dtype_name}"
        )
    if k > c.limits().matmul_contraction_max or m > c.limits().matmul_stationary_free_max:
        raise HardwareLimitError(f"{op}(is_transpose=True) stationary {list(st.shape)} exceeds [128, 128]")
    context.issue(op, "tensor", reads={"stationary": st, "moving": mv}, writes={"dst": d}, flops=0)
    raw = c.same_storage_dtype(d, st)
    c.store(d, c.mat(st, raw=raw).T)
    return c.handle(op, name)


@untaken.instruction
def nc_transpose(
    dst: NkiTensor, data: NkiTensor, engine: object = engine.unknown, name: str | None = None
) -> NkiInstruction:
    """``dst[f, p] = data[p, f]`` (free dims flattened), bit-exact (isa.md §1.3).

    Engine choice for ``engine.unknown`` *(inferred)*: Tensor when ``dst`` is PSUM and ``data`` SBUF, else
    Vector. Tensor: data <= [128, 128] SBUF -> PSUM; Vector: <= [32, 32], SBUF or PSUM.
    """
    op = "nisa.nc_transpose"
    d = c.tensor(op, "dst", dst)
    x = c.tensor(op, "data", data)
    default = "tensor" if d.buffer.kind == "psum" and x.buffer.kind == "sbuf" else "vector"
    eng = c.engine_name(op, engine, default, ("tensor", "vector"))
    p, f = x.shape[0], checks.free_size(x)
    if eng == "tensor":
        checks.buffers(op, "data", x, c.SBUF)
        checks.buffers(op, "dst", d, c.PSUM)
        side = c.limits().matmul_contraction_max
    else:
        side = 32  # 32x32 transpose banks of the Vector engine (isa.md §1.3)
    if p > side or f > side:
        raise HardwareLimitError(
            f"{op} on the {eng} engine handles at most [{side}, {side}], data is [{p}, {f}]"
        )
    if d.dtype_name != x.dtype_name:
        raise HardwareLimitError(f"{op}: dst dtype {d.dtype_name} must equal data dtype {x.dtype_name}")
    if d.shape[0] != f or checks.free_size(d) != p:
        raise HardwareLimitError(f"{op} dst must be [{f}, {p}], got {list(d.shape)}")
    context.issue(op, eng, reads={"data": x}, writes={"dst": d})
    c.store(d, c.mat(x, raw=c.same_storage_dtype(d, x)).T)
    return c.handle(op, name)
