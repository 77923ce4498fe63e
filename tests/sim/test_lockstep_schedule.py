"""The lockstep of a launch's instances (sim/schedule.py): order, rendezvous, abort and deadlock, on the launching
thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from nki_studio.model.targets import Generation, Target
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.context import SimOptions
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.launch import run_kernel
from nki_studio.sim.schedule import Baton


def _steps(baton: Baton, log: list[tuple[int, int]], i: int, count: int) -> None:
    for k in range(count):
        log.append((i, k))
        baton.step(i)


def test_instances_hand_over_at_every_instruction_round_robin_from_instance_0():
    baton = Baton(["a", "b", "c"])
    log: list[tuple[int, int]] = []
    baton.run([lambda i=i, n=n: _steps(baton, log, i, n) for i, n in enumerate((3, 1, 2))])
    assert log == [(0, 0), (1, 0), (2, 0), (0, 1), (2, 1), (0, 2)]


def test_a_waiting_instance_is_skipped_until_it_can_continue():
    baton = Baton(["a", "b", "c"])
    log: list[object] = []
    posted: list[bool] = []

    def waiter() -> None:
        log.append("0 waits")
        baton.block(0, lambda: bool(posted), "rendezvous")
        log.append("0 continues")

    def poster() -> None:
        for k in range(3):
            log.append(f"2 step {k}")
            if k == 1:
                posted.append(True)
            baton.step(2)

    baton.run([waiter, lambda: _steps(baton, log, 1, 3), poster])  # type: ignore[arg-type]
    assert log == [
        "0 waits",
        (1, 0),
        "2 step 0",
        (1, 1),  # 0 is still waiting: skipped
        "2 step 1",  # posts, then hands over: 0 is next after 2
        "0 continues",
        (1, 2),
        "2 step 2",
    ]


def _options(**kw: object) -> SimOptions:
    return SimOptions(target=Target(generation=Generation.GEN3), **kw)  # type: ignore[arg-type]


def _one_core_skips_the_barrier(data):
    if nl.program_id(0) == 0:
        nisa.core_barrier(data, (0, 1))  # the barrier line


def test_a_rendezvous_the_other_core_never_reaches_is_a_deadlock_at_its_line():
    with pytest.raises(SimulationError) as info:
        run_kernel(
            _one_core_skips_the_barrier, (np.zeros((2, 2), np.float32),), {}, _options(lnc=2), grid=True
        )
    assert "deadlock" in str(info.value)
    assert "core 0 waits in nisa.core_barrier" in str(info.value) and "core 1 has returned" in str(info.value)
    assert info.value.file == __file__
    assert info.value.line == _one_core_skips_the_barrier.__code__.co_firstlineno + 2


def _crossed_pipes(data):
    core = nl.program_id(0)
    mine = nl.ndarray((2, 3), dtype=nl.float32, buffer=nl.sbuf)
    theirs = nl.ndarray((2, 3), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=mine, value=1.0)
    nisa.sendrecv(mine, theirs, send_to_rank=1 - core, recv_from_rank=1 - core, pipe_id=core)


def test_two_cores_waiting_for_each_other_are_a_deadlock():
    with pytest.raises(
        SimulationError, match=r"core 0 waits in nisa\.sendrecv, core 1 waits in nisa\.sendrecv"
    ):
        run_kernel(_crossed_pipes, (np.zeros((2, 2), np.float32),), {}, _options(lnc=2), grid=True)


def test_all_instances_run_on_the_launching_thread():
    seen: list[tuple[int, int]] = []

    def kernel():
        nisa.memset(dst=nl.ndarray((2, 2), dtype=nl.float32, buffer=nl.sbuf), value=0.0)
        seen.append((nl.program_id(0), threading.get_ident()))

    before = threading.active_count()
    run_kernel(kernel, (), {}, _options(lnc=2), grid=True)
    assert sorted(seen) == [(0, threading.get_ident()), (1, threading.get_ident())]
    assert threading.active_count() == before


def test_a_failure_stops_the_other_core_even_through_except_exception():
    attempts: list[int] = []

    def kernel():
        if nl.program_id(0) == 1:
            raise ValueError("boom")
        t = nl.ndarray((2, 2), dtype=nl.float32, buffer=nl.sbuf)
        for _ in range(50):
            try:
                attempts.append(0)
                nisa.memset(dst=t, value=0.0)
            except Exception:  # a kernel's own handler must not keep the aborted core running
                pass

    with pytest.raises(SimulationError, match="boom"):
        run_kernel(kernel, (), {}, _options(lnc=2), grid=True)
    assert attempts == [0]  # core 0 handed over at its first instruction and never ran again
