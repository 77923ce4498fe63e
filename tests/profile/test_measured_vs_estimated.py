"""A measured profile against the estimate of the same kernel (issue 27 item 4): per engine, per line and for
the kernel, measured, estimated and estimated / measured (``service.measured_estimated``), and ``profile
compare PROFILE --estimate FILE::KERNEL``. The measured side is a synthetic profile of kernel version A (with
A's source snapshot), the estimated side the simulation of version B (``moved_kernels``): the hot line moved."""

from __future__ import annotations

import json
from pathlib import Path

import fixturegen
import pytest
from fixturewriters import write_parquet
from moved_kernels import A, B, marker_line
from nki_studio.cli.main import main
from nki_studio.profile.line_align import BY_NUMBER, BY_TEXT, write_snapshot
from nki_studio.protocol.profile import MeasuredVsEstimated
from nki_studio.service import measured_estimated, profiles, simulation, views
from nki_studio.service.profiles import LoadOptions
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import Simulator
from nki_studio.service.views import View

_INPUTS = "x=float32[128,512]"


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, View, View, dict, dict, tuple]:
    """The measured profile (of A, snapshot stored) and B's estimate, viewed with all their lines; and the
    loaded report and estimate section they were viewed from."""
    root = tmp_path_factory.mktemp("mve")
    kernel = root / "kernel.py"
    kernel.write_text(B, encoding="utf-8")
    tl = fixturegen.kernel_timeline("/home/ubuntu/kernels/kernel.py", fixturegen.kernel_body_lines(A), seed=3)
    prof = write_parquet(tl, root / "profile_parquet")
    write_snapshot(prof, {str(kernel): A})
    report = profiles.load(prof, LoadOptions(roots=[root]))
    measured = views.view(report, lambda r: report.local_path(r) or r, top=None)
    settings = Settings(trusted_workspace=True)
    prepared = simulation.prepare(str(kernel), B, settings, override=simulation.overrides(_INPUTS))
    result = Simulator().run(prepared, settings, warm=False)
    assert result["status"] == "no_reference", result  # ran; its spec names no reference
    estimated = views.estimate_view(result["estimate"], lambda p: p, top=None)
    texts_m = profiles.snapshot(prof)
    texts_e = {str(kernel): profiles.source_text(text=B)}
    return kernel, prof, measured, estimated, texts_m, texts_e, (report, result["estimate"])


def _compare(sides: tuple, top: int | None = None) -> MeasuredVsEstimated:
    _, _, measured, estimated, texts_m, texts_e, _ = sides
    return measured_estimated.measured_vs_estimated(
        measured, estimated, texts_m, texts_e, measured_from="m", estimated_from="e", top=top
    )


def test_kernel_and_engines_are_measured_estimated_and_their_ratio(sides: tuple) -> None:
    _, _, measured, estimated, _, _, _ = sides
    got = _compare(sides)
    assert got["measured"] == "m" and got["estimated"] == "e"
    k = got["kernel"]
    assert k["measured_ns"] == measured["summary"]["latency_ns"] > 0
    assert k["estimated_ns"] == estimated["summary"]["latency_ns"] > 0
    assert k["ratio"] == pytest.approx(k["estimated_ns"] / k["measured_ns"])
    engines = {*measured["summary"]["engines"], *estimated["summary"]["engines"]}
    assert set(got["engines"]) == engines
    for name, r in got["engines"].items():
        assert r["measured_ns"] == measured["summary"]["engines"].get(name, 0)
        assert r["estimated_ns"] == estimated["summary"]["engines"].get(name, 0)
        assert r["ratio"] == (r["estimated_ns"] / r["measured_ns"] if r["measured_ns"] else None)


def test_lines_follow_the_edit_hottest_first_with_their_ratio(sides: tuple) -> None:
    kernel = sides[0]
    got = _compare(sides)
    assert got["lines_matched_by"].startswith(BY_TEXT)
    (hot,) = [r for r in got["lines"] if r["line_measured"] == marker_line(A, "hot")]
    assert hot["line_estimated"] == marker_line(B, "hot") == hot["line"] and hot["file"] == str(kernel)
    assert hot["measured_ns"] > 0 and hot["estimated_ns"] > 0
    assert hot["ratio"] == pytest.approx(hot["estimated_ns"] / hot["measured_ns"])
    (removed,) = [r for r in got["lines"] if r["line_measured"] == marker_line(A, "removed")]
    assert removed["line_estimated"] is None and removed["estimated_ns"] == 0 and removed["ratio"] == 0
    (added,) = [r for r in got["lines"] if r["line_estimated"] == marker_line(B, "added")]
    assert added["line_measured"] is None and added["measured_ns"] == 0 and added["ratio"] is None
    heat = [max(r["measured_ns"], r["estimated_ns"]) for r in got["lines"]]
    assert heat == sorted(heat, reverse=True)
    assert _compare(sides, top=2)["lines"] == got["lines"][:2]


def test_either_order_or_none_when_both_sides_are_alike(sides: tuple) -> None:
    _, _, measured, estimated, texts_m, texts_e, _ = sides
    forward = measured_estimated.of_pair(measured, estimated, texts_m, texts_e, "m", "e")
    backward = measured_estimated.of_pair(estimated, measured, texts_e, texts_m, "e", "m")
    assert forward == backward == _compare(sides, top=views.TOP_LINES)
    assert measured_estimated.of_pair(measured, measured, texts_m, texts_m, "m", "m") is None
    with pytest.raises(ValueError, match="measured and estimated"):
        measured_estimated.measured_vs_estimated(
            estimated, measured, texts_e, texts_m, measured_from="", estimated_from=""
        )


def test_of_profile_views_the_report_and_the_section_as_the_front_ends_do(sides: tuple) -> None:
    kernel, prof, _, _, _, _, (report, section) = sides
    got = measured_estimated.of_profile(report, str(prof), section, str(kernel), "kernel", B, top=None)
    assert got == {**_compare(sides), "measured": got["measured"], "estimated": got["estimated"]}
    assert got["measured"] == measured_estimated.measured_from(str(prof))
    assert got["estimated"] == measured_estimated.estimated_from(str(kernel), "kernel")
    bare = measured_estimated.of_profile(report, str(prof), section, str(kernel), "kernel", B, texts={})
    assert bare["lines_matched_by"].startswith(BY_NUMBER)


def test_cli_prints_the_table_and_json(sides: tuple, capsys: pytest.CaptureFixture[str]) -> None:
    kernel, prof = sides[0], sides[1]
    base = ["profile", "compare", str(prof), "--estimate", f"{kernel}::kernel", "--inputs", _INPUTS]
    assert main([*base, "--root", str(kernel.parent), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["estimated"].startswith("estimated: kernel in ") and "not a measurement" in got["estimated"]
    assert got["measured"] == f"measured: Neuron Explorer profile {prof}"
    assert got["lines_matched_by"].startswith(BY_TEXT)
    assert got["kernel"]["ratio"] == pytest.approx(
        got["kernel"]["estimated_ns"] / got["kernel"]["measured_ns"]
    )
    assert main([*base, "--root", str(kernel.parent)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("estimated: ") and "est/meas" in out[2]
    assert out[3].split()[:2] == ["kernel", "latency"] and out[3].endswith(f"{got['kernel']['ratio']:.2f}x")
    assert any(f":{marker_line(A, 'hot')} → {marker_line(B, 'hot')}" in ln for ln in out)


def test_cli_without_snapshot_matches_by_number_and_refuses_bad_arguments(
    sides: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = sides[0]
    tl = fixturegen.kernel_timeline("/home/ubuntu/kernels/kernel.py", fixturegen.kernel_body_lines(B), seed=4)
    prof = write_parquet(tl, tmp_path / "bare_parquet")
    args = ["profile", "compare", str(prof), "--estimate", str(kernel), "--inputs", _INPUTS, "--json"]
    assert main([*args, "--root", str(kernel.parent)]) == 0
    assert json.loads(capsys.readouterr().out)["lines_matched_by"].startswith(BY_NUMBER)
    assert main(["profile", "compare", str(prof)]) == 2
    assert "give B or --estimate" in capsys.readouterr().err
    assert main(["profile", "compare", str(prof), str(prof), "--estimate", str(kernel)]) == 2
    assert main(["profile", "compare", str(prof), "--estimate", str(tmp_path / "none.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["profile", "compare", str(prof), "--estimate", f"{kernel}::nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_the_language_server_pairs_the_loaded_profile_with_the_documents_estimate(sides: tuple) -> None:
    from nki_studio.lsp.measured_estimated import MeasuredAndEstimated

    kernel, prof, _, _, _, _, (report, section) = sides
    uri, other = kernel.as_uri(), (kernel.parent / "other.py").as_uri()
    payload = {"uri": uri, "source": "estimate", "lines": []}
    pairing = MeasuredAndEstimated()
    pairing.estimated(uri, str(kernel), "kernel", section, B)
    assert pairing.attach(payload) == payload  # no profile loaded
    pairing.measured(report, str(prof), [uri])
    got = pairing.attach(payload)["measured_vs_estimated"]
    assert got == measured_estimated.of_profile(report, str(prof), section, str(kernel), "kernel", B)
    assert got["lines_matched_by"].startswith(BY_TEXT)
    pairing.measured(report, str(prof), [other])  # the profile is of another file
    assert pairing.comparison(uri) is None
    pairing.measured(None)
    assert pairing.comparison(uri) is None
