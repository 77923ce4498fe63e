"""Loops, control flow, SPMD queries and debugging (language.md §10-§12, nki-0.7.md §4).

Static loop forms are plain Python ``range``. ``fori_loop``/``while_loop`` run their body eagerly with a
loop variable object (``NkiScalar`` under 0.7, a frozen ``VirtualRegister`` when a bound is a register or
the target is 0.6). ``dynamic_range`` exists for NKI 0.6 (deprecated, warns) and is refused for 0.7.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from nki_studio.model import toolchain_rejections as rejects
from nki_studio.model.targets import NkiVersion
from nki_studio.sim import context, untaken
from nki_studio.sim.access import read
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.rejections import refusal, toolchain_rejects
from nki_studio.sim.scalars import NkiScalar, VirtualRegister, index_value
from nki_studio.sim.tensor import NkiTensor

_V07 = NkiVersion(0, 7)
_NO_REORDER = "nl.no_reorder.depth"


def affine_range(start: int, stop: int | None = None, step: int = 1) -> range:
    """Deprecated alias of ``range`` (fully unrolled)."""
    return range(start) if stop is None else range(start, stop, step)


def static_range(start: int, stop: int | None = None, step: int = 1) -> range:
    """Deprecated alias of ``range``."""
    return affine_range(start, stop, step)


def sequential_range(start: int, stop: int | None = None, step: int = 1) -> range:
    """Deprecated alias of ``range``."""
    return affine_range(start, stop, step)


def _bound(value: object, what: str) -> int:
    if isinstance(value, NkiScalar) and value.dtype != "int32":
        toolchain_rejects(rejects.FORI_INT64_BOUND, what)
    try:
        return index_value(value)
    except TypeError:
        raise SimulationError(
            f"{what}: bound must be an int, NkiScalar or VirtualRegister, not {value!r}"
        ) from None


def _step(step: object, what: str) -> int:
    if isinstance(step, int) and not isinstance(step, bool) and step > 0:
        return step
    raise refusal(rejects.LOOP_STEP, what, f"got {step!r}")  # no step to run the loop with


def _check_reorder(what: str) -> None:
    if context.current_core().registers.get(_NO_REORDER, 0):
        toolchain_rejects(rejects.LOOP_IN_NO_REORDER, what)


def dynamic_range(start: object, stop: object = None, step: int = 1) -> Iterator[VirtualRegister]:
    """NKI 0.6 on-device loop (deprecated): yields a frozen register per iteration. Removed in 0.7."""
    toolchain_rejects(rejects.DYNAMIC_RANGE_REMOVED)
    _check_reorder("nl.dynamic_range")
    toolchain_rejects(rejects.DYNAMIC_RANGE_DEPRECATED)
    lo, hi = (
        (0, _bound(start, "nl.dynamic_range"))
        if stop is None
        else (_bound(start, "nl.dynamic_range"), _bound(stop, "nl.dynamic_range"))
    )
    for i in range(lo, hi, _step(step, "nl.dynamic_range")):
        yield VirtualRegister(i, frozen=True)


def fori_loop(
    lower: object, upper: object, body_fun: Callable[[object], object], step: int = 1, *, unroll: bool = False
) -> None:
    """Run ``body_fun(i)`` for ``i`` in ``range(lower, upper, step)``; the body must return None.

    ``unroll=True`` (the ``latest`` control-flow page, 2026-11-13: traced once, unrolled by the compiler) needs
    bounds known at compile time; the simulated values are the same either way.
    """
    ctx = context.current()
    _check_reorder("nl.fori_loop")
    if unroll and any(isinstance(b, (VirtualRegister, NkiScalar)) for b in (lower, upper)):
        raise SimulationError(
            "nl.fori_loop(unroll=True): the bounds must be known at compile time, not runtime registers/scalars"
        )
    lo, hi = _bound(lower, "nl.fori_loop"), _bound(upper, "nl.fori_loop")
    st = _step(step, "nl.fori_loop")
    use_register = (
        isinstance(lower, VirtualRegister)
        or isinstance(upper, VirtualRegister)
        or ctx.options.nki_version < _V07
    )
    # In an untaken nl.if_else branch the loop is traced, not run: tracing calls the body once (inferred).
    for i in range(lo, lo + 1) if context.untaken() else range(lo, hi, st):
        var: object = VirtualRegister(i, frozen=True) if use_register else NkiScalar(i, "int32")
        if body_fun(var) is not None:
            toolchain_rejects(rejects.FORI_BODY_RETURNS, "nl.fori_loop")


def while_loop(init: object, body_fun: Callable[[object], object]) -> None:
    """``r = init; while r != 0: r = body_fun(r)``; the body returns the next condition register."""
    ctx = context.current()
    _check_reorder("nl.while_loop")
    cond = init
    traced_only = context.untaken()  # an untaken nl.if_else branch: the body is traced once, not run
    for _ in range(ctx.options.while_loop_cap):
        if not traced_only and _bound(cond, "nl.while_loop") == 0:
            return
        cond = body_fun(cond)
        if cond is None:
            raise SimulationError("nl.while_loop: the body must return the next condition register")
        if traced_only:
            return
    raise SimulationError(f"nl.while_loop did not terminate within {ctx.options.while_loop_cap} iterations")


def _condition(cond: object) -> tuple[int, bool]:
    """The value behind an ``nl.if_else`` condition and whether it is known at compile time (the ``latest``
    if_else page: a Python bool/int, or a 32-bit NkiScalar, arithmetic and comparison results included)."""
    if isinstance(cond, bool):
        return int(cond), True
    if isinstance(cond, NkiScalar):
        if cond.dtype != "int32":
            toolchain_rejects(rejects.IF_ELSE_INT64_CONDITION, "nl.if_else")
        return cond.sim_value(), False
    if isinstance(cond, VirtualRegister):
        # The page: cond "must be available on all engines: every sequencer runs the branch, so a value
        # bound to one sequencer is rejected". It names no such value. The narrowest reading: a register,
        # the only value the docs place in one engine sequencer ("Each engine sequencer ... maintains its own
        # set of physical registers", register_alloc page), though the compiler may place it on all of them.
        # The docs being silent on what is rejected, it is accepted with a warning (inferred).
        context.current().warn(
            "nl.if_else with a VirtualRegister condition: the docs accept a Python bool/int or a 32-bit "
            'NkiScalar (from nisa.scalar_load) and reject "a value bound to one sequencer"; a register '
            "lives in an engine sequencer, so the compiler may reject it"
        )
        return cond.sim_value(), False
    if isinstance(cond, (int, np.integer)):
        return int(cond), True
    raise SimulationError(f"nl.if_else: cond must be a Python bool/int or a 32-bit NkiScalar, not {cond!r}")


def _callback(fn: Callable[[], object] | None) -> None:
    """Call one ``nl.if_else`` callback (``None``: no else branch)."""
    if fn is None:
        return
    if not callable(fn):
        raise SimulationError(f"nl.if_else: the callbacks must be functions () -> None, not {fn!r}")
    if fn() is not None:
        # "The callbacks take no arguments and do not return anything"; what the compiler does with a value
        # is not stated, so the simulation warns rather than refuses.
        context.current().warn("nl.if_else: a callback returned a value; the callbacks return nothing")


def if_else(cond: object, then_fn: Callable[[], object], else_fn: Callable[[], object] | None = None) -> None:
    """Run ``then_fn()`` when ``cond`` is nonzero (negative included), else ``else_fn()`` if given.

    Documented only on the ``latest`` page (after Neuron 2.33.1). A Python bool/int "is resolved at compile
    time. Only the selected callback is called". A runtime condition (NkiScalar) compiles to a branch, so
    tracing calls both callbacks (*inferred* from that contrast): here both are called in program order,
    ``then_fn`` first, and the one the condition does not select runs ``untaken.tracing_only``, so its
    Python side effects happen and its instructions are checked as the compiler checks them, without
    executing (no writes, no trace events, no DMA).
    """
    value, static = _condition(cond)
    if static:
        _callback(then_fn if value != 0 else else_fn)
        return
    for fn, selected in ((then_fn, value != 0), (else_fn, value == 0)):
        if selected:
            _callback(fn)
        else:
            with untaken.tracing_only():
                _callback(fn)


@contextmanager
def no_reorder() -> Iterator[None]:
    """Keep program order inside the block (no effect on eager simulation; dynamic loops are refused)."""
    regs = context.current_core().registers
    regs[_NO_REORDER] = regs.get(_NO_REORDER, 0) + 1
    try:
        yield
    finally:
        regs[_NO_REORDER] -= 1


def program_id(axis: int = 0) -> int:
    """This logical core's index (0 or 1 under LNC=2; 0 without a launch grid)."""
    if axis != 0:
        raise SimulationError(f"nl.program_id: only axis 0 exists (launch grid is 1-D), got {axis}")
    return context.current_core().core_id


def num_programs(axes: int = 0) -> int:
    """Number of logical cores in the launch (1 without LNC)."""
    if axes not in (0, None):
        raise SimulationError(f"nl.num_programs: only axis 0 exists, got {axes}")
    return context.current_core().num_cores


def program_ndim() -> int:
    """Launch-grid rank: 1 when launched as ``kernel[n]``, else 0."""
    return 1 if context.current().shared.get("launch_grid") else 0


def device_print(print_prefix: str, tensor: object, **_: object) -> None:
    """Print a tensor (any buffer) immediately, as the official CPU simulator does; kept in the report."""
    ctx = context.current()
    if context.untaken():
        return  # a device print in an untaken nl.if_else branch never runs
    if isinstance(tensor, NkiTensor):
        values = np.array2string(np.asarray(read(tensor, raw=True)), threshold=200)
        text = f"{print_prefix} {values}"
    else:
        text = f"{print_prefix} {tensor!r}"
    ctx.shared.setdefault("device_print", []).append(text)
    print(text, flush=True)
