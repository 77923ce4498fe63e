"""Correctness oracle: each metric passes on a right answer and catches the wrong answer it is for."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from nki_studio.verify.oracle import compare, evaluate, summarize, tolerance_for

BF16 = ml_dtypes.bfloat16


def _rmsnorm(x: np.ndarray, w: np.ndarray, eps: float, *, eps_inside: bool = True) -> np.ndarray:
    x32 = x.astype(np.float32)
    ms = np.mean(x32 * x32, axis=-1, keepdims=True)
    denom = np.sqrt(ms + eps) if eps_inside else np.sqrt(ms) + eps
    return (x32 / denom * w.astype(np.float32)).astype(BF16)


def _inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    # small magnitudes make epsilon matter, as in the walkthrough's "small and large magnitudes" inputs
    x = (rng.standard_normal((128, 512)) * 0.05).astype(BF16)
    return x, rng.standard_normal(512).astype(BF16)


def test_right_answer_passes_every_metric() -> None:
    x, w = _inputs()
    out = _rmsnorm(x, w, 1e-2)
    report = evaluate([out], _rmsnorm(x, w, 1e-2), [("x", x.copy()), ("w", w.copy())], [x, w])
    assert report.passed, report.failed_metrics()
    names = [m.name for m in report.outputs[0].metrics]
    assert names == ["finite", "shape", "dtype", "allclose", "max_abs", "mean_abs", "cosine"]
    assert [m.name for m in report.input_checks] == ["unchanged:x", "unchanged:w"]


def test_epsilon_outside_the_sqrt_is_caught() -> None:
    x, w = _inputs()
    wrong = _rmsnorm(x, w, 1e-2, eps_inside=False)
    report = evaluate([wrong], _rmsnorm(x, w, 1e-2), [("x", x.copy()), ("w", w.copy())], [x, w])
    assert not report.passed
    failed = {m.name for _, m in report.failed_metrics()}
    assert "allclose" in failed and "mean_abs" in failed, failed
    assert "finite" not in failed and "shape" not in failed  # it is the numbers, not the structure
    assert any("outside tolerance" in n for n in report.outputs[0].notes)


def test_modified_input_and_nan_sentinel_are_reported() -> None:
    x, w = _inputs()
    before = [("x", x.copy()), ("w", w.copy())]
    x[3, 4] = 0  # the kernel wrote into its input
    out = _rmsnorm(x, w, 1e-2)
    out[130 % 128 :, :] = np.nan  # rows 2.. never written
    report = evaluate([out], None, before, [x, w])
    assert not report.passed and not report.has_reference
    failed = {m.name for _, m in report.failed_metrics()}
    assert failed == {"unchanged:x", "finite"}
    assert report.outputs[0].nan_count == 126 * 512
    note = report.outputs[0].notes[0]
    assert "never wrote" in note and "in 126 of 128 rows (2-127)" in note


def test_shape_mismatch_and_arity() -> None:
    out = np.zeros((4, 4), np.float32)
    report = compare("out", out, np.zeros((4, 5), np.float32))
    assert {m.name: m.passed for m in report.metrics}["shape"] is False
    report = evaluate([out, out], out, [], [])
    assert report.problems and not report.passed


def test_tolerances_per_dtype_and_override() -> None:
    assert tolerance_for("bfloat16").atol == 2.0**-7 and tolerance_for("bfloat16").rtol == 1e-2
    assert tolerance_for("bfloat16", atol=0.5).atol == 0.5
    assert tolerance_for("int32").atol == 0.0
    # an integer off by one fails allclose exactly
    report = compare("out", np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32))
    assert {m.name: m.passed for m in report.metrics}["allclose"] is False


def test_summary_counts_inf() -> None:
    report = summarize("out", np.array([1.0, np.inf, -np.inf], np.float32))
    assert report.inf_count == 2 and report.nan_count == 0 and not report.passed
