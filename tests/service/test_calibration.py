"""``calibrate`` end to end on real Parquet profiles written by the project's synthetic profile writer
(tests/profile/fixturegen.py): each is our own example kernel simulated and scheduled with a hidden "true" cost
table unlike the built-in model's, i.e. a machine whose costs we chose. Fitting on five kernels must recover the
costs the five profiles can tell apart and bring held-out kernels within 10% -- through the estimate every
later simulation makes, which must say it is calibrated. Plus the profiles calibrate must skip, with the reason,
and a calibration file it must not trust, and a legacy kernel priced by calibrate as its estimate prices it."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from nki_studio.estimate.calibration.overlay import DMA_ROW_EDGES, Overlay, compute_key
from nki_studio.estimate.execution import kernel_ns
from nki_studio.estimate.merged_loads import merged_loads
from nki_studio.estimate.profile import estimate_profile, profile_from_schedule
from nki_studio.estimate.schedule import schedule
from nki_studio.model.targets import LEGACY, Generation, Target
from nki_studio.profile.metrics import compute_metrics
from nki_studio.protocol.calibration import CalibrationTable
from nki_studio.service import simulation
from nki_studio.service.calibration import CalibrateOptions, calibrate
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import RunOptions, Simulator
from nki_studio.sim.trace import TraceEvent, read_jsonl
from nki_studio.sim.trace_columns import as_compact

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "profile"))
import fixturegen  # noqa: E402
from fixturewriters import write_parquet  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "estimate"))
from test_merged_loads import REPEATED_W  # noqa: E402

GEN = Generation("trn2")
SETTINGS = Settings(trusted_workspace=True, target=GEN)
# (file stem, example, spec text replaced, by): five kernels to fit on, at sizes that differ between them
TRAIN = (
    ("tensor_add_256", "tensor_add", "[256,512]", "[256,256]"),
    ("softmax_1024", "softmax", "[256,512]", "[256,1024]"),
    ("layernorm_512", "layernorm", "1024]", "512]"),
    ("rmsnorm_residual", "rmsnorm_residual", "", ""),
    ("tiled_matmul", "tiled_matmul", "", ""),
)
# held out: a kernel the fit never saw, and two of the five at sizes it never saw
HELD_OUT = (
    ("attention", "attention", "", ""),
    ("tensor_add", "tensor_add", "", ""),
    ("softmax", "softmax", "", ""),
)


def _kernel_file(folder: Path, stem: str, example: str, old: str, new: str) -> Path:
    """A copy of an example kernel with its simulate spec's shapes changed."""
    lines = (ROOT / "examples" / f"{example}.py").read_text(encoding="utf-8").splitlines(True)
    lines = [ln.replace(old, new) if ln.startswith("# nki-studio: simulate") and old else ln for ln in lines]
    path = folder / f"{stem}.py"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _trace(path: Path, settings: Settings = SETTINGS) -> tuple[list[TraceEvent], dict[str, object]]:
    """The kernel's simulator trace and the simulation result (with its estimate)."""
    kernel = simulation.prepare(str(path), path.read_text(encoding="utf-8"), settings)
    trace_path = path.with_suffix(".jsonl")
    result = Simulator().run(kernel, settings, RunOptions(trace_path=str(trace_path)), warm=False)
    assert result["status"] == "passed", result.get("message")
    with open(trace_path, encoding="utf-8") as fh:
        return list(read_jsonl(fh)), dict(result)


def _true_table(traces: list[list[TraceEvent]]) -> CalibrationTable:
    """The hidden machine: for every instruction kind of the traces a fixed and a per-element cost, for every
    descriptor-row bucket a fixed and a per-byte cost, drawn away from the built-in model's."""
    rng = random.Random(3)
    keys = sorted({compute_key(e) for t in traces for e in t if e.engine not in ("dma", "sync")})
    return {
        "target": GEN.value,
        "compute": [
            {
                "engine": e,
                "opcode": o,
                "dtype": d,
                "fixed_ns": rng.uniform(80, 400),
                "per_element_ns": rng.uniform(0.2, 1.5),
                "builtin_scale": 0.0,
                "samples": 0,
            }
            for e, o, d in keys
        ],
        "engine_scale": {},
        "dma": [
            {
                "row_min": edge,
                "row_max": None,
                "fixed_ns": rng.uniform(100, 600),
                "ns_per_byte": rng.uniform(0.05, 0.2),
                "samples": 0,
            }
            for edge in DMA_ROW_EDGES
        ],
        "held_out": {"kernels": 0, "before": None, "after": None},
        "profiles": [],
    }


def _measured(trace: list[TraceEvent], truth: CalibrationTable, folder: Path) -> Path:
    """The Parquet profile the hidden machine would record for ``trace``."""
    target = Target(GEN)
    profile = profile_from_schedule(schedule(trace, target.limits, Overlay(truth)), target)
    return write_parquet(fixturegen.profile_timeline(profile), folder)


@pytest.mark.timeout(900)
def test_five_kernels_recover_the_hidden_costs_and_held_out_kernels_come_within_ten_percent(
    tmp_path: Path,
) -> None:
    train = [_kernel_file(tmp_path, *k) for k in TRAIN]
    held = [_kernel_file(tmp_path, *k) for k in HELD_OUT]
    train_traces = [_trace(p)[0] for p in train]
    held_traces = [_trace(p)[0] for p in held]
    truth = _true_table(train_traces + held_traces)
    profiles = [
        str(_measured(t, truth, tmp_path / f"{p.stem}_parquet"))
        for p, t in zip(train, train_traces, strict=True)
    ]

    out = tmp_path / ".nki-studio" / "calibration.json"
    result = calibrate(profiles, SETTINGS, CalibrateOptions(target="trn2", out=str(out)))
    assert result["skipped"] == [] and len(result["used"]) == 5 and result["file"] == str(out)
    table = result["table"]
    assert table is not None
    assert sorted(Path(p["kernel"].split("::")[0]).name for p in table["profiles"]) == sorted(
        p.name for p in train
    )
    assert all(len(p["sha256"]) == 64 and p["target"] == "trn2" for p in table["profiles"])
    held_out = table["held_out"]
    assert held_out["kernels"] == 5 and held_out["after"] is not None and held_out["before"] is not None
    assert held_out["after"] < held_out["before"]

    # every cost the profiles can tell apart (samples of several sizes) is the hidden one
    hidden = {(c["engine"], c["opcode"], c["dtype"]): c for c in truth["compute"]}
    separable = [c for c in table["compute"] if c["builtin_scale"] == 0 and c["per_element_ns"] > 0]
    assert len(separable) >= 3
    for c in separable:
        h = hidden[(c["engine"], c["opcode"], c["dtype"])]
        assert c["fixed_ns"] == pytest.approx(h["fixed_ns"], rel=0.02, abs=2)
        assert c["per_element_ns"] == pytest.approx(h["per_element_ns"], rel=0.02)
    hidden_dma = {d["row_min"]: d for d in truth["dma"]}
    for d in table["dma"]:
        assert d["ns_per_byte"] == pytest.approx(hidden_dma[d["row_min"]]["ns_per_byte"], rel=0.15)

    # later estimates use it and say so; held-out kernels within 10% of the hidden machine
    calibrated = Settings(trusted_workspace=True, target=GEN, calibration_file=str(out))
    limits = Target(GEN).limits
    for path, trace in zip(held, held_traces, strict=True):
        _, result_after = _trace(path, calibrated)
        estimate = result_after["estimate"]
        assert isinstance(estimate, dict)
        assert estimate["calibration"]["status"] == "applied"
        assert estimate["calibration"]["message"].startswith(
            "calibrated on 5 of your profiles, held-out error"
        )
        # the hidden machine's kernel time has the estimate's per-execution fixed cost too
        measured = kernel_ns(schedule(trace, limits, Overlay(truth)).total_ns)
        builtin = kernel_ns(schedule(trace, limits).total_ns)
        assert abs(estimate["totalNs"] / measured - 1) < 0.10, (path.stem, estimate["totalNs"], measured)
        assert abs(builtin / measured - 1) > 0.10  # the built-in model is not already there


def test_profiles_that_cannot_be_used_are_skipped_with_the_reason(tmp_path: Path) -> None:
    no_spec = tmp_path / "no_spec.py"
    no_spec.write_text(
        "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(x):\n    t = nl.load(x)\n    return t\n",
        encoding="utf-8",
    )
    body = fixturegen.kernel_body_lines(no_spec.read_text(encoding="utf-8"))
    unsimulatable = write_parquet(
        fixturegen.kernel_timeline(str(no_spec), body, n_instructions=20), tmp_path / "a"
    )
    corrupt = tmp_path / "corrupt_parquet"
    corrupt.mkdir()
    (corrupt / "Instruction.parquet").write_bytes(b"not parquet")
    # a profile of add_kernel.py's lines, said to be of tiled_matmul: nothing matches
    add = ROOT / "tests" / "verify" / "data" / "add_kernel.py"
    add_lines = fixturegen.kernel_body_lines(add.read_text(encoding="utf-8"))
    other = write_parquet(fixturegen.kernel_timeline(str(add), add_lines, n_instructions=20), tmp_path / "b")
    out = tmp_path / "calibration.json"

    result = calibrate([str(unsimulatable), str(corrupt)], SETTINGS, CalibrateOptions(out=str(out)))
    reasons = {Path(s["profile"]).name: s["reason"] for s in result["skipped"]}
    assert reasons["a"].startswith("cannot simulate") and "no_spec.py::k" in reasons["a"]
    assert reasons["corrupt_parquet"].startswith("cannot read the profile")
    assert result["file"] == "" and result["table"] is None and not out.exists()

    mismatched = calibrate(
        [str(other)],
        SETTINGS,
        CalibrateOptions(kernel=f"{ROOT / 'examples' / 'tiled_matmul.py'}", out=str(out)),
    )
    (skip,) = mismatched["skipped"]
    assert "no measured instruction matches a simulated one" in skip["reason"] and not out.exists()


def test_a_corrupt_or_mismatched_calibration_file_falls_back_to_the_built_in_model_and_says_why(
    tmp_path: Path,
) -> None:
    kernel = ROOT / "tests" / "verify" / "data" / "add_kernel.py"
    _, plain = _trace(_copy(kernel, tmp_path))
    bad = tmp_path / "calibration.json"
    bad.write_text("{corrupt", encoding="utf-8")
    _, got = _trace(
        _copy(kernel, tmp_path), Settings(trusted_workspace=True, target=GEN, calibration_file=str(bad))
    )
    estimate, before = got["estimate"], plain["estimate"]
    assert isinstance(estimate, dict) and isinstance(before, dict)
    assert estimate["totalNs"] == before["totalNs"] and "calibration" not in before
    assert estimate["calibration"]["status"] == "ignored" and "not JSON" in estimate["calibration"]["message"]
    assert estimate["calibration"]["message"].endswith("using the built-in model")

    bad.write_text(json.dumps({"version": 1, "tool": "x", "targets": {}}), encoding="utf-8")
    _, got = _trace(
        _copy(kernel, tmp_path), Settings(trusted_workspace=True, target=GEN, calibration_file=str(bad))
    )
    estimate = got["estimate"]
    assert isinstance(estimate, dict) and estimate["totalNs"] == before["totalNs"]
    assert "no table for trn2" in estimate["calibration"]["message"]


def _copy(path: Path, folder: Path) -> Path:
    target = folder / path.name
    target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return target


def test_the_command_line_prints_json_and_exits_1_when_no_profile_is_usable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from nki_studio.cli.main import main

    corrupt = tmp_path / "corrupt_parquet"
    corrupt.mkdir()
    (corrupt / "Instruction.parquet").write_bytes(b"not parquet")
    assert main(["calibrate", str(corrupt), "--json", "--out", str(tmp_path / "c.json")]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["file"] == "" and got["skipped"][0]["profile"] == str(corrupt)
    assert main(["calibrate", str(corrupt), "--target", "trn9"]) == 2  # argparse: not a target


def test_a_profile_of_another_target_is_skipped_unless_the_target_is_given(tmp_path: Path) -> None:
    add = (ROOT / "tests" / "verify" / "data" / "add_kernel.py").read_text(encoding="utf-8")
    profiles = []
    for target in ("trn2", "trn1"):
        folder = tmp_path / target
        folder.mkdir()
        (folder / "pyproject.toml").write_text(f'[tool.nki-studio]\ntarget = "{target}"\n', encoding="utf-8")
        (folder / "add.py").write_text(add, encoding="utf-8")
        timeline = fixturegen.kernel_file_timeline(
            folder / "add.py", remote_dir=str(folder), n_instructions=40
        )
        profiles.append(str(write_parquet(timeline, folder / "profile_parquet")))
    result = calibrate(profiles, Settings(trusted_workspace=True))
    assert [Path(u["file"]).parent.name for u in result["used"]] == ["trn2"] and result["target"] == "trn2"
    (skip,) = result["skipped"]
    assert "target is trn1, the other profiles' trn2" in skip["reason"]
    assert result["file"] == str(tmp_path / "trn2" / ".nki-studio" / "calibration.json")


# a legacy kernel loading the same weight tile per row tile (its compiler keeps one copy, estimate.merged_loads),
# with a simulate spec and a reference
LEGACY_REPEATED_W = "import numpy as np\n" + REPEATED_W.format(package="neuronxcc.nki").replace(
    "@nki.jit",
    "def ref(x, w):\n    return x + np.tile(w, (4, 1))\n\n\n"
    "# nki-studio: simulate x=float32[512,512] w=float32[128,512] reference=ref seed=1\n@nki.jit",
)


def test_calibrate_prices_a_legacy_kernel_as_its_estimate_does(tmp_path: Path) -> None:
    legacy = tmp_path / "repeated_w.py"
    legacy.write_text(LEGACY_REPEATED_W, encoding="utf-8")
    kernels = (legacy, _copy(ROOT / "tests" / "verify" / "data" / "add_kernel.py", tmp_path))
    target = Target(GEN)
    profiles = []
    for path in kernels:
        trace, result = _trace(path)  # read back from JSON Lines, as calibrate reads it
        estimate = result["estimate"]
        assert isinstance(estimate, dict)
        # the machine measured is the estimate: the estimated profile of the trace read back
        profile = estimate_profile(trace, target)
        assert compute_metrics(profile).kernel.latency_ns == estimate["totalNs"]
        profiles.append(
            str(write_parquet(fixturegen.profile_timeline(profile), tmp_path / f"{path.stem}_parquet"))
        )
        if path == legacy:
            compact = as_compact(trace)
            assert compact.nki_version == LEGACY and merged_loads(compact).any()
            # what a path that scheduled the trace as written would have said
            assert abs(schedule(trace, target.limits).total_ns / estimate["totalNs"] - 1) > 0.05

    result = calibrate(profiles, SETTINGS, CalibrateOptions(target="trn2", out=str(tmp_path / "c.json")))
    assert result["skipped"] == [] and len(result["used"]) == 2
    table = result["table"]
    assert table is not None and table["held_out"]["kernels"] == 2
    # the built-in model calibrate holds out is the estimate itself: no error on a machine that is the estimate
    assert table["held_out"]["before"] == pytest.approx(0, abs=1e-3)
