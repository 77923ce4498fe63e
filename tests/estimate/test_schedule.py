"""Scheduler unit tests on hand-built traces: dependencies through footprints, engine overlap, accumulation
chains, DMA engines in parallel, barriers joining cores."""

from __future__ import annotations

import dataclasses

import pytest
from nki_studio.estimate import constants as K
from nki_studio.estimate.cost import instruction_cost
from nki_studio.estimate.schedule import dma_plan, schedule
from nki_studio.model.targets import Target
from nki_studio.sim.trace import Operand, TraceEvent

LIMITS = Target().limits


def _tile(
    role: str, storage: int, p: tuple[int, int] = (0, 128), nbytes: int = 4096, buffer: str = "sbuf"
) -> Operand:
    return Operand(
        role, (p[1] - p[0], nbytes // 4), "float32", buffer, storage, p[0], p[1], 0, nbytes, nbytes
    )


def _ev(seq: int, op: str, engine: str, *operands: Operand, core: int = 0) -> TraceEvent:
    reads = {
        o.buffer: (o.byte_end - o.byte_start) * max(o.part_end - o.part_start, 1)
        for o in operands
        if o.role != "dst"
    }
    writes = {
        o.buffer: (o.byte_end - o.byte_start) * max(o.part_end - o.part_start, 1)
        for o in operands
        if o.role == "dst"
    }
    return TraceEvent(
        seq,
        op,
        engine,
        "k.py",
        seq + 1,
        operands=operands,
        partitions=128,
        free_elements=1024,
        bytes_read=reads,
        bytes_written=writes,
        core=core,
    )


def _hbm(role: str, storage: int, start: int, nbytes: int) -> Operand:
    return Operand(
        role, (nbytes // 4,), "float32", "hbm", storage, 0, 0, start, start + nbytes, nbytes, "arg0"
    )


def test_a_read_after_write_waits_for_the_producer_plus_the_semaphore() -> None:
    events = [
        _ev(0, "nisa.tensor_copy", "vector", _tile("dst", 1), _tile("src", 0)),
        _ev(1, "nisa.activation", "scalar", _tile("dst", 2), _tile("data", 1)),
    ]
    s = schedule(events, LIMITS)
    assert s.start[0] == 0.0
    assert s.start[1] == s.end[0] + K.SEMAPHORE_LATENCY.value


def test_independent_engines_overlap_and_one_engine_runs_one_instruction_at_a_time() -> None:
    events = [
        _ev(0, "nisa.tensor_copy", "vector", _tile("dst", 1), _tile("src", 0)),
        _ev(1, "nisa.activation", "scalar", _tile("dst", 3), _tile("data", 2)),
        _ev(2, "nisa.tensor_copy", "vector", _tile("dst", 5), _tile("src", 4)),
    ]
    s = schedule(events, LIMITS)
    assert s.start[0] == s.start[1] == 0.0  # different engines, no shared bytes: concurrent
    assert s.start[2] == s.end[0]  # same queue: in order, no semaphore
    assert s.total_ns < sum(instruction_cost(e, LIMITS).ns for e in events)


def test_an_independent_instruction_fills_the_gap_its_engine_left_a_dependent_one_waits(
    tracking: str,
) -> None:
    # Vector copies a tile, Scalar works long on it, Vector copies the result: the Vector engine waits in
    # between; the next tile's independent copy runs in that gap (the compiler moves it ahead), a copy of the
    # waiting one's result after it
    events = [
        _ev(0, "nisa.tensor_copy", "vector", _tile("dst", 1), _tile("src", 0)),
        _ev(1, "nisa.activation", "scalar", _tile("dst", 2, nbytes=65536), _tile("data", 1, nbytes=65536)),
        _ev(2, "nisa.tensor_copy", "vector", _tile("dst", 3), _tile("src", 2)),
        _ev(3, "nisa.tensor_copy", "vector", _tile("dst", 5), _tile("src", 4)),
        _ev(4, "nisa.tensor_copy", "vector", _tile("dst", 6), _tile("src", 3)),
    ]
    s = schedule(events, LIMITS)
    sem = K.SEMAPHORE_LATENCY.value
    assert s.start[1] == s.end[0] + sem and s.start[2] == s.end[1] + sem
    assert s.start[3] == s.end[0]  # ahead of the waiting copy, in the gap it left
    assert s.start[4] == s.end[2]  # a dependency on its own engine still orders it
    assert s.total_ns == s.end[4] - s.start[0]


def test_a_write_after_read_waits_for_the_reader() -> None:
    events = [
        _ev(0, "nisa.activation", "scalar", _tile("dst", 1), _tile("data", 0)),
        _ev(1, "nisa.memset", "vector", _tile("dst", 0)),
    ]
    s = schedule(events, LIMITS)
    assert s.start[1] == s.end[0] + K.SEMAPHORE_LATENCY.value


def test_disjoint_partitions_and_bytes_do_not_depend() -> None:
    events = [
        _ev(0, "nisa.tensor_copy", "vector", _tile("dst", 1, (0, 64)), _tile("src", 0)),
        _ev(1, "nisa.activation", "scalar", _tile("dst", 2), _tile("data", 1, (64, 128))),
    ]
    s = schedule(events, LIMITS)
    assert s.start[1] == 0.0


def test_an_accumulation_chain_serialises_and_its_reader_waits_for_the_last_matmul() -> None:
    psum = _tile("dst", 9, nbytes=2048, buffer="psum")
    chain = [
        _ev(
            i,
            "nisa.nc_matmul",
            "tensor",
            psum,
            _tile("stationary", 10 + i, nbytes=256),
            _tile("moving", 20 + i, nbytes=1024),
        )
        for i in range(4)
    ]
    copy = _ev(
        4,
        "nisa.tensor_copy",
        "vector",
        _tile("dst", 30),
        Operand("src", (128, 512), "float32", "psum", 9, 0, 128, 0, 2048, 2048),
    )
    s = schedule([*chain, copy], LIMITS)
    for a, b in zip(range(3), range(1, 4), strict=True):
        assert s.start[b] >= s.end[a]
    assert s.start[4] == s.end[3] + K.SEMAPHORE_LATENCY.value


def test_reusing_the_stationary_operand_skips_its_load() -> None:
    st = _tile("stationary", 1, nbytes=256)
    same = [
        _ev(
            i,
            "nisa.nc_matmul",
            "tensor",
            _tile("dst", 10 + i, nbytes=2048, buffer="psum"),
            st,
            _tile("moving", 2, nbytes=1024),
        )
        for i in range(2)
    ]
    s = schedule(same, LIMITS)
    assert s.end[1] - s.start[1] < s.end[0] - s.start[0]


def test_dma_transfers_on_different_partitions_run_in_parallel() -> None:
    lo = _ev(0, "nisa.dma_copy", "dma", _tile("dst", 1, (0, 64)), _hbm("src", 0, 0, 64 * 4096))
    hi = _ev(1, "nisa.dma_copy", "dma", _tile("dst", 2, (64, 128)), _hbm("src", 4, 64 * 4096, 64 * 4096))
    both = _ev(2, "nisa.dma_copy", "dma", _tile("dst", 3), _hbm("src", 0, 0, 128 * 4096))
    s = schedule([lo, hi, both], LIMITS)
    issue = K.DMA_ISSUE_COST.value  # two tensors, two queues: issued side by side
    assert s.start[0] == s.start[1] == issue
    assert tuple(s.dma_engines[0]) == (0, 7) and tuple(s.dma_engines[1]) == (8, 15)
    busy = dma_plan(lo, LIMITS)[2]
    assert s.start[2] == issue + busy  # needs all 16 engines: after both halves left them
    assert s.end[0] == issue + busy + LIMITS.dma_fixed_overhead_ns


def test_narrow_descriptor_rows_move_slower() -> None:
    wide = _ev(0, "nisa.dma_copy", "dma", _tile("dst", 1), _hbm("src", 0, 0, 128 * 4096))
    narrow_src = Operand("src", (128 * 64,), "float32", "hbm", 0, 0, 0, 0, 128 * 4096, 256, "arg0")
    narrow = _ev(0, "nisa.dma_copy", "dma", _tile("dst", 1), narrow_src)
    assert dma_plan(narrow, LIMITS)[2] > dma_plan(wide, LIMITS)[2]


def test_a_barrier_joins_the_cores() -> None:
    shared = _hbm("data", 7, 0, 128 * 4096)
    events = [
        _ev(0, "nisa.dma_copy", "dma", dataclasses.replace(shared, role="dst"), _tile("src", 1), core=0),
        _ev(1, "nisa.core_barrier", "gpsimd", shared, core=0),
        _ev(2, "nisa.core_barrier", "gpsimd", shared, core=1),
        _ev(3, "nisa.dma_copy", "dma", _tile("dst", 2), dataclasses.replace(shared, role="src"), core=1),
        _ev(4, "nisa.activation", "scalar", _tile("dst", 5), _tile("data", 4), core=1),
    ]
    s = schedule(events, LIMITS)
    # core 1 reaches its barrier at once but leaves with core 0, whose barrier waits for its store
    assert s.start[1] == s.start[2] == s.end[0] + K.SEMAPHORE_LATENCY.value
    assert s.start[3] >= s.end[2]  # core 1 reads the shared tensor after the barrier
    assert s.start[4] == 0.0  # work of core 1 that does not touch it is not held back


def test_a_pe_transpose_is_a_matmul_by_the_identity_with_the_data_as_stationary() -> None:
    data = _tile("data", 1, (0, 128), nbytes=256)  # [128, 64] fp32
    transpose = _ev(0, "nisa.nc_transpose", "tensor", _tile("dst", 2, (0, 64), 512, "psum"), data)
    again = _ev(1, "nisa.nc_transpose", "tensor", _tile("dst", 3, (0, 64), 512, "psum"), data)
    cycles = instruction_cost(transpose, LIMITS).cycles
    assert (
        cycles == 128 * 4
    )  # N = the data's 128 partitions (the identity's free size), fp32 at a quarter rate
    s = schedule([transpose, again], LIMITS)
    # the first loads the data as stationary; the second finds it in the array
    assert s.end[0] - s.start[0] > s.end[1] - s.start[1]


def test_vector_and_scalar_take_turns_on_a_psum_bank() -> None:
    bank0 = _tile("src", 9, nbytes=2048, buffer="psum")
    bank1 = dataclasses.replace(bank0, byte_start=2048, byte_end=4096)
    same = [
        _ev(0, "nisa.tensor_copy", "vector", _tile("dst", 1), bank0),
        _ev(1, "nisa.activation", "scalar", _tile("dst", 2), dataclasses.replace(bank0, role="data")),
    ]
    s = schedule(same, LIMITS)
    assert s.start[1] == s.end[0]  # reads only, no dependency: the bank itself is the shared resource
    other = [
        same[0],
        _ev(1, "nisa.activation", "scalar", _tile("dst", 2), dataclasses.replace(bank1, role="data")),
    ]
    assert schedule(other, LIMITS).start[1] == 0.0


def test_a_load_overtakes_a_store_that_waits_for_compute_but_one_queue_stays_in_order() -> None:
    big = 65536  # bytes per partition: the activation takes far longer than a transfer
    compute = _ev(0, "nisa.activation", "scalar", _tile("dst", 1, nbytes=big), _tile("data", 0, nbytes=big))
    store = _ev(1, "nisa.dma_copy", "dma", _hbm("dst", 5, 0, 128 * 4096), _tile("src", 1))
    load = _ev(2, "nisa.dma_copy", "dma", _tile("dst", 2), _hbm("src", 6, 0, 128 * 4096))
    s = schedule([compute, store, load], LIMITS)
    assert s.start[1] >= s.end[0]  # the store waits for its data
    assert s.start[2] == K.DMA_ISSUE_COST.value  # the load (another tensor, another queue) goes meanwhile
    # a second store to the same tensor (same queue) from a tile that is ready: in issue order all the same
    same_queue = _ev(2, "nisa.dma_copy", "dma", _hbm("dst", 5, 128 * 4096, 128 * 4096), _tile("src", 2))
    s = schedule([compute, store, same_queue], LIMITS)
    assert s.start[2] >= s.start[1]  # one queue: in issue order


def _activations(functions: list[str]) -> list[TraceEvent]:
    """One independent Scalar-engine activation per function, in order (each on its own tiles)."""
    return [
        dataclasses.replace(
            _ev(i, "nisa.activation", "scalar", _tile("dst", 100 + i), _tile("data", 200 + i)), function=fn
        )
        for i, fn in enumerate(functions)
    ]


def test_alternating_activation_functions_pay_table_loads_grouped_ones_do_not() -> None:
    load = K.ACTIVATION_TABLE_LOAD.value
    alternating = schedule(_activations(["exp", "tanh"] * 4), LIMITS)
    grouped = schedule(_activations(["exp"] * 4 + ["tanh"] * 4), LIMITS)
    # the same eight instructions: grouped pays two loads, alternating one per instruction
    assert alternating.total_ns - grouped.total_ns == pytest.approx(6 * load)
    one = instruction_cost(_activations(["exp"])[0], LIMITS).ns
    assert grouped.end[0] - grouped.start[0] == pytest.approx(one + load)  # the first activation loads too
    assert grouped.end[1] - grouped.start[1] == pytest.approx(one)  # same function: no load
    # instructions without a function (every non-activation) never load, and each core has its own table
    plain = schedule([dataclasses.replace(e, function="") for e in _activations(["exp", "tanh"])], LIMITS)
    assert plain.total_ns == pytest.approx(2 * one)
    split = [dataclasses.replace(e, core=i % 2) for i, e in enumerate(_activations(["exp", "tanh"] * 2))]
    assert schedule(split, LIMITS).total_ns == pytest.approx(load + 2 * one)  # exp, exp | tanh, tanh
    # functions measured to share a table switch for free (square and rsqrt: the fused RMSNorm's pair)
    shared = schedule(_activations(["square", "rsqrt"] * 4), LIMITS)
    assert shared.total_ns == pytest.approx(grouped.total_ns - load)
