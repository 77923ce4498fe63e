"""The scheduler against a plain statement of its model: every instruction compared with every earlier one of
its core (quadratic, no footprint index), on random traces whose footprints overlap partially, cover each
other and repeat. The fast scheduler's index, entry dropping and memoised durations must not change a single
start or end."""

from __future__ import annotations

import math
import random
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from nki_studio.estimate import constants as K
from nki_studio.estimate.activation_tables import table_of
from nki_studio.estimate.cost import instruction_cost, is_pe_transpose, operand
from nki_studio.estimate.schedule import dma_plan, schedule
from nki_studio.model.targets import Target
from nki_studio.sim.trace import Operand, TraceEvent

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from estimate_bench import generated_trace

LIMITS = Target().limits
_WRITES = ("dst",)


def _rect(o: Operand) -> tuple[int, int, int, int]:
    return (
        (o.byte_start, o.byte_end, 0, 1)
        if o.buffer == "hbm"
        else (o.byte_start, o.byte_end, o.part_start, o.part_end)
    )


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


class _Core:
    """What the model remembers of one (rank, core): each engine's busy intervals, the PSUM banks' last
    Vector/Scalar holder, the stationary operand in the Tensor engine's array."""

    def __init__(self) -> None:
        self.busy: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.psum: dict[int, tuple[float, str]] = {}
        self.stationary: object = None


def _matmul_extra_cycles(event: TraceEvent, core: _Core) -> float:
    """Tensor-engine cycles beyond the MultiplyMoving: the issue overhead, and a stationary load unless the
    stationary operand is the one already in the array."""
    extra = K.TENSOR_INSTRUCTION_OVERHEAD.value
    st = operand(event, "data", "src") if is_pe_transpose(event) else operand(event, "stationary")
    if st is None:
        return extra
    key = (st.storage, st.byte_start, st.byte_end, st.part_start, st.part_end)
    if key != core.stationary or st.storage < 0:
        free = math.prod(st.shape[1:]) if len(st.shape) > 1 else 1
        extra += max(64, free) / K.STATIONARY_LOAD_SPEEDUP.value
    core.stationary = key
    return extra


def reference_schedule(events: list[TraceEvent]) -> tuple[list[float], list[float]]:
    """Start/end of each event: at the first moment its engine is free for its duration (DMA: its issue on its
    queue, then the first moment the DMA engines it uses are all free) after every earlier
    event of its core that touched an overlapping footprint of the same allocation with a write on either side,
    plus the semaphore latency when that event ran on another engine; Vector and Scalar never hold one PSUM bank
    at the same time."""
    sem = K.SEMAPHORE_LATENCY.value
    start: list[float] = []
    end: list[float] = []
    cores: dict[tuple[int, int], _Core] = {}
    tables: dict[tuple[int, int], str] = {}  # (rank, core) -> activation table in the Scalar engine
    done: list[tuple[TraceEvent, float]] = []
    reserved: dict[tuple[int, int], list[tuple[float, float, int]]] = defaultdict(
        list
    )  # (start, end, engine)
    issues: dict[tuple[int, int, int], float] = {}
    queues: dict[tuple[int, int, int, int, int], float] = {}
    for e in events:
        core = cores.setdefault((e.rank, e.core), _Core())
        ready = 0.0
        mine = [(o.storage, _rect(o), o.role.startswith(_WRITES)) for o in e.operands if o.storage >= 0]
        for prev, prev_end in done:
            if (prev.rank, prev.core) != (e.rank, e.core):
                continue
            theirs = [
                (o.storage, _rect(o), o.role.startswith(_WRITES)) for o in prev.operands if o.storage >= 0
            ]
            if any(s == s2 and (w or w2) and _overlap(r, r2) for s, r, w in mine for s2, r2, w2 in theirs):
                ready = max(ready, prev_end + (sem if prev.engine != e.engine else 0.0))
        if e.engine == "dma":
            first, last, ns = dma_plan(e, LIMITS)
            # issued after its issuer's earlier issues (the core's DGE instance that is free first, or without
            # hardware DGE its queue: one per HBM tensor and direction), then in order with the queue's earlier
            # transfers on the same engines, at the first moment all are free
            hbm = [o for o in e.operands if o.buffer == "hbm" and o.storage >= 0]
            dst = [o for o in e.operands if o.storage >= 0 and o.role.startswith(_WRITES)]
            queue = (
                2 * hbm[0].storage + hbm[0].role.startswith(_WRITES)
                if hbm
                else (-2 - dst[0].storage if dst else -1)
            )
            dges = [(e.rank, e.core, -1 - i) for i in range(LIMITS.dge_instances)]
            issuer = min(dges, key=lambda d: issues.get(d, 0.0)) if dges else (e.rank, e.core, queue)
            issued = max(ready, issues.get(issuer, 0.0)) + K.DMA_ISSUE_COST.value
            issues[issuer] = issued
            lane = (e.rank, e.core, queue, first, last)
            t = max(issued, queues.get(lane, 0.0))
            while True:
                clash = [
                    b for a, b, k in reserved[(e.rank, e.core)] if first <= k <= last and a < t + ns and t < b
                ]
                if not clash:
                    break
                t = max(clash)
            reserved[(e.rank, e.core)].extend((t, t + ns, k) for k in range(first, last + 1))
            queues[lane] = t + ns
            ns += LIMITS.dma_fixed_overhead_ns
        else:
            ns = instruction_cost(e, LIMITS).ns
            if e.engine == "tensor":
                ns += _matmul_extra_cycles(e, core) / LIMITS.clock_ghz["tensor"]
            if e.engine == "scalar" and e.function:
                if tables.get((e.rank, e.core)) != table_of(e.function):
                    ns += K.ACTIVATION_TABLE_LOAD.value
                tables[(e.rank, e.core)] = table_of(e.function)
            t = ready
            banks = {
                b
                for o in e.operands
                if o.buffer == "psum" and o.storage >= 0 and e.engine in ("vector", "scalar")
                for b in range(
                    o.byte_start // LIMITS.psum_bank_bytes, (o.byte_end - 1) // LIMITS.psum_bank_bytes + 1
                )
            }
            for b in banks:
                if b in core.psum and core.psum[b][1] != e.engine:
                    t = max(t, core.psum[b][0])
            busy = core.busy[e.engine]
            while True:  # the first gap of the engine from t that holds the instruction
                clash = [b for a, b in busy if (a < t + ns and t < b) or a <= t < b]
                if not clash:
                    break
                t = max(clash)
            for b in banks:
                core.psum[b] = (max(t + ns, core.psum.get(b, (0.0, ""))[0]), e.engine)
            busy.append((t, t + ns))
        start.append(t)
        end.append(t + ns)
        done.append((e, t + ns))
    return start, end


def _random_trace(seed: int, n: int = 300) -> list[TraceEvent]:
    rng = random.Random(seed)
    events = []
    kinds = [
        ("nisa.tensor_copy", "vector", ("dst", "src")),
        ("nisa.activation", "scalar", ("dst", "data")),
        ("nisa.tensor_tensor", "vector", ("dst", "data1", "data2")),
        ("nisa.iota", "gpsimd", ("dst",)),
        ("nisa.nc_matmul", "tensor", ("dst", "stationary", "moving")),
        ("nisa.dma_copy", "dma", ("dst", "src")),
    ]

    def sbuf(role: str, buffer: str = "sbuf") -> Operand:
        p0 = rng.choice((0, 0, 32, 64))
        p1 = rng.choice((64, 128, 128))
        p0, p1 = min(p0, p1 - 1), p1
        b0 = rng.choice((0, 0, 512, 1024))
        b1 = b0 + rng.choice((512, 1024, 2048))
        storage = rng.randrange(4) if buffer == "sbuf" else 10 + rng.randrange(2)
        if buffer == "psum":  # banks of 2 KiB: accesses span one or two
            b0 = rng.choice((0, 1024, 2048))
            b1 = b0 + rng.choice((512, 1024, 2048))
        return Operand(role, (p1 - p0, (b1 - b0) // 2), "bfloat16", buffer, storage, p0, p1, b0, b1, b1 - b0)

    def hbm(role: str) -> Operand:
        b0 = rng.randrange(8) * 4096
        b1 = b0 + rng.choice((4096, 8192, 16384))
        return Operand(
            role, ((b1 - b0) // 2,), "bfloat16", "hbm", 20 + rng.randrange(2), 0, 0, b0, b1, 4096, "arg0"
        )

    for seq in range(n):
        op, engine, roles = rng.choice(kinds)
        ops: tuple[Operand, ...]
        if engine == "dma":
            load = rng.random() < 0.6
            ops = (sbuf("dst"), hbm("src")) if load else (hbm("dst"), sbuf("src"))
        elif engine == "tensor":
            ops = (sbuf("dst", "psum"), sbuf("stationary"), sbuf("moving"))
        else:  # Vector/Scalar inputs sometimes read PSUM
            ops = tuple(sbuf(r, "psum" if r != "dst" and rng.random() < 0.3 else "sbuf") for r in roles)
        moved = {o.buffer: (o.byte_end - o.byte_start) * max(o.part_end - o.part_start, 1) for o in ops}
        function = rng.choice(("exp", "tanh", "square", "rsqrt")) if op == "nisa.activation" else ""
        events.append(
            TraceEvent(
                seq,
                op,
                engine,
                "k.py",
                1 + seq % 7,
                (),
                ops,
                128,
                512,
                moved,
                moved,
                core=rng.randrange(2),
                function=function,
            )
        )
    return events


def test_the_scheduler_equals_the_quadratic_statement_of_its_model(tracking: str) -> None:
    traces = [_random_trace(seed) for seed in range(6)] + [generated_trace(600)]
    for events in traces:
        fast = schedule(events, LIMITS)
        start, end = reference_schedule(events)
        assert np.array_equal(fast.start, np.array(start)), "start times differ"
        assert np.array_equal(fast.end, np.array(end)), "end times differ"
