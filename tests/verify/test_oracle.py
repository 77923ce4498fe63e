"""Correctness oracle: each metric passes on a right answer and catches the wrong answer it is for."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from nki_studio.core.simulation_codes import ORACLE_MISMATCH
from nki_studio.verify.oracle import (
    ACCUMULATION_ULP,
    Magnitude,
    compare,
    describe,
    evaluate,
    relative_ulp,
    summarize,
    tolerance_for,
)

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
    # at unit magnitude the BF16 allclose pair is one ULP each (the walkthrough's atol; its rtol was 1e-2)
    assert tolerance_for("bfloat16").atol == 2.0**-7 and tolerance_for("bfloat16").rtol == 2.0**-7
    assert tolerance_for("bfloat16", atol=0.5).atol == 0.5
    assert tolerance_for("int32").atol == 0.0
    # an integer off by one fails allclose exactly
    report = compare("out", np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32))
    assert {m.name: m.passed for m in report.metrics}["allclose"] is False


def test_summary_counts_inf() -> None:
    report = summarize("out", np.array([1.0, np.inf, -np.inf], np.float32))
    assert report.inf_count == 2 and report.nan_count == 0 and not report.passed


# --- scale-aware thresholds: each test's "kernel" computes the right numbers another way than its reference
# (other precision of the intermediates, other summation order), as a kernel on the engines does.


def _verdict(out: np.ndarray, ref: np.ndarray) -> dict[str, bool | None]:
    return {m.name: m.passed for m in compare("out", out, ref).metrics}


def _metric(out: np.ndarray, ref: np.ndarray, name: str) -> float:
    return float(next(m.value for m in compare("out", out, ref).metrics if m.name == name))  # type: ignore[arg-type]


def _bf16_rmsnorm_pair(gain: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A BF16 RMSNorm whose outputs reach ~16 (large weights): the reference in float64, the "kernel" with the
    1/rms factor rounded to BF16 before the multiplies, as an engine kernel keeping it in a BF16 tile does."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((256, 1024)).astype(BF16)
    w = (rng.standard_normal(1024) * 4).astype(BF16)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    inv = 1 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + 1e-6)
    ref = (x64 * inv * w64).astype(BF16)
    inv_tile = inv.astype(BF16).astype(np.float32)
    out = ((x.astype(np.float32) * inv_tile) * w.astype(np.float32) * np.float32(gain)).astype(BF16)
    return out, ref


def test_correct_bf16_rmsnorm_with_large_values_passes() -> None:
    out, ref = _bf16_rmsnorm_pair()
    report = compare("out", out, ref)
    values = {m.name: m.value for m in report.metrics}
    assert report.passed, [describe(m.to_json()) for m in report.metrics]
    # the case the walkthrough's absolute thresholds failed: one BF16 ULP at 8..16 is 2^-4 > its max abs 2^-5
    assert values["max_abs"] > 2.0**-5 and values["mean_abs"] > 5e-5  # type: ignore[operator]
    assert values["cosine"] > 0.99999 and values["allclose"] == 0  # type: ignore[operator]


def test_bf16_verdict_does_not_depend_on_the_scale() -> None:
    out, ref = _bf16_rmsnorm_pair()
    for k in (-12, -3, 0, 5, 20):  # a power of two scales BF16 values exactly
        scale = 2.0**k
        scaled = _verdict(
            (out.astype(np.float64) * scale).astype(BF16), (ref.astype(np.float64) * scale).astype(BF16)
        )
        assert scaled == _verdict(out, ref), k


def test_bf16_one_percent_gain_error_fails_on_mean_abs() -> None:
    """Every element within ~1.3 BF16 ULPs (allclose cannot see it) but all biased the same way."""
    out, ref = _bf16_rmsnorm_pair(gain=1.01)
    verdict = _verdict(out, ref)
    assert verdict["mean_abs"] is False and verdict["shape"] is True


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_scaled_product_passes_and_a_wrong_scale_fails(dtype: str) -> None:
    """A quantised product y = fp8(x * s): the kernel rounds the scale to FP8 first (as an FP8 tile holds it)."""
    fp8 = getattr(ml_dtypes, dtype)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((128, 512)) * 30).astype(fp8)
    s = 0.37
    ref = (x.astype(np.float64) * s).astype(fp8)
    out = (x.astype(np.float32) * np.float32(fp8(s))).astype(fp8)
    assert (out != ref).any()  # not a bitwise copy: the FP8 scale is rounded
    assert compare("out", out, ref).passed, _verdict(out, ref)
    wrong = (x.astype(np.float32) * np.float32(s * 1.5)).astype(fp8)
    verdict = _verdict(wrong, ref)
    assert verdict["allclose"] is False and verdict["mean_abs"] is False


def test_fp32_matmul_in_another_summation_order_passes_and_a_wrong_one_fails() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 4096)).astype(np.float32)
    b = rng.standard_normal((4096, 64)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # the engines accumulate K in 128-row tiles into PSUM: float32 partial sums, added in order
    out = np.zeros((128, 64), np.float32)
    for k in range(0, 4096, 128):
        out += a[:, k : k + 128] @ b[k : k + 128]
    assert (out != ref.astype(np.float32)).any()
    assert compare("out", out, ref).passed, _verdict(out, ref)
    skipped_tile = out - a[:, :128] @ b[:128]  # one K tile left out
    assert _verdict(skipped_tile, ref)["allclose"] is False


def test_thresholds_come_from_the_dtype_precision_and_the_reference_magnitude() -> None:
    for name in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"):
        assert relative_ulp(name) == float(ml_dtypes.finfo(getattr(ml_dtypes, name, name)).eps)
    assert relative_ulp("float32") == ACCUMULATION_ULP > float(np.finfo(np.float32).eps)
    assert relative_ulp("int32") == relative_ulp("bool") == 0.0
    magnitude = Magnitude.of(np.array([3.0, -4.0, np.nan, np.inf]))
    assert (magnitude.rms, magnitude.mean, magnitude.max) == (12.5**0.5, 3.5, 4.0)
    tol, unit = tolerance_for("bfloat16", magnitude), tolerance_for("bfloat16")
    assert tol.atol == unit.atol * magnitude.rms and tol.rtol == unit.rtol
    assert tol.max_abs == unit.max_abs * 4.0 and tol.mean_abs == unit.mean_abs * 3.5


def test_a_failing_metric_reads_as_its_value_then_what_it_needed() -> None:
    ref = np.ones((256, 256), BF16)
    report = compare("out", (ref.astype(np.float32) * 2).astype(BF16), ref)
    allclose = next(m for m in report.metrics if m.name == "allclose")
    assert allclose.value == 65536 and allclose.passed is False
    text = describe(allclose.to_json())
    assert text.startswith("allclose 65536 (needs 0 mismatches of |out-ref| <= atol + rtol x |ref|")
    assert "65536 of 65536 elements outside tolerance" in report.notes[0]
    for m in report.metrics:  # every threshold says what it compares with: a value never reads as its detail
        assert m.threshold.startswith(("0 mismatches", "<=", ">=", "==", "no NaN")), m.threshold


def test_the_rule_page_documents_each_dtype_threshold() -> None:
    page = ORACLE_MISMATCH.page.what if ORACLE_MISMATCH.page else ""
    for name in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "float32"):
        assert f"{name} u = 2^{int(np.log2(relative_ulp(name)))}" in page, name
