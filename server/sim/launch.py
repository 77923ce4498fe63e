"""Launching a kernel: ``nki.jit`` kernels, ``kernel[lnc]``, argument wrapping, threads and bounds.

``run_kernel`` executes one kernel in a fresh :class:`SimContext`: NumPy arguments become HBM tensors
(``shared_hbm`` under LNC=2, else ``hbm``, as the official simulator does), the kernel runs eagerly — in
the calling thread, one instance per logical core and rank, several in lockstep (``sim.schedule``; the
cores of a rank see the same shared-HBM tensors) — and returned tensors come back as NumPy arrays. Arguments the kernel wrote are updated in place
(official behaviour) and listed in ``inputs_modified``.

Bounds: ``deadline_s`` raises ``SimulationTimeout`` inside the running kernel instance (asynchronous
exception in the calling thread, so it also stops pure-Python infinite loops); the allocation budget and
instruction budget come from ``SimOptions``. Whatever happens, the context's memory is released and the
watchdog's timer thread is joined.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from nki_studio.model import toolchain_rejections as rejects
from nki_studio.model.targets import Generation, NkiVersion
from nki_studio.sim import context, frameworks
from nki_studio.sim.context import SimContext, SimOptions
from nki_studio.sim.errors import (
    KernelError,
    ResourceLimitError,
    SimulationError,
    SimulationTimeout,
)
from nki_studio.sim.lnc_config import configured_lnc, lnc_mismatch
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.nki_compiler import surfaces_allocation_oom
from nki_studio.sim.rejections import toolchain_rejects
from nki_studio.sim.schedule import Baton, InstanceAborted
from nki_studio.sim.tensor import NkiTensor, from_array, to_array
from nki_studio.sim.userframe import SourceLocation, traceback_location, transparent


class _DeadlineSignal(BaseException):
    """Injected into the kernel's thread when the deadline passes (BaseException: kernels can't swallow it)."""


class JitKernel:
    """An ``@nki.jit`` kernel. Calling it inside a simulation runs it; outside, simulates it (NKI_SIMULATOR=1)."""

    def __init__(self, func: Callable[..., Any], **options: Any) -> None:
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __getitem__(self, grid: object) -> LaunchedKernel:
        dims = grid if isinstance(grid, tuple) else (grid,)
        if len(dims) != 1 or not isinstance(dims[0], int) or dims[0] not in (1, 2):
            raise SimulationError(f"kernel[{grid}]: the launch bracket must hold a single LNC degree, 1 or 2")
        return LaunchedKernel(self, dims[0])

    @transparent
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if context.current_or_none() is not None:
            return self.func(*args, **kwargs)  # a kernel calling a kernel: plain call
        lnc = configured_lnc()  # NKI 0.7: the degree comes from NEURON_LOGICAL_NC_CONFIG
        return run_dropin(self, args, kwargs, lnc or 1, grid=lnc is not None)

    def __repr__(self) -> str:
        return f"<nki.jit kernel {self.func.__name__}>"


@dataclass
class LaunchedKernel:
    """``kernel[lnc]``: a kernel bound to an LNC degree."""

    kernel: JitKernel
    lnc: int

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if context.current_or_none() is not None:
            raise SimulationError("kernel[lnc](...) cannot be launched from inside another kernel")
        return run_dropin(self, args, kwargs, self.lnc, grid=True)


def jit(
    fn: Callable[..., Any] | None = None,
    *,
    compile_config: Any = None,
    specialization_config: Any = None,
    **options: Any,
) -> Any:
    """``@nki.jit`` / ``@nki.jit(...)``: options (0.7 ``compile_config``/``specialization_config``, mode,
    platform_target, debug_kernel...) are accepted and kept; ``sim.nki_compiler`` reports which are ignored."""
    if compile_config is not None:
        options["compile_config"] = compile_config
    if specialization_config is not None:
        options["specialization_config"] = specialization_config
    if fn is None:
        return lambda f: JitKernel(f, **options)
    if isinstance(fn, JitKernel):
        return fn
    return JitKernel(fn, **options)


def jit_options(kernel: object) -> dict[str, Any]:
    """The keyword options of ``@nki.jit(...)`` behind a kernel object (empty for a plain function)."""
    if isinstance(kernel, LaunchedKernel):
        kernel = kernel.kernel
    return dict(kernel.options) if isinstance(kernel, JitKernel) else {}


def run_dropin(
    kernel: object,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    lnc: int,
    *,
    grid: bool,
    generation: Generation | None = None,
    nki_version: tuple[NkiVersion, str] | None = None,
) -> Any:
    """A drop-in launch (``kernel(...)``, ``kernel[lnc](...)``, ``nki.simulate``): run under the block's or the
    environment's options, publish what the output cannot carry (``sim.launch_log``), return the output.

    A launcher that names the target itself (an argument, not the environment) passes ``generation`` and/or
    ``nki_version`` (the version and why, shown as the simulation's version note)."""
    from nki_studio.sim import launch_log
    from nki_studio.sim.dropin import default_options
    from nki_studio.sim.nki_compiler import ignored_options

    func, _ = unwrap(kernel)
    options = jit_options(kernel)
    opts = default_options(lnc, func)
    if generation is not None:
        opts.target = replace(opts.target, generation=generation)
    if nki_version is not None:
        opts.target = replace(opts.target, nki_version=nki_version[0])
        opts.nki_version_note = nki_version[1]
    opts.program_order_capacity = surfaces_allocation_oom(options)
    opts.jit_arguments = tuple(options)
    launch_log.offer_inputs(func, args, kwargs)
    run = run_kernel(func, args, kwargs, opts, grid=grid)
    launch_log.publish(func, ignored_options(options), list(run.ctx.warnings))
    return run.output


def unwrap(kernel: object) -> tuple[Callable[..., Any], int | None]:
    """The Python function behind a kernel object and the LNC degree it was launched with (if any)."""
    if isinstance(kernel, LaunchedKernel):
        return kernel.kernel.func, kernel.lnc
    if isinstance(kernel, JitKernel):
        return kernel.func, None
    if callable(kernel):
        return kernel, None
    raise SimulationError(f"not a kernel: {kernel!r}")


def find_kernel(module: Any, kernel_name: str | None, path: str) -> Any:
    """The kernel named ``kernel_name`` in a loaded module, or its only ``@nki.jit`` kernel."""
    if kernel_name:
        obj = getattr(module, kernel_name, None)
        if obj is None or not callable(obj):
            raise SimulationError(
                f"{path} has no kernel named {kernel_name!r}", location=SourceLocation(path, 1)
            )
        return obj
    kernels = [k for k, v in vars(module).items() if isinstance(v, (JitKernel, LaunchedKernel))]
    if len(kernels) != 1:
        detail = f"several: {', '.join(sorted(kernels))}" if kernels else "none found"
        raise SimulationError(
            f"{path}: name the @nki.jit kernel to simulate ({detail})", location=SourceLocation(path, 1)
        )
    return getattr(module, kernels[0])


@dataclass
class KernelRun:
    """What one kernel execution produced."""

    ctx: SimContext
    output: Any
    inputs_modified: list[int] = field(default_factory=list)
    elapsed_s: float = 0.0
    rank_outputs: list[Any] = field(default_factory=list)


def _convert_output(
    value: Any, back: Callable[[np.ndarray], Any] | None, ctx: SimContext, arguments: set[int]
) -> Any:
    """The kernel's return value with tensors as arrays; ``arguments``: ids of the storages of its arguments (an
    argument returned as it came is not an output the kernel allocated)."""
    if isinstance(value, NkiTensor):
        if value.buffer is MemoryRegion.private_hbm and id(value.storage) not in arguments:
            toolchain_rejects(rejects.HBM_OUTPUT)
            if ctx.options.lnc > 1:  # NKI versions before the rejection: the other core never sees it
                ctx.warn("kernel output is in nl.hbm/private_hbm; outputs must be allocated in nl.shared_hbm")
        if value.buffer.on_chip:
            ctx.warn(
                f"kernel returned an on-chip tensor ({value.buffer.value}); outputs must live in nl.shared_hbm"
            )
        arr = to_array(value)
        return back(arr) if back is not None else arr
    if isinstance(value, tuple):
        return tuple(_convert_output(v, back, ctx, arguments) for v in value)
    if isinstance(value, list):
        return [_convert_output(v, back, ctx, arguments) for v in value]
    if isinstance(value, dict):
        return {k: _convert_output(v, back, ctx, arguments) for k, v in value.items()}
    return value


def _set_async_exc(thread_id: int, exc: type[BaseException]) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc))


class _Watchdog:
    """Raises ``_DeadlineSignal`` in the thread that entered once ``seconds`` have passed."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.lock = threading.Lock()
        self.thread: int | None = None
        self.fired = False
        self.timer = threading.Timer(seconds, self._fire) if seconds is not None else None
        if self.timer is not None:
            self.timer.daemon = True

    def start(self) -> None:
        if self.timer is not None:
            self.timer.start()

    def _fire(self) -> None:
        with self.lock:
            self.fired = True
            if self.thread is not None:
                _set_async_exc(self.thread, _DeadlineSignal)

    def enter(self) -> None:
        with self.lock:
            self.thread = threading.get_ident()
            if self.fired:
                raise _DeadlineSignal()

    def leave(self) -> None:
        # No PyThreadState_SetAsyncExc(tid, NULL) here: in CPython 3.11 clearing leaves the eval-breaker
        # flag set, slowing every later bytecode. A signal that fired just before this point is delivered
        # within the caller's try block and reported as a timeout, which it was.
        with self.lock:
            self.thread = None

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer.join()


def _translate(exc: BaseException, seconds: float | None) -> BaseException:
    if isinstance(exc, SimulationError):
        return exc
    loc = traceback_location(exc.__traceback__)
    if isinstance(exc, _DeadlineSignal):
        return SimulationTimeout(
            f"the kernel did not finish within the time limit of {seconds} s", location=loc
        )
    if isinstance(exc, MemoryError):
        return ResourceLimitError("the kernel ran out of memory", location=loc)
    if isinstance(exc, RecursionError):
        return KernelError(exc, location=loc)
    return KernelError(exc, location=loc)


def _wrap_args(
    args: tuple[Any, ...], kwargs: dict[str, Any], region: MemoryRegion, precise: bool, tag: str
) -> tuple[
    list[Any],
    dict[str, Any],
    list[tuple[int, NkiTensor, Callable[[np.ndarray], None] | None]],
    Callable[[np.ndarray], Any] | None,
]:
    """Arguments as HBM tensors (framework tensors through ``sim.frameworks``); returns (args, kwargs, [(index,
    tensor, how to write the kernel's writes back, when they do not land in the argument itself)], how to turn
    results into the first framework argument's type)."""
    back: Callable[[np.ndarray], Any] | None = None
    wrapped: list[Any] = []
    arg_tensors: list[tuple[int, NkiTensor, Callable[[np.ndarray], None] | None]] = []
    for i, arg in enumerate(args):
        value, conv = _host(arg)
        back = back or (conv.back if conv else None)
        if isinstance(value, np.ndarray):
            t, copied = from_array(value, region, f"{tag}arg{i}", precise)
            write = conv.write_back if conv is not None else _write_into(value) if copied else None
            arg_tensors.append((i, t, write))
            wrapped.append(t)
        else:
            wrapped.append(value)
    kw: dict[str, Any] = {}
    for key, arg in kwargs.items():
        value, conv = _host(arg)
        back = back or (conv.back if conv else None)
        kw[key] = from_array(value, region, key, precise)[0] if isinstance(value, np.ndarray) else value
    return wrapped, kw, arg_tensors, back


def _host(arg: Any) -> tuple[Any, frameworks.Converted | None]:
    """``arg``'s NumPy values when it is a framework tensor (and its conversion), else ``arg``."""
    conv = frameworks.converted(arg)
    return (arg, None) if conv is None else (conv.array, conv)


def _write_into(original: np.ndarray) -> Callable[[np.ndarray], None]:
    """Copy a kernel's writes into the NumPy argument ``original`` (its tensor was a copy: official behaviour)."""

    def write(array: np.ndarray) -> None:
        original[...] = array.reshape(original.shape)

    return write


def run_kernel(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    options: SimOptions,
    *,
    grid: bool,
    deadline_s: float | None = None,
    rank_args: list[tuple[Any, ...]] | None = None,
) -> KernelRun:
    """Execute ``func`` once per rank and logical core under ``options``.

    Rank 0 gets ``args`` (in place); other ranks get ``rank_args[r]`` or private copies of ``args``.
    Raises ``SimulationError`` subclasses on failure.
    """
    ctx = SimContext(options)
    ctx.shared["launch_grid"] = grid
    mismatch = lnc_mismatch(getattr(func, "__name__", "kernel"), options.lnc)
    if mismatch:
        ctx.warnings.append(mismatch)
    region = MemoryRegion.shared_hbm if options.lnc > 1 else MemoryRegion.private_hbm
    per_rank: list[tuple[list[Any], dict[str, Any]]] = []
    with context.activate(ctx, ctx.cores[0]):
        if "platform_target" in options.jit_arguments:
            toolchain_rejects(rejects.JIT_PLATFORM_TARGET)
        wrapped, kw, arg_tensors, back = _wrap_args(args, kwargs, region, options.precise, "")
        per_rank.append((wrapped, kw))
        for r in range(1, options.ranks):
            if rank_args is not None:
                r_args = rank_args[r]
            else:
                r_args = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)
            w, k, _, _ = _wrap_args(r_args, kwargs, region, options.precise, f"rank{r}.")
            per_rank.append((w, k))
    watchdog = _Watchdog(deadline_s)
    n = len(ctx.cores)
    labels = [
        " ".join(
            ([f"rank {c.rank}"] if options.ranks > 1 else [])
            + ([f"core {c.core_id}"] if options.lnc > 1 else [])
        )
        for c in ctx.cores
    ]
    baton = Baton(labels) if n > 1 else None  # one instance at a time, in a fixed order (sim.schedule)
    ctx.shared["baton"] = baton
    results: list[Any] = [None] * n
    errors: list[BaseException | None] = [None] * n

    def body(index: int) -> None:
        core = ctx.cores[index]
        try:
            with context.activate(ctx, core):
                r_args, r_kw = per_rank[core.rank]
                results[index] = func(*r_args, **r_kw)
        except BaseException as exc:  # reported to the caller below, with the kernel's line
            errors[index] = _translate(exc, deadline_s)
            if baton is not None:
                baton.abort()  # the other instances stop where they are

    start = time.perf_counter()
    watchdog.start()
    try:
        watchdog.enter()
        try:
            if baton is None:
                body(0)
            else:
                baton.run([functools.partial(body, i) for i in range(n)])
        finally:
            watchdog.leave()
    except _DeadlineSignal as exc:  # it landed between instances (in the scheduler), not in kernel code
        errors.append(_translate(exc, deadline_s))
    finally:
        watchdog.stop()
    elapsed = time.perf_counter() - start
    try:
        failures = [e for e in errors if e is not None]
        if failures:
            # Prefer a real failure over the echo it caused on the other instances.
            primary = next(
                (
                    e
                    for e in failures
                    if not isinstance(e, KernelError) or not isinstance(e.original, InstanceAborted)
                ),
                failures[0],
            )
            raise primary
        for core in ctx.cores:
            core.memory.finish()  # capacity from the complete live ranges (raises at the tensor's line)
        arguments = {
            id(t.storage)
            for r_args, r_kw in per_rank
            for t in (*r_args, *r_kw.values())
            if isinstance(t, NkiTensor)
        }
        with context.activate(ctx, ctx.cores[0]):
            output = _convert_output(results[0], back, ctx, arguments)
            rank_outputs = [
                _convert_output(results[r * options.lnc], back, ctx, arguments) for r in range(options.ranks)
            ]
        modified = [i for i, tensor, _ in arg_tensors if tensor.storage.dirty]
        for _, tensor, write in arg_tensors:
            if write is not None and tensor.storage.dirty:
                write(to_array(tensor))
        return KernelRun(ctx, output, modified, elapsed, rank_outputs)
    finally:
        for core in ctx.cores:
            core.memory.release_all()
