"""The calibration overlay, fit and file on hand-made samples and files (the end-to-end fit on synthetic
Parquet profiles is tests/service/test_calibration.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from nki_studio.estimate.calibration.fit import fit, nnls2
from nki_studio.estimate.calibration.matching import Sample, normalised_opcode
from nki_studio.estimate.calibration.overlay import Overlay
from nki_studio.estimate.calibration.store import CalibrationError, read, table_for, write
from nki_studio.protocol.calibration import CALIBRATION_VERSION, CalibrationTable
from nki_studio.sim.trace import Operand, TraceEvent


def _sample(
    key: tuple[str, str, str] | tuple[str, int], x: float, target: float, builtin: float = 1.0
) -> Sample:
    engine = "dma" if key[0] == "dma" else str(key[0])
    return Sample(key, engine, 1, x, target, builtin)


def test_nnls2_solves_the_unconstrained_problem_and_clamps_a_negative_unknown() -> None:
    a = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
    assert nnls2(a, 5 + 2 * a[:, 1]) == pytest.approx((5.0, 2.0))
    # the best fit has a negative intercept: the constrained one puts everything on the slope
    fixed, per = nnls2(a, np.array([1.0, 3.0, 5.0]))
    assert fixed == 0.0 and per == pytest.approx((1 + 6 + 15) / 14)


def test_fit_recovers_linear_costs_and_scales_the_model_where_sizes_do_not_vary() -> None:
    key = ("vector", "tensor_tensor", "bfloat16")
    one_size = ("scalar", "activation", "float32")
    samples = [_sample(key, n, 120 + 0.5 * n) for n in (128, 256, 512, 1024)]
    samples += [_sample(one_size, 512, 900.0, builtin=300.0), _sample(one_size, 512, 900.0, builtin=300.0)]
    samples += [_sample(("dma", 2), b, 400 + 0.1 * b) for b in (4096, 8192, 65536)]
    table = fit(samples, "trn2")
    costs = {(c["engine"], c["opcode"], c["dtype"]): c for c in table["compute"]}
    assert costs[key]["fixed_ns"] == pytest.approx(120) and costs[key]["per_element_ns"] == pytest.approx(0.5)
    assert costs[key]["builtin_scale"] == 0
    assert costs[one_size]["builtin_scale"] == pytest.approx(3.0) and costs[one_size]["per_element_ns"] == 0
    (dma,) = table["dma"]
    assert (dma["row_min"], dma["row_max"]) == (2048, 8192)
    assert dma["fixed_ns"] == pytest.approx(400) and dma["ns_per_byte"] == pytest.approx(0.1)


def _event(op: str, engine: str, n: int, dtype: str = "bfloat16") -> TraceEvent:
    operands = (
        Operand(role="src", buffer="sbuf", shape=(128, n), dtype=dtype, row_bytes=2 * n),
        Operand(role="dst", buffer="sbuf", shape=(128, n), dtype=dtype, row_bytes=2 * n),
    )
    return TraceEvent(seq=0, op=op, engine=engine, file="k.py", line=3, operands=operands, free_elements=n)


def _table(**overrides: object) -> CalibrationTable:
    table: CalibrationTable = {
        "target": "trn2",
        "compute": [
            {
                "engine": "vector",
                "opcode": "tensor_copy",
                "dtype": "bfloat16",
                "fixed_ns": 100.0,
                "per_element_ns": 2.0,
                "builtin_scale": 0.0,
                "samples": 3,
            }
        ],
        "engine_scale": {"vector": 1.5},
        "dma": [{"row_min": 2048, "row_max": 8192, "fixed_ns": 50.0, "ns_per_byte": 0.25, "samples": 2}],
        "held_out": {"kernels": 0, "before": None, "after": None},
        "profiles": [],
    }
    table.update(overrides)  # type: ignore[typeddict-item]
    return table


def test_the_overlay_prices_what_it_covers_and_scales_or_keeps_the_rest() -> None:
    overlay = Overlay(_table())
    assert overlay.price(_event("nisa.tensor_copy", "vector", 64), 999.0, 0) == pytest.approx(100 + 2 * 64)
    assert overlay.price(_event("nisa.tensor_tensor", "vector", 64), 200.0, 0) == pytest.approx(300.0)
    assert overlay.price(_event("nisa.activation", "scalar", 64), 200.0, 0) == 200.0  # no scale for scalar
    dma = TraceEvent(
        seq=1,
        op="nisa.dma_copy",
        engine="dma",
        file="k.py",
        line=4,
        operands=(Operand(role="dst", buffer="sbuf", shape=(128, 2048), dtype="bfloat16", row_bytes=4096),),
        bytes_written={"sbuf": 128 * 4096},
    )
    assert overlay.price(dma, 7.0, 16) == pytest.approx(50 + 0.25 * 128 * 4096 / 16)


def test_opcodes_compare_across_spellings() -> None:
    assert normalised_opcode("nisa.tensor_tensor") == normalised_opcode("TENSOR_TENSOR") == "tensortensor"


def test_the_file_keeps_other_targets_and_refuses_what_it_cannot_trust(tmp_path: Path) -> None:
    path = str(tmp_path / ".nki-studio" / "calibration.json")
    write(path, "trn2", _table())
    write(path, "trn1", _table(target="trn1"))
    assert set(read(path)["targets"]) == {"trn1", "trn2"}
    with pytest.raises(CalibrationError, match="no table for trn3"):
        table_for(path, "trn3")

    def broken(text: str, match: str) -> None:
        Path(path).write_text(text, encoding="utf-8")
        with pytest.raises(CalibrationError, match=match):
            table_for(path, "trn2")

    broken("{not json", "not JSON")
    broken(json.dumps({"version": CALIBRATION_VERSION + 1, "targets": {}}), "run nki-studio calibrate again")
    negative = _table()
    negative["compute"][0]["fixed_ns"] = -1.0
    broken(json.dumps({"version": CALIBRATION_VERSION, "targets": {"trn2": negative}}), "numbers >= 0")
    broken(
        json.dumps({"version": CALIBRATION_VERSION, "targets": {"trn2": _table(target="trn1")}}),
        "says target",
    )
    with pytest.raises(CalibrationError, match="cannot read"):
        table_for(str(tmp_path / "missing.json"), "trn2")
