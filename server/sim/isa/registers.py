"""Engine registers and scalars (isa.md §7; nki-0.7.md §2.4): ``register_alloc/move/load/store`` for
``VirtualRegister`` (0.6) and ``scalar_load``/``scalar_store`` for ``NkiScalar`` (0.7, tracer front end only).

Register instructions run on an engine sequencer; the trace records them on the ``sync`` engine
*(implementation choice: the docs do not name the sequencer)*.
"""

from __future__ import annotations

import numpy as np
from nki_studio.model.targets import NkiVersion
from nki_studio.sim import context, dtypes, untaken
from nki_studio.sim.access import read
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.scalars import NkiScalar, VirtualRegister, index_value
from nki_studio.sim.tensor import NkiTensor

_REG_REGIONS = ("hbm", "sbuf")


def _one_element(op: str, role: str, value: object) -> NkiTensor:
    t = c.tensor(op, role, value, _REG_REGIONS)
    if t.size != 1:
        raise HardwareLimitError(f"{op} {role} must hold exactly one element, got shape {list(t.shape)}")
    return t


def _register(op: str, role: str, value: object) -> VirtualRegister:
    if not isinstance(value, VirtualRegister):
        raise HardwareLimitError(
            f"{op} {role} must be a VirtualRegister (from nisa.register_alloc), not {type(value).__name__}"
        )
    return value


def register_alloc(x: object = None) -> VirtualRegister:
    """A new register, uninitialised or set to the int ``x`` (or the single value of a tensor ``x``)."""
    if isinstance(x, NkiTensor):
        t = _one_element("nisa.register_alloc", "x", x)
        return VirtualRegister(int(read(t, raw=True).reshape(-1)[0]))
    return VirtualRegister(None if x is None else index_value(x))


def register_move(dst: VirtualRegister, src: object) -> None:
    """``dst = src`` (an int constant or a register; isa.md §7, 0.6.0 stub)."""
    reg = _register("nisa.register_move", "dst", dst)
    value = index_value(src)
    if not context.untaken():  # an untaken nl.if_else branch leaves registers alone
        reg.set(value)


@untaken.effect_instruction
def register_load(dst: VirtualRegister, src: NkiTensor) -> None:
    """Load the single element of a 1-element HBM/SBUF tensor into ``dst``."""
    op = "nisa.register_load"
    reg = _register(op, "dst", dst)
    t = _one_element(op, "src", src)
    context.issue(op, "sync", reads={"src": t})
    raw = np.asarray(read(t, raw=True)).reshape(-1)[0]
    reg.set(int(raw) if dtypes.is_int(t.dtype) else int(np.rint(float(raw))))


@untaken.effect_instruction
def register_store(dst: NkiTensor, src: VirtualRegister) -> None:
    """Store a register's value into a 1-element HBM/SBUF tensor."""
    op = "nisa.register_store"
    t = _one_element(op, "dst", dst)
    reg = _register(op, "src", src)
    context.issue(op, "sync", writes={"dst": t})
    c.store(t, np.asarray(reg.sim_value(), np.int64).reshape(t.shape))


def _tracer_only(op: str) -> None:
    if context.current().options.nki_version < NkiVersion(0, 7):
        raise HardwareLimitError(
            f"{op} exists only in NKI 0.7 and newer (tracer front end); the target is "
            f"NKI {context.current().options.nki_version}"
        )


def scalar_load(src: NkiTensor) -> NkiScalar:
    """An ``NkiScalar`` from a 1x1 int32/int64 SBUF or HBM tensor (nki-0.7.md §2.4)."""
    op = "nisa.scalar_load"
    _tracer_only(op)
    t = _one_element(op, "src", src)
    name = c.dtype_in(op, "src", t, ("int32", "int64"))
    if context.untaken():
        # Traced, not run: the value is unknown. 0 keeps every offset derived from it in range; an untaken
        # fori_loop runs its body once whatever its bounds (implementation choice).
        return NkiScalar(0, name)
    context.issue(op, "sync", reads={"src": t})
    return NkiScalar(int(np.asarray(read(t, raw=True)).reshape(-1)[0]), name)


@untaken.effect_instruction
def scalar_store(dst: NkiTensor, value: NkiScalar) -> None:
    """Store an ``NkiScalar`` into a 1x1 tensor of the same width; Python ints are rejected (use memset)."""
    op = "nisa.scalar_store"
    _tracer_only(op)
    t = _one_element(op, "dst", dst)
    if not isinstance(value, NkiScalar):
        raise HardwareLimitError(
            f"{op} value must be an NkiScalar, not {type(value).__name__} (use nisa.memset for constants)"
        )
    if t.dtype_name != value.dtype:
        raise HardwareLimitError(
            f"{op}: a {value.dtype} scalar cannot be stored into a {t.dtype_name} tensor"
        )
    context.issue(op, "sync", writes={"dst": t})
    c.store(t, np.asarray(value.sim_value(), np.int64).reshape(t.shape))


def get_nc_version() -> int:
    """``nisa.get_nc_version()``: the simulated target's ``nisa.nc_version`` (isa.md §8)."""
    from nki_studio.sim.isa.enums import nc_version

    return nc_version(c.nc_version())


def get_nc_sub_version() -> int:
    """``nisa.get_nc_sub_version()``: silicon revision; the simulator models revision 0 *(implementation
    choice)*."""
    return 0
