"""Legacy SPMD launch grids: ``kernel[a, b](...)``, ``nl.program_id``, ``nl.num_programs``, ``nl.spmd_dim``.

A legacy launch ``kernel[4, 2]`` runs one program per grid point; each program reads its coordinates with
``nl.program_id(axis)`` and the grid with ``nl.num_programs(axes)`` / ``nl.program_ndim()`` [v2.26.1
nki.language.program_id, num_programs, program_ndim]. ``nl.spmd_dim(*sizes)`` is one grid axis whose size is the
product of its parts, ``nl.nc(n)`` the part spread over ``n`` NeuronCores [v2.26.1 nki.language.spmd_dim, nc; the
multi-core tensor-addition tutorial shards ``grid_x * 2`` programs with ``spmd_dim(grid_x, nl.nc(2))``].

The programs run one after another in one simulation (their order is not observable by a correct kernel:
programs share nothing but HBM outputs). The n-th ``shared_hbm`` tensor every program allocates is one tensor,
since the tutorials allocate the output once per program and all programs write their part of it (inferred from
that usage).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nki_studio.model.targets import LEGACY
from nki_studio.sim import context
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.launch import JitKernel, run_dropin
from nki_studio.sim.legacy.detect import LEGACY_NOTE
from nki_studio.sim.tensor import NkiTensor
from nki_studio.sim.userframe import transparent

_STATE = "legacy.spmd"


class GridDim(int):
    """``nl.nc(n)`` / ``nl.spmd_dim(...)``: a launch-grid axis size (an int for the simulation)."""


def nc(n: int) -> GridDim:
    """``nl.nc(n)``: ``n`` physical NeuronCores along a grid axis."""
    return GridDim(int(n))


def spmd_dim(*sizes: int) -> GridDim:
    """``nl.spmd_dim(*sizes)``: one grid axis of ``prod(sizes)`` programs."""
    return GridDim(math.prod(int(s) for s in sizes))


@dataclass
class _Program:
    """The running program: grid, coordinates, and the shared_hbm tensors program 0 allocated."""

    dims: tuple[int, ...]
    point: tuple[int, ...] = ()
    shared: list[NkiTensor] = field(default_factory=list)
    next_shared: int = 0


def _program() -> _Program | None:
    ctx = context.current_or_none()
    return None if ctx is None else ctx.shared.get(_STATE)


def program_id(axis: int = 0) -> int:
    """This program's coordinate along ``axis`` (0 outside a grid)."""
    prog = _program()
    if prog is None:
        return 0
    if not 0 <= axis < len(prog.dims):
        raise SimulationError(
            f"nl.program_id({axis}): the launch grid {list(prog.dims)} has {len(prog.dims)} axes"
        )
    return prog.point[axis]


def num_programs(axes: int | tuple[int, ...] | None = None) -> int:
    """Programs along ``axes`` (all of them when omitted; 1 outside a grid)."""
    prog = _program()
    if prog is None:
        return 1
    chosen = range(len(prog.dims)) if axes is None else (axes,) if isinstance(axes, int) else axes
    return math.prod(prog.dims[a] for a in chosen)


def program_ndim() -> int:
    """Number of launch-grid axes (0 outside a grid)."""
    prog = _program()
    return 0 if prog is None else len(prog.dims)


def shared_output(allocate: Callable[[], NkiTensor]) -> NkiTensor:
    """A ``shared_hbm`` allocation: program 0 makes it, later programs get program 0's n-th one."""
    prog = _program()
    if prog is None:
        return allocate()
    if prog.next_shared < len(prog.shared):
        tensor = prog.shared[prog.next_shared]
    else:
        tensor = allocate()
        prog.shared.append(tensor)
    prog.next_shared += 1
    return tensor


class LegacyKernel(JitKernel):
    """A legacy ``@nki.jit`` / ``baremetal`` / ``trace`` kernel: brackets are a launch grid, not an LNC degree."""

    def __getitem__(self, grid: object) -> GridLaunch:  # type: ignore[override]
        dims = grid if isinstance(grid, tuple) else (grid,)
        if not dims or not all(isinstance(d, int) and d >= 1 for d in dims):
            raise SimulationError(
                f"kernel[{grid}]: a legacy launch grid holds positive ints (or nl.spmd_dim)"
            )
        return GridLaunch(self, tuple(int(d) for d in dims))

    @transparent
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if context.current_or_none() is not None:
            return self.func(*args, **kwargs)
        return run_dropin(self, args, kwargs, 1, grid=False, nki_version=(LEGACY, LEGACY_NOTE))


class GridLaunch:
    """``kernel[a, b]``: calling it runs every program of the grid."""

    def __init__(self, kernel: LegacyKernel, dims: tuple[int, ...]) -> None:
        self.kernel = kernel
        self.dims = dims
        functools.update_wrapper(self, kernel.func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ctx = context.current_or_none()
        if ctx is None:
            return run_dropin(self, args, kwargs, 1, grid=False, nki_version=(LEGACY, LEGACY_NOTE))
        if ctx.shared.get(_STATE) is not None:
            raise SimulationError("a legacy kernel grid cannot be launched from inside another kernel")
        prog = _Program(self.dims)
        ctx.shared[_STATE] = prog
        out: Any = None
        try:
            for point in itertools.product(*(range(d) for d in self.dims)):
                prog.point, prog.next_shared = point, 0
                out = self.kernel.func(*args, **kwargs)
        finally:
            ctx.shared.pop(_STATE, None)
        return out

    def __repr__(self) -> str:
        return f"<legacy kernel {self.kernel.func.__name__}[{', '.join(map(str, self.dims))}]>"


class ArgumentGrid:
    """A legacy kernel launched on a grid computed from its arguments: ``grid(**arguments)`` gives the extents
    (``migrate``'s proof runs the original as its launch site does, the grid written in the kernel's parameters)."""

    def __init__(self, kernel: LegacyKernel, grid: Callable[..., tuple[int, ...]]) -> None:
        self.kernel = kernel
        self.grid = grid
        functools.update_wrapper(self, kernel.func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(self.kernel.func).bind(*args, **kwargs)
        bound.apply_defaults()
        return self.kernel[tuple(self.grid(**bound.arguments))](*args, **kwargs)
