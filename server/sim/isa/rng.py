"""Random-number instructions (isa.md §3.21, §3.23): ``rng``, ``rand2``, ``dropout``, ``set_rng_seed``,
``rand_set_state``, ``rand_get_state``.

The hardware generators (LFSR before v4, XORWOW on v4) and their seeding are not documented, so streams
cannot match hardware bit for bit. The simulator uses a deterministic NumPy PCG64 stream per core and
engine, seeded with the core id until a kernel seeds it *(implementation choice)*; ``rand_get_state``
cannot produce a hardware-meaningful state and raises "not implemented".
"""

from __future__ import annotations

import hashlib

import numpy as np
from nki_studio.sim import checks, context, untaken
from nki_studio.sim.errors import HardwareLimitError, NotImplementedInSimulator
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction, engine
from nki_studio.sim.tensor import NkiTensor

_INT_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def _generator(eng: str) -> np.random.Generator:
    regs = context.current_core().registers
    gen = regs.get(f"{eng}.rng")
    if gen is None:
        gen = np.random.default_rng(context.current_core().core_id)
        regs[f"{eng}.rng"] = gen
    return gen


def _reseed(eng: str, seed_material: bytes) -> None:
    digest = hashlib.sha256(seed_material).digest()
    context.current_core().registers[f"{eng}.rng"] = np.random.default_rng(
        int.from_bytes(digest[:8], "little")
    )


@untaken.instruction
def rng(dst: NkiTensor, engine: object = engine.vector, name: str | None = None) -> NkiInstruction:
    """32 random bits per element, truncated to ``dst``'s integer width (v2: Vector only; v3+: Vector or
    GpSimd; GpSimd writes SBUF only)."""
    op = "nisa.rng"
    d = c.tensor(op, "dst", dst)
    c.dtype_in(op, "dst", d, _INT_DTYPES)
    allowed = ("vector",) if c.nc_version() < 3 else ("vector", "gpsimd")
    eng = c.engine_name(op, engine, "vector", allowed)
    c.no_psum_on_gpsimd(op, eng, dst=d)
    context.issue(op, eng, writes={"dst": d})
    bits = _generator(eng).integers(0, 1 << 32, size=d.shape, dtype=np.uint64).astype(np.uint32)
    c.store_raw(d, bits.astype(d._data.dtype))  # truncation to the low bits
    return c.handle(op, name)


@untaken.instruction
def rand2(dst: NkiTensor, min: object, max: object, name: str | None = None) -> NkiInstruction:
    """Uniform FP32 values in ``[min, max]`` cast to ``dst.dtype`` (v4, Vector engine)."""
    op = "nisa.rand2"
    c.require_version(op, 4)
    d = c.tensor(op, "dst", dst)
    p = d.shape[0]
    lo = c.scalar_operand(op, "min", min, p)
    hi = c.scalar_operand(op, "max", max, p)
    if np.any(np.asarray(lo) >= np.asarray(hi)):
        raise HardwareLimitError(f"{op}: min must be smaller than max")
    context.issue(op, "vector", writes={"dst": d})
    u = _generator("vector").random((p, checks.free_size(d)), dtype=np.float32)
    c.store(d, lo + u * (np.asarray(hi, np.float32) - lo))
    return c.handle(op, name)


@untaken.instruction
def dropout(dst: NkiTensor, data: NkiTensor, prob: object, name: str | None = None) -> NkiInstruction:
    """Zero each element with probability ``prob`` (scalar or ``(P, 1)``); kept values are not rescaled
    (isa.md §3.21). Vector engine."""
    op = "nisa.dropout"
    d = c.tensor(op, "dst", dst)
    x = c.tensor(op, "data", data)
    p, f = c.same_shape2d(op, dst=d, data=x)
    if d.dtype_name != x.dtype_name:
        raise HardwareLimitError(f"{op}: dst dtype {d.dtype_name} must equal data dtype {x.dtype_name}")
    pr = c.scalar_operand(op, "prob", prob, p)
    context.issue(op, "vector", reads={"data": x, "prob": prob}, writes={"dst": d}, flops=p * f)
    keep = _generator("vector").random((p, f), dtype=np.float32) >= pr
    raw = c.mat(x, raw=True)
    c.store(d, np.where(keep, raw, np.zeros((), raw.dtype)))
    return c.handle(op, name)


@untaken.instruction
def set_rng_seed(src_seeds: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Seed the Vector engine generator from a ``(1, 1)`` 32-bit SBUF/PSUM tile."""
    op = "nisa.set_rng_seed"
    t = c.tensor(op, "src_seeds", src_seeds)
    if t.size != 1 or t.dtype.itemsize != 4:
        raise HardwareLimitError(
            f"{op}: src_seeds must be a (1, 1) 32-bit tile, got {list(t.shape)} {t.dtype_name}"
        )
    context.issue(op, "vector", reads={"src_seeds": t})
    _reseed("vector", np.ascontiguousarray(c.mat(t, raw=True)).tobytes())
    return c.handle(op, name)


@untaken.instruction
def rand_set_state(
    src_seeds: NkiTensor, engine: object = engine.gpsimd, name: str | None = None
) -> NkiInstruction:
    """Load per-lane generator state (uint32 ``(P, n)``); v3 GpSimd only, v4 GpSimd or Vector. The state
    words seed the stream deterministically (not the hardware XORWOW mapping)."""
    op = "nisa.rand_set_state"
    c.require_version(op, 3)
    t = c.tensor(op, "src_seeds", src_seeds)
    c.dtype_in(op, "src_seeds", t, ("uint32",))
    eng = c.engine_name(op, engine, "gpsimd", ("gpsimd",) if c.nc_version() < 4 else ("gpsimd", "vector"))
    c.no_psum_on_gpsimd(op, eng, src_seeds=t)
    context.issue(op, eng, reads={"src_seeds": t})
    _reseed(eng, np.ascontiguousarray(c.mat(t, raw=True)).tobytes())
    return c.handle(op, name)


def rand_get_state(dst: NkiTensor, engine: object = engine.gpsimd, name: str | None = None) -> NkiInstruction:
    """Store per-lane generator state: the hardware state layout is not documented, so not simulated."""
    raise NotImplementedInSimulator("nisa.rand_get_state", "the hardware generator state is not documented")


__all__ = ["dropout", "rand2", "rand_get_state", "rand_set_state", "rng", "set_rng_seed"]
