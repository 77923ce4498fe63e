"""Engine choice and per-instruction rates by generation, dtype and operand placement (issue 27 item 2, compute):
the default engine of ``tensor_scalar`` and ``reciprocal`` on trn1, TF32 matmuls at the BF16 rate, the Vector
performance modes per instruction, the static overhead of tiny instructions, reciprocal on Scalar at ~N."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from nki_studio.estimate.cost import instruction_cost
from nki_studio.estimate.roofline import estimate_roofline
from nki_studio.model.targets import COST_RULES, Generation, limits_for
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import Operand, TraceEvent

TRN1 = limits_for(Generation.GEN2)
TRN2 = limits_for(Generation.GEN3)
OVERHEAD = COST_RULES.access_overhead_cycles

KERNEL = textwrap.dedent(
    """
    import nki
    import nki.isa as nisa
    import nki.language as nl


    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        s = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=s, data=t, op0=nl.add, operand0=1.0)
        r = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=r, data=s)
        nisa.dma_copy(dst=out, src=r)
        return out
    """
)


def _engines(tmp_path: Path, generation: str, free: int) -> dict[str, str]:
    path = tmp_path / "k.py"
    path.write_text(KERNEL, encoding="utf-8")
    x = np.ones((128, free), np.float32)
    trace = simulate(str(path), x, target=generation, trace=True).trace
    assert trace is not None
    return {e.op: e.engine for e in trace if e.engine != "dma"}


def test_trn1_runs_default_engine_tensor_scalar_and_large_reciprocals_on_scalar(tmp_path: Path) -> None:
    assert _engines(tmp_path, "trn1", 512) == {"nisa.tensor_scalar": "scalar", "nisa.reciprocal": "scalar"}
    # a small tile's reciprocal stays on Vector (the legacy docs advise Vector below 64 elements)
    assert _engines(tmp_path, "trn1", 32)["nisa.reciprocal"] == "vector"
    assert _engines(tmp_path, "trn2", 512) == {"nisa.tensor_scalar": "vector", "nisa.reciprocal": "vector"}


def _ev(op: str, engine: str, *operands: Operand, flops: int = 0) -> TraceEvent:
    free = max(o.shape[-1] for o in operands)
    return TraceEvent(0, op, engine, "/k.py", 1, (), operands, 128, free, flops=flops)


def test_reciprocal_costs_n_on_scalar_and_8n_on_vector() -> None:
    ops = (Operand("dst", (128, 512), "float32", "sbuf"), Operand("data", (128, 512), "float32", "sbuf"))
    assert instruction_cost(_ev("nisa.reciprocal", "scalar", *ops), TRN1).cycles == 512 + OVERHEAD
    assert instruction_cost(_ev("nisa.reciprocal", "vector", *ops), TRN1).cycles == 8 * 512 + OVERHEAD


def _matmul(dtype: str) -> TraceEvent:
    return _ev(
        "nisa.nc_matmul",
        "tensor",
        Operand("stationary", (128, 128), dtype, "sbuf"),
        Operand("moving", (128, 512), dtype, "sbuf"),
        Operand("dst", (128, 512), "float32", "psum"),
        flops=2 * 128 * 128 * 512,
    )


def test_tf32_matmuls_run_at_the_bf16_rate_and_keep_the_bf16_peak() -> None:
    assert (
        instruction_cost(_matmul("tfloat32"), TRN2).cycles
        == instruction_cost(_matmul("bfloat16"), TRN2).cycles
    )
    assert instruction_cost(_matmul("float32"), TRN2).cycles == 4 * 512
    tf32 = estimate_roofline([_matmul("tfloat32")], TRN2, 1000.0)
    fp32 = estimate_roofline([_matmul("float32")], TRN2, 1000.0)
    assert tf32.compute_floor_ns == pytest.approx(2 * 128 * 128 * 512 / 79e3)
    assert fp32.compute_floor_ns == pytest.approx(2 * 128 * 128 * 512 / 20e3)


def _vec(op: str, dtype: str, src_buffer: str = "sbuf", row_bytes: int = 0, inputs: int = 1) -> TraceEvent:
    srcs = [Operand(f"data{i}", (128, 4096), dtype, src_buffer, row_bytes=row_bytes) for i in range(inputs)]
    return _ev(op, "vector", Operand("dst", (128, 4096), dtype, "sbuf", row_bytes=row_bytes), *srcs)


@pytest.mark.parametrize(
    ("event", "data_cycles"),
    [
        (_vec("nisa.tensor_scalar", "bfloat16"), 4096 // 4),  # 4x: SBUF, 16-bit, contiguous
        (_vec("nisa.tensor_copy", "bfloat16", row_bytes=2), 4096 // 2),  # 2x: strided innermost dim
        (_vec("nisa.tensor_copy", "bfloat16", src_buffer="psum"), 4096 // 2),  # 2x: one side in PSUM
        (_vec("nisa.tensor_tensor", "bfloat16", inputs=2), 2 * 4096 // 2),  # 2x for tensor_tensor
        (_vec("nisa.tensor_tensor", "bfloat16", src_buffer="psum", inputs=2), 2 * 4096),  # input in PSUM: 1x
        (_vec("nisa.tensor_reduce", "bfloat16"), 4096),  # no mode for it: NeuronCore-v2's 128 lanes
        (_vec("nisa.tensor_scalar", "float32"), 4096),  # FP32, one input: no mode, 128 lanes
        (_vec("nisa.tensor_tensor", "float32", inputs=2), 2 * 4096 // 2),  # FP32, two inputs: 256 input lanes
        (_vec("nisa.tensor_copy", "float32", src_buffer="psum"), 4096),  # FP32 with a PSUM side: halved
    ],
)
def test_vector_performance_modes_follow_instruction_dtype_and_placement(
    event: TraceEvent, data_cycles: int
) -> None:
    assert instruction_cost(event, TRN2).cycles == data_cycles + OVERHEAD
    two_inputs = 2 if event.op.endswith("tensor_tensor") else 1
    assert instruction_cost(event, TRN1).cycles == two_inputs * 4096 + OVERHEAD  # v2: 128 lanes, no modes


def test_tiny_vector_and_scalar_instructions_pay_the_static_overhead() -> None:
    tiny = (Operand("dst", (128, 8), "float32", "sbuf"), Operand("data", (128, 8), "float32", "sbuf"))
    for engine in ("vector", "scalar"):
        ev = _ev("nisa.tensor_scalar", engine, *tiny)
        assert instruction_cost(ev, TRN2).cycles == COST_RULES.min_ii_cycles + 100 + OVERHEAD
    wide = (Operand("dst", (128, 64), "float32", "sbuf"), Operand("data", (128, 64), "float32", "sbuf"))
    assert instruction_cost(_ev("nisa.tensor_scalar", "vector", *wide), TRN2).cycles == 64 + OVERHEAD


FP32_NORM = textwrap.dedent(
    """
    import nki
    import nki.isa as nisa
    import nki.language as nl


    @nki.jit
    def kernel(x, y):
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        a = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x)
        b = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=b, src=y)
        h = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=h, data1=a, data2=b, op=nl.add)
        s = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=s, op=nl.add, data=h, axis=1)
        t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=t, data=h, op0=nl.multiply, operand0=s)
        y = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=y, data=t, op0=nl.multiply, operand0=s, op1=nl.multiply, operand1=b)
        nisa.dma_copy(dst=out, src=y)
        return out
    """
)


def test_trn2_one_input_fp32_vector_instructions_get_no_performance_mode(tmp_path: Path) -> None:
    """The walkthrough's plain RMSNorm in small: on trn2 an FP32 tensor_reduce / tensor_scalar streams its one input
    at NeuronCore-v2's 128 elements per cycle (the performance modes are 16-bit only), so it takes as many cycles
    as an FP32 tensor_tensor or scalar_tensor_tensor, whose two inputs share the 256-wide data path."""
    path = tmp_path / "k.py"
    path.write_text(FP32_NORM, encoding="utf-8")
    x = np.ones((128, 2048), np.float32)
    trace = simulate(str(path), x, x, target="trn2", trace=True).trace
    assert trace is not None
    cycles = {e.op: instruction_cost(e, TRN2).cycles for e in trace if e.engine == "vector"}
    assert cycles == {
        "nisa.tensor_tensor": 2048 + OVERHEAD,
        "nisa.tensor_reduce": 2048 + OVERHEAD,
        "nisa.tensor_scalar": 2048 + OVERHEAD,
        "nisa.scalar_tensor_tensor": 2048 + OVERHEAD,
    }
