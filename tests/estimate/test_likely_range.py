"""The estimate's likely range: kernel class, quantile lookup and its fallbacks, on a residual table of our own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nki_studio.estimate.likely_range import (
    RESIDUALS_PATH,
    Residual,
    Residuals,
    describe,
    kernel_class,
    likely_range,
    load_residuals,
    residuals_json,
)
from nki_studio.profile.heatmap import fmt_ns

# trn2: four memory-bound points and two compute-bound; trn1: one point; trn3: none
TABLE = Residuals(
    source="test table",
    points=(
        Residual("m1", "trn2", "memory", 0.8),
        Residual("m2", "trn2", "memory", 1.0),
        Residual("m3", "trn2", "memory", 1.2),
        Residual("m4", "trn2", "memory", 1.4),
        Residual("c1", "trn2", "compute", 0.5),
        Residual("c2", "trn2", "compute", 2.0),
        Residual("t1", "trn1", "compute", 1.3),
    ),
)


@pytest.mark.parametrize(
    ("roofline", "expected"),
    [
        ({"bound": "memory"}, "memory"),
        ({"bound": "compute"}, "compute"),
        ({"bound": "unknown"}, "all"),
        (None, "all"),
    ],
)
def test_the_kernel_class_is_the_side_of_the_estimates_roofline(
    roofline: dict[str, str] | None, expected: str
) -> None:
    assert kernel_class(roofline) == expected


def test_a_class_with_enough_points_uses_its_own_deciles() -> None:
    rng = likely_range(100_000, "trn2", "memory", TABLE)
    # deciles of 0.8, 1.0, 1.2, 1.4 (linear): 0.86 and 1.34
    assert rng == {
        "lowNs": 86_000,
        "highNs": 134_000,
        "points": 4,
        "generation": "trn2",
        "kernelClass": "memory",
        "source": "test table",
    }


def test_a_class_with_too_few_points_falls_back_to_the_generations_points() -> None:
    rng = likely_range(100_000, "trn2", "compute", TABLE)
    assert rng is not None
    assert (rng["points"], rng["kernelClass"]) == (6, "all")
    # six ratios 0.5 .. 2.0: the 10th percentile between 0.5 and 0.8, the 90th between 1.4 and 2.0
    assert (rng["lowNs"], rng["highNs"]) == (65_000, 170_000)


def test_one_point_gives_its_own_ratio_at_both_ends() -> None:
    rng = likely_range(10_000, "trn1", "compute", TABLE)
    assert rng is not None and (rng["lowNs"], rng["highNs"], rng["points"]) == (13_000, 13_000, 1)


def test_a_generation_without_points_has_no_range_and_says_so() -> None:
    assert likely_range(10_000, "trn3", "memory", TABLE) is None
    assert (
        describe(10_000, None, "trn3", fmt_ns) == "≈ 10.0 µs; no calibration for trn3: its error is unknown"
    )


def test_the_range_in_words_names_its_points_generation_and_class() -> None:
    text = describe(100_000, likely_range(100_000, "trn2", "memory", TABLE), "trn2", fmt_ns)
    assert text.startswith("≈ 100.0 µs, likely 86.0 µs–134.0 µs; calibrated on 4 public measurements")
    assert "(trn2, memory-bound kernels;" in text and text.endswith("; test table)")


def test_the_table_round_trips_through_its_json(tmp_path: Path) -> None:
    path = tmp_path / "residuals.json"
    path.write_text(json.dumps(residuals_json(TABLE.source, TABLE.points, "note")), encoding="utf-8")
    back = load_residuals(path)
    assert back.source == TABLE.source and sorted(back.points, key=lambda p: p.id) == sorted(
        TABLE.points, key=lambda p: p.id
    )


def test_the_committed_table_is_readable_and_its_classes_are_known() -> None:
    table = load_residuals(RESIDUALS_PATH)
    assert table.points, "run benchmarks/calibration/run.py --write-residuals"
    assert {p.kernel_class for p in table.points} <= {"memory", "compute", "all"}
    assert all(p.ratio > 0 for p in table.points)
