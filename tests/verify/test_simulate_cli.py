"""``nki-studio simulate``: exit codes, report, JSON, trace file, overrides, and the oracle catching a wrong
kernel through the whole pipeline (spec -> worker -> simulator -> oracle)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from nki_studio.cli.main import main
from nki_studio.sim.trace import read_jsonl

DATA = Path(__file__).parent / "data"


def test_pass_prints_report_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", f"{DATA / 'add_kernel.py'}::add"]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "backend: embedded" in out
    assert "estimated time (trn2" in out and "estimated roofline" in out
    # one estimated time; the perfect-overlap and no-overlap figures only as its bounds
    assert out.count("estimated time") == 1 and "busiest engine" not in out.replace(
        "lower bound: busiest", ""
    )
    assert "lower bound: busiest engine alone" in out and "upper bound: engines one after another" in out
    # the one estimate with its likely range, its number of public measurements and their generation
    assert re.search(
        r"the estimate's likely range: ≈ [\d.]+ [nµm]?s, likely [\d.]+ [nµm]?s–[\d.]+ [nµm]?s; calibrated on \d+ public measurements \(trn2, ",
        out,
    )


def test_wrong_kernel_fails_the_oracle_with_the_metric_that_caught_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.jsonl"
    code = main(["simulate", str(DATA / "rmsnorm_eps.py"), "--json", "--trace", str(trace)])
    assert code == 1
    ok, wrong = json.loads(capsys.readouterr().out)
    assert ok["status"] == "passed" and wrong["status"] == "failed"
    failed = {m["name"] for o in wrong["oracle"]["outputs"] for m in o["metrics"] if m["passed"] is False}
    assert {"allclose", "mean_abs"} <= failed and "finite" not in failed
    # several kernels -> one trace per kernel
    events = list(read_jsonl((tmp_path / "t.rmsnorm_eps_outside.jsonl").open()))
    assert events and all(e.file.endswith("rmsnorm_eps.py") for e in events)


def test_inputs_and_reference_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "simulate",
            f"{DATA / 'add_kernel.py'}::add",
            "--inputs",
            "a=float32[128,64] b=float32[128,64] seed=5",
            "--json",
        ]
    )
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["spec"]["args"] == [["a", "float32[128,64]"], ["b", "float32[128,64]"]]
    assert result["spec"]["seed"] == 5 and result["spec"]["origin"][0] == "command line"
    code = main(["simulate", f"{DATA / 'add_kernel.py'}::add", "--reference", "no_such_fn", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1 and result["status"] == "error" and "no_such_fn" in result["message"]


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "missing.py"],
        ["simulate", f"{DATA / 'add_kernel.py'}::nope"],
        ["simulate", str(DATA / "add_kernel.py"), "--inputs", "a=float33[4]"],
        ["simulate", str(DATA / "add_kernel.py"), "--target", "trn9"],
        ["simulate", str(DATA / "add_kernel.py"), "--timeout", "0"],
        ["simulate", str(DATA / "add_kernel.py"), "--backend", "official"],  # no Neuron SDK here
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "nki-studio simulate:" in capsys.readouterr().err


def test_timeout_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(DATA / "loop_kernel.py"), "--timeout", "1"]) == 1
    assert "TIMEOUT" in capsys.readouterr().out


def test_parameters_after_a_defaulted_one_go_by_keyword(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(DATA / "gap_kernel.py"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "passed"


def test_unnamed_version_is_inferred_and_shown_a_named_one_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = tmp_path / "triple.py"
    kernel.write_text((DATA / "trip_count_06.py").read_text())
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")  # a table that names no version
    assert main(["simulate", str(kernel)]) == 0
    assert "warning: NKI version 0.6 inferred from nl.dynamic_range" in capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text('[tool.nki-studio]\nnki-version = "0.7"\n')
    assert main(["simulate", str(kernel), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "error" and "dynamic_range" in result["message"]
    assert not any("inferred" in w for w in result["warnings"])
    assert main(["simulate", str(kernel), "--nki-version", "0.6", "--json"]) == 0  # the flag names it too
    assert not any("inferred" in w for w in json.loads(capsys.readouterr().out)["warnings"])


def test_a_run_without_a_reference_is_not_a_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kernel = (DATA / "add_kernel.py").read_text().replace(" reference=ref_add", "")
    (tmp_path / "k.py").write_text(kernel)
    code = main(["simulate", f"{tmp_path / 'k.py'}::add", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0  # nothing failed: the kernel ran, its outputs are finite and its inputs unchanged
    assert result["status"] == "no_reference" and not result["oracle"]["hasReference"]
    assert (
        "ran — no reference to compare" in result["message"] and "reference=<function>" in result["message"]
    )
    main(["simulate", f"{tmp_path / 'k.py'}::add"])
    assert "NO_REFERENCE" in capsys.readouterr().out
