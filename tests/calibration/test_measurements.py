"""The calibration suite's measurement table is well formed (a data-integrity test: no figure is asserted).

benchmarks/calibration/table.py checks every record when it reads the table; these tests run that check on the
committed table, show that it does reject broken records, and that every kernel the table names exists and has
an input builder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "calibration"))

from cases import BUILDERS
from table import GENERATIONS, QUANTITIES, TABLE, TableError, load


def test_every_point_has_source_generation_quantity_and_value() -> None:
    table = load()
    assert table.points
    for p in table.points:
        assert p.source in table.sources, p.id
        assert p.generation in GENERATIONS, p.id
        assert QUANTITIES[p.quantity] == p.unit, p.id
        assert p.value > 0, p.id


def test_every_named_kernel_file_exists_and_has_inputs() -> None:
    table = load()
    for kid, kernel in table.kernels.items():
        if kernel.origin == "published":  # fetched at run time
            assert kernel.path is None, kid
            if kernel.reference:  # its fetched reference module gives the inputs
                continue
        else:
            assert kernel.path is not None and kernel.path.is_file(), f"kernel.{kid}: {kernel.file} missing"
        assert kernel.inputs in BUILDERS, f"kernel.{kid}: no input builder {kernel.inputs!r} in cases.py"


def test_a_published_kernel_runs_at_its_measured_shape_only(tmp_path: Path) -> None:
    text = TABLE.read_text(encoding="utf-8")
    published = text.index('origin = "published"')
    quick = text.index("quick = ", published)
    end = text.index("\n", quick)
    bad = tmp_path / "measurements.toml"
    bad.write_text(text[:quick] + "quick = { M = 1 }" + text[end:], encoding="utf-8")
    with pytest.raises(TableError, match="quick == shape"):
        load(bad)


def test_every_pair_joins_two_latency_points_and_every_constant_is_sourced() -> None:
    table = load()
    ids = {p.id for p in table.points}
    for pair in table.pairs:
        assert {pair.before, pair.after} <= ids, pair.id
    for c in table.constants:
        assert c.source in table.sources, c.name


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ('source = "walkthrough"', "unknown source"),
        ('generation = "trn2"', "generation"),
        ("value = 218.666", "value must be a number"),
        ('kernel = "rmsnorm_residual"', "unknown kernel"),
    ],
)
def test_a_broken_point_is_rejected(tmp_path: Path, broken: str, message: str) -> None:
    text = TABLE.read_text(encoding="utf-8")
    first = text.index(broken, text.index("[[point]]"))  # the field in the first point
    replacement = {
        'source = "walkthrough"': 'source = "nowhere"',
        'generation = "trn2"': 'generation = "trn9"',
        "value = 218.666": 'value = "fast"',
        'kernel = "rmsnorm_residual"': 'kernel = "nothing"',
    }[broken]
    bad = tmp_path / "measurements.toml"
    bad.write_text(text[:first] + replacement + text[first + len(broken) :], encoding="utf-8")
    with pytest.raises(TableError, match=message):
        load(bad)
