"""Estimated-cost model: hand-computed instruction costs (trn2 numbers from model/targets.py), and the estimate's
per-line table, bounds and roofline point built on them."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from nki_studio.estimate import constants as K
from nki_studio.estimate.cost import instruction_cost
from nki_studio.estimate.roofline import estimate_roofline
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import COST_RULES, Generation, limits_for
from nki_studio.sim.trace import Operand

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "estimate")
)  # the estimate tests' event builders

from trace_events import event, load

TRN2 = limits_for(Generation.GEN3)


def test_dma_bytes_at_368_gb_per_s_plus_amortised_overhead() -> None:
    # 128 x 2048 bf16 = 524288 bytes: 524288 / 368 B/ns + 1300 ns / 16 engines
    ev = event(
        "nisa.dma_copy",
        "dma",
        (Operand("dst", (128, 2048), "bfloat16", "sbuf"),),
        2048,
        bytes_read={"hbm": 524288},
        bytes_written={"sbuf": 524288},
    )
    assert instruction_cost(ev, TRN2).ns == pytest.approx(524288 / 368 + 1300 / 16)


def test_matmul_cycles_formula() -> None:
    ops = (
        Operand("stationary", (128, 128), "bfloat16", "sbuf"),
        Operand("moving", (128, 512), "bfloat16", "sbuf"),
        Operand("dst", (128, 512), "float32", "psum"),
    )
    ev = event("nisa.nc_matmul", "tensor", ops, 512)
    cost = instruction_cost(ev, TRN2)
    assert cost.cycles == 512 and cost.ns == pytest.approx(512 / 2.4)
    small = event("nisa.nc_matmul", "tensor", (ops[0], Operand("moving", (128, 16), "bfloat16", "sbuf")), 16)
    assert instruction_cost(small, TRN2).cycles == 64  # max(64, N)
    fp32 = event("nisa.nc_matmul", "tensor", (ops[0], Operand("moving", (128, 512), "float32", "sbuf")), 512)
    assert instruction_cost(fp32, TRN2).cycles == 4 * 512


def test_vector_lanes_by_dtype_and_two_inputs() -> None:
    bf = Operand("src", (128, 4096), "bfloat16", "sbuf")
    one = event("nisa.tensor_scalar", "vector", (Operand("dst", (128, 4096), "bfloat16", "sbuf"), bf), 4096)
    # 16-bit operands: 512 lanes -> 4096 * 128 / 512 = 1024 cycles, + 60 access overhead, at 0.96 GHz
    assert instruction_cost(one, TRN2).cycles == 1024 + COST_RULES.access_overhead_cycles
    assert instruction_cost(one, TRN2).ns == pytest.approx(1084 / 0.96)
    f32 = Operand("dst", (128, 4096), "float32", "sbuf")
    two = event(
        "nisa.tensor_tensor", "vector", (f32, bf, Operand("data2", (128, 4096), "bfloat16", "sbuf")), 4096
    )
    # a float32 operand: 256 lanes; two inputs: x2 -> 2 * 4096 * 128 / 256 = 4096
    assert instruction_cost(two, TRN2).cycles == 4096 + 60
    tiny = event("nisa.activation", "scalar", (Operand("dst", (128, 8), "float32", "sbuf"),), 8)
    assert instruction_cost(tiny, TRN2).cycles == 64 + 100 + 60  # MIN_II floor and the static overhead
    iota = event("nisa.iota", "gpsimd", (Operand("dst", (128, 100), "int32", "sbuf"),), 100)
    assert instruction_cost(iota, TRN2).cycles == 150 + 100


def test_the_estimate_has_one_per_line_table_bounds_and_roofline() -> None:
    dma = load(line=5)
    mm = event(
        "nisa.nc_matmul",
        "tensor",
        (Operand("moving", (128, 512), "bfloat16", "sbuf"),),
        512,
        line=7,
        flops=2 * 128 * 128 * 512,
    )
    section = estimate_section([dma, mm, mm], Generation.GEN3)
    by_line = {ln["line"]: ln for ln in section["lines"]}
    assert set(by_line) == {5, 7} and by_line[5]["instructions"] == 1 and by_line[7]["instructions"] == 2
    assert by_line[5]["dmaBytes"] == 262144 and by_line[5]["dmaNs"] > 0  # a DMA line: its transfers' union
    assert by_line[7]["engines"].keys() == {"Tensor"} and by_line[7]["busyNs"] > 0
    # the perfect-overlap and no-overlap figures are bounds of the scheduled time, not other estimates; both hold
    # the per-execution fixed cost, as the kernel time does
    fixed = int(K.EXECUTION_OVERHEAD.value)
    assert section["perfectPipelineNs"] == max([*section["engineNs"].values(), section["dmaNs"]]) + fixed
    # no overlap: the engines, the transfers' data and the one transfer's issue on its queue, one after another
    issue = int(K.DMA_ISSUE_COST.value)
    assert section["serialNs"] == sum(section["engineNs"].values()) + section["dmaNs"] + issue + fixed
    assert section["perfectPipelineNs"] <= section["totalNs"] <= section["serialNs"]
    r = section["roofline"]
    assert r is not None and r["flops"] == 2 * 2 * 128 * 128 * 512 and r["bytes"] == 262144
    assert r["intensity"] == pytest.approx(r["flops"] / 262144)
    assert r["compute_floor_ns"] == pytest.approx(r["flops"] / 79e3)
    assert r["memory_floor_ns"] == pytest.approx(262144 / 368)
    assert r["bound"] == "memory"  # 425 ns of TensorE work < 712 ns of DMA
    assert "estimated" in r["flops_source"] and section["label"] == "estimated"


def test_roofline_without_flops_is_memory_bound() -> None:
    dma = event("nisa.dma_copy", "dma", (), 0, bytes_read={"hbm": 1000})
    r = estimate_roofline([dma], TRN2, 100.0)
    assert r.flops == 0 and r.bound == "memory" and r.intensity == 0.0
    assert estimate_roofline([], TRN2, 100.0).intensity is None  # no HBM bytes: no intensity


def test_reductions_are_priced_by_their_input_and_scalar_operands_do_not_count_as_streams() -> None:
    # bn_stats: the dst is [128, 6] but 512 elements per partition are read
    ev = event(
        "nisa.bn_stats",
        "vector",
        (Operand("dst", (128, 6), "float32", "sbuf"), Operand("data", (128, 512), "bfloat16", "sbuf")),
        6,
    )
    # 512 elements per partition at 128 lanes (one streamed input, no performance mode); priced by its [128, 6]
    # output it would be a tiny instruction: MIN_II + the static overhead
    assert instruction_cost(ev, TRN2).cycles == math.ceil(512 * 128 / 128) + 60
    # tensor_scalar with [P, 1] operands: one stream, not three (three would double its cycles); BF16 in and out
    # in SBUF: the 4x mode, 512 lanes
    ts = event(
        "nisa.tensor_scalar",
        "vector",
        (
            Operand("dst", (128, 1024), "bfloat16", "sbuf"),
            Operand("data", (128, 1024), "bfloat16", "sbuf"),
            Operand("operand0", (128, 1), "float32", "sbuf"),
        ),
        1024,
    )
    assert instruction_cost(ts, TRN2).cycles == 1024 * 128 // 512 + 60


def test_collective_ranks_are_estimated_per_rank() -> None:
    dma = event(
        "nisa.dma_copy", "dma", (), 512, line=5, bytes_read={"hbm": 262144}, bytes_written={"sbuf": 262144}
    )
    one = estimate_section([dma], Generation.GEN3)
    # four ranks, same program, one trace: the ranks are separate devices running side by side
    four = estimate_section([replace(dma, rank=r) for r in range(4)], Generation.GEN3)
    assert four["totalNs"] == one["totalNs"] and four["lines"][0]["dmaNs"] == one["lines"][0]["dmaNs"]
    assert four["roofline"] is not None and one["roofline"] is not None
    assert four["roofline"]["bytes"] == one["roofline"]["bytes"]
