"""Correctness oracle: compare a kernel's outputs with a reference, metric by metric.

Metrics are those of the published Trn2 RMSNorm walkthrough (issue 3/4): outputs finite, inputs unchanged,
shape/dtype, elementwise allclose, max abs error, mean abs error, cosine similarity. The walkthrough's BF16
thresholds are absolute (atol = 2^-7, max abs <= 2^-5, mean abs <= 5e-5), which fails correct kernels whose
values are large (one BF16 ULP at 8 is 2^-4). Here every threshold is derived from two things (our choice,
*inferred*, documented in docs/rules/NKI620.md): the output dtype's unit in the last place relative to 1
(``u``, ml_dtypes ``finfo(dtype).eps``, floored for FP32/FP64 at the rounding of an FP32 accumulation) and the
reference's magnitude (:class:`Magnitude`). Integers and bool are exact. ``atol``/``rtol`` can be overridden
per spec (absolute numbers, as given).

The reference is cast to the output's dtype before comparing (the walkthrough compares BF16 with BF16), and
all arithmetic is done in float32 (16- and 8-bit outputs) or float64.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from nki_studio.protocol.simulation import MetricValue, Oracle, OracleMetric, OracleOutput
from nki_studio.verify.inputs import as_numpy_dtype

# The engines accumulate in FP32 (inferred from the NKI docs: PSUM accumulates matmuls in FP32) and the
# reference sums in another order: for an n-term sum the two differ by about sqrt(n) FP32 ULPs (rounding errors
# add up like a random walk); n up to 2^16 gives 2^8 * 2^-23 = 2^-15. A finer FP32 threshold would judge the
# summation order, not the kernel.
ACCUMULATION_ULP = 2.0**-15
# The cosine is itself computed in float64 over up to millions of terms: equal tensors may give 1 - 2^-50.
_COSINE_SLACK = 2.0**-40


def relative_ulp(dtype: str | np.dtype[Any]) -> float:
    """``u``: the spacing of ``dtype``'s values at 1.0 (one ULP, relative; ml_dtypes ``finfo.eps``), at least
    :data:`ACCUMULATION_ULP`; 0 for integers and bool, which are compared exactly."""
    np_dtype = as_numpy_dtype(dtype) if isinstance(dtype, str) else dtype
    if np_dtype.kind in "biu":
        return 0.0
    return max(float(ml_dtypes.finfo(np_dtype).eps), ACCUMULATION_ULP)


@dataclass(frozen=True)
class Magnitude:
    """The reference's magnitude over its finite elements: root mean square, mean and largest absolute value."""

    rms: float
    mean: float
    max: float

    @classmethod
    def of(cls, values: np.ndarray) -> Magnitude:
        """The magnitude of ``values`` (NaN/Inf left out; all zeros for an empty or non-finite tensor)."""
        flat = np.abs(values.ravel())
        finite = flat if bool(np.isfinite(flat).all()) else flat[np.isfinite(flat)]
        if not finite.size:
            return cls(0.0, 0.0, 0.0)
        mean_square = float(np.mean(np.square(finite, dtype=np.float64)))
        return cls(mean_square**0.5, float(finite.mean(dtype=np.float64)), float(finite.max()))


UNIT = Magnitude(1.0, 1.0, 1.0)


@dataclass(frozen=True)
class Tolerance:
    """Pass thresholds for one output: its dtype's ULP ``u`` held against the reference's magnitude.

    allclose: |out - ref| <= atol + rtol * |ref| elementwise, with rtol = u (kernel and reference each rounded
    to the dtype differ by up to one ULP of the element, and ULP(x) <= u * |x|) and atol = u * rms|ref| (an
    element near zero carries the rounding of the values it was computed from); max abs error <= 4 u max|ref|
    (the walkthrough's 2^-5 is four BF16 ULPs at 1); mean abs error <= u/2 mean|ref| (a correct kernel
    differs from the reference only where the two roundings differ, by one ULP, on fewer than half the
    elements); cosine >= 1 - u^2/2 (1 - cos is about half the squared relative RMS error, here at most u)."""

    atol: float
    rtol: float
    max_abs: float
    mean_abs: float
    cosine: float
    ulp: float = 0.0
    overridden: frozenset[str] = frozenset()  # "atol"/"rtol" given by the spec


def tolerance_for(
    dtype: str | np.dtype[Any],
    magnitude: Magnitude = UNIT,
    atol: float | None = None,
    rtol: float | None = None,
) -> Tolerance:
    """Thresholds for an output of ``dtype`` against a reference of ``magnitude``; ``atol``/``rtol`` (from
    the spec) override the allclose pair as given."""
    u = relative_ulp(dtype)
    return Tolerance(
        atol=u * magnitude.rms if atol is None else atol,
        rtol=u if rtol is None else rtol,
        max_abs=4 * u * magnitude.max,
        mean_abs=u / 2 * magnitude.mean,
        cosine=1.0 - u * u / 2 - _COSINE_SLACK,
        ulp=u,
        overridden=frozenset(k for k, v in (("atol", atol), ("rtol", rtol)) if v is not None),
    )


def _thresholds(tol: Tolerance) -> dict[str, str]:
    """The threshold text of each metric, with where its number comes from (so a value never reads as its
    own detail: ``allclose 65535 (needs 0 mismatches ...)``)."""
    if tol.ulp == 0.0:
        return {
            "allclose": "0 mismatches (exact)",
            "max_abs": "<= 0 (exact)",
            "mean_abs": "<= 0 (exact)",
            "cosine": ">= 1 (exact)",
        }
    atol = f"atol={tol.atol:.3g}" + (" (spec)" if "atol" in tol.overridden else " = 1 ULP x rms|ref|")
    rtol = f"rtol={tol.rtol:.3g}" + (" (spec)" if "rtol" in tol.overridden else " = 1 ULP")
    return {
        "allclose": f"0 mismatches of |out-ref| <= atol + rtol x |ref|, {atol}, {rtol}",
        "max_abs": f"<= {tol.max_abs:.3g} = 4 ULP x max|ref|",
        "mean_abs": f"<= {tol.mean_abs:.3g} = 1/2 ULP x mean|ref|",
        "cosine": f">= {tol.cosine:.8g} = 1 - ULP^2/2",
    }


@dataclass(frozen=True)
class Metric:
    """One check: its value, the threshold it was held to, and whether it passed (None: not applicable)."""

    name: str
    value: MetricValue
    threshold: str
    passed: bool | None

    def to_json(self) -> OracleMetric:
        """JSON-friendly form."""
        return {"name": self.name, "value": self.value, "threshold": self.threshold, "passed": self.passed}


@dataclass
class OutputReport:
    """Per-output summary plus the metrics against the reference (if any)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nan_count: int
    inf_count: int
    metrics: list[Metric] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no metric failed."""
        return all(m.passed is not False for m in self.metrics)

    def to_json(self) -> OracleOutput:
        """JSON-friendly form (the shape as a list)."""
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "nan_count": self.nan_count,
            "inf_count": self.inf_count,
            "metrics": [m.to_json() for m in self.metrics],
            "notes": list(self.notes),
            "passed": self.passed,
        }


@dataclass
class OracleReport:
    """The oracle's verdict over all outputs and inputs."""

    has_reference: bool
    outputs: list[OutputReport]
    input_checks: list[Metric]
    problems: list[str] = field(default_factory=list)  # e.g. the reference returned the wrong arity

    @property
    def passed(self) -> bool:
        """True when every output and input check passed and nothing structural went wrong."""
        return (
            not self.problems
            and all(o.passed for o in self.outputs)
            and all(m.passed is not False for m in self.input_checks)
        )

    def failed_metrics(self) -> list[tuple[str, Metric]]:
        """(output name, metric) for every failed check, inputs included."""
        out = [(o.name, m) for o in self.outputs for m in o.metrics if m.passed is False]
        return out + [("inputs", m) for m in self.input_checks if m.passed is False]

    def to_json(self) -> Oracle:
        """JSON-friendly form (for ``nki/simulationResult`` and ``--json``)."""
        return {
            "hasReference": self.has_reference,
            "passed": self.passed,
            "problems": self.problems,
            "inputs": [m.to_json() for m in self.input_checks],
            "outputs": [o.to_json() for o in self.outputs],
        }


def format_value(value: MetricValue) -> str:
    """A metric value as every front end shows it (floats to 6 significant digits)."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def describe(metric: OracleMetric) -> str:
    """``allclose 65535 (needs 0 mismatches of ...)``: a metric's value, then the threshold it was held to."""
    return f"{metric['name']} {format_value(metric['value'])} (needs {metric['threshold']})"


def dtype_name(array: np.ndarray) -> str:
    """NumPy/ml_dtypes name of an array's dtype (``bfloat16``, ``float32`` ...)."""
    return str(array.dtype.name)


def _nan_note(name: str, array: np.ndarray, values: np.ndarray, nan_count: int) -> str:
    where_nan = np.argwhere(np.isnan(values))
    first = tuple(int(i) for i in where_nan[0])
    rows = np.unique(where_nan[:, 0]) if array.ndim else np.array([0])
    where = f"first at index {list(first)}"
    if array.ndim >= 2:
        where += f", in {len(rows)} of {array.shape[0]} rows ({_ranges(rows)})"
    return (
        f"{name}: {nan_count} NaN value(s), {where}. NaN is the sentinel the simulator fills newly "
        "allocated memory with, so this usually means the kernel read (or returned) memory it never wrote."
    )


def _ranges(values: np.ndarray) -> str:
    """``0-127, 256-300`` for a sorted index list (at most 4 ranges shown)."""
    spans: list[tuple[int, int]] = []
    for v in values.tolist():
        if spans and v == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], v)
        else:
            spans.append((v, v))
    text = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in spans[:4])
    return text + (", ..." if len(spans) > 4 else "")


def _work_dtype(array: np.ndarray) -> type[np.floating[Any]]:
    """float32 holds every value of the 16- and 8-bit float types exactly (and is twice as fast as float64,
    which matters at millions of elements); 32/64-bit and integer outputs are compared in float64."""
    small_float = array.dtype.itemsize <= 2 and "float" in array.dtype.name
    return np.float32 if small_float else np.float64


def _is_float(array: np.ndarray) -> bool:
    return np.issubdtype(array.dtype, np.floating) or "float" in array.dtype.name


def summarize(name: str, array: np.ndarray, values: np.ndarray | None = None) -> OutputReport:
    """Shape, dtype and NaN/Inf counts of one output, with the never-written-memory note when NaNs appear.
    ``values``: the array already converted to its working dtype, if the caller has it."""
    if values is None and _is_float(array):
        values = array.astype(_work_dtype(array))
    nan_count = int(np.count_nonzero(np.isnan(values))) if values is not None else 0
    inf_count = int(np.count_nonzero(np.isinf(values))) if values is not None else 0
    report = OutputReport(name, tuple(int(d) for d in array.shape), dtype_name(array), nan_count, inf_count)
    report.metrics.append(
        Metric("finite", nan_count + inf_count == 0, "no NaN/Inf", nan_count + inf_count == 0)
    )
    if nan_count:
        assert values is not None  # NaNs exist only in float outputs
        report.notes.append(_nan_note(name, array, values, nan_count))
    return report


def compare(
    name: str, actual: np.ndarray, expected: Any, atol: float | None = None, rtol: float | None = None
) -> OutputReport:
    """Summary of ``actual`` plus every metric against ``expected`` (cast to ``actual``'s dtype)."""
    work = _work_dtype(actual)
    a = actual.astype(work)
    report = summarize(name, actual, a if _is_float(actual) else None)
    exp = np.asarray(expected)
    same_shape = tuple(exp.shape) == tuple(actual.shape)
    report.metrics.append(Metric("shape", list(actual.shape), f"== {list(exp.shape)}", same_shape))
    exp_dtype = dtype_name(exp)
    report.metrics.append(
        Metric(
            "dtype",
            report.dtype,
            f"== {exp_dtype} (reference)",
            None
            if exp_dtype in ("float32", "float64") and report.dtype != exp_dtype
            else exp_dtype == report.dtype,
        )
    )
    if not same_shape:
        return report
    e = exp.astype(as_numpy_dtype(report.dtype)).astype(work) if report.dtype != "bool" else exp.astype(work)
    tol = tolerance_for(actual.dtype, Magnitude.of(e), atol, rtol)
    needs = _thresholds(tol)
    diff = np.abs(a - e)
    finite = np.isfinite(diff)
    all_finite = bool(finite.all())
    close = diff <= tol.atol + tol.rtol * np.abs(e)  # np.isclose's rule, without its float64 copies
    if not all_finite:
        close |= np.isnan(a) & np.isnan(e)  # equal_nan
    mismatches = int(close.size - np.count_nonzero(close))
    report.metrics.append(Metric("allclose", mismatches, needs["allclose"], mismatches == 0))
    if mismatches:
        worst = np.unravel_index(
            int(np.argmax(np.where(close, -1.0, np.nan_to_num(diff, nan=np.inf)))), diff.shape
        )
        idx = [int(i) for i in worst]
        report.notes.append(
            f"{name}: {mismatches} of {close.size} elements outside tolerance; worst at {idx}: "
            f"got {a[tuple(idx)]:.6g}, expected {e[tuple(idx)]:.6g}"
        )
    kept = diff if all_finite else diff[finite]
    max_abs = float(kept.max()) if kept.size else float("nan")
    mean_abs = float(kept.mean(dtype=np.float64)) if kept.size else float("nan")
    report.metrics.append(Metric("max_abs", max_abs, needs["max_abs"], bool(max_abs <= tol.max_abs)))
    report.metrics.append(Metric("mean_abs", mean_abs, needs["mean_abs"], bool(mean_abs <= tol.mean_abs)))
    cosine = _cosine(a, e)
    report.metrics.append(Metric("cosine", cosine, needs["cosine"], bool(cosine >= tol.cosine)))
    return report


def _cosine(a: np.ndarray, e: np.ndarray) -> float:
    # plain reductions, not BLAS: dot/norm can stall for tens of ms on a busy 2-core machine (thread spin-up)
    a, e = a.ravel(), e.ravel()
    na = float(np.sqrt(np.sum(a * a, dtype=np.float64)))
    ne = float(np.sqrt(np.sum(e * e, dtype=np.float64)))
    if not (np.isfinite(na) and np.isfinite(ne)):
        return float("nan")
    if na == 0.0 and ne == 0.0:
        return 1.0  # two zero tensors agree exactly
    if na == 0.0 or ne == 0.0:
        return 0.0
    return float(np.sum(a * e, dtype=np.float64) / (na * ne))


def inputs_unchanged(before: Sequence[tuple[str, Any]], after: Sequence[Any]) -> list[Metric]:
    """One ``unchanged:<name>`` metric per array input (bitwise equal, NaN equal to NaN)."""
    metrics = []
    for (name, old), new in zip(before, after, strict=False):
        if not isinstance(old, np.ndarray):
            continue
        new = np.asarray(new)
        same = old.shape == new.shape and bool(np.array_equal(old.view(np.uint8), new.view(np.uint8)))
        metrics.append(Metric(f"unchanged:{name}", same, "input not modified by the kernel", same))
    return metrics


def evaluate(
    outputs: Sequence[np.ndarray],
    expected: Any | None,
    inputs_before: Sequence[tuple[str, Any]],
    inputs_after: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
) -> OracleReport:
    """The full verdict: per-output metrics against ``expected`` (None: no reference) and the input checks."""
    names = ["out"] if len(outputs) == 1 else [f"out[{i}]" for i in range(len(outputs))]
    report = OracleReport(expected is not None, [], inputs_unchanged(inputs_before, inputs_after))
    if expected is None:
        report.outputs = [summarize(n, o) for n, o in zip(names, outputs, strict=False)]
        return report
    exp_list = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    if len(exp_list) != len(outputs):
        report.problems.append(f"the reference returned {len(exp_list)} output(s), the kernel {len(outputs)}")
    report.outputs = [compare(n, o, e, atol, rtol) for n, o, e in zip(names, outputs, exp_list, strict=False)]
    report.outputs += [summarize(n, o) for n, o in list(zip(names, outputs, strict=False))[len(exp_list) :]]
    return report
