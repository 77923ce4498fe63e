"""Round trips through a real sshd on 127.0.0.1: CLI → heat on the right lines; hostile names stay inert;
the Parquet→JSON fallback; remote files cleaned or kept."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from conftest import BODY_LINES, KERNEL_SOURCE
from helpers import cli, heat_lines
from nki_studio.profile.line_align import read_snapshot
from sshd import LoopbackHost

pytestmark = pytest.mark.slow  # each test drives ssh/scp against a real sshd (seconds each)


def test_cli_round_trip_paints_the_kernel_lines(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    r = cli(
        host, f"{kernel}::add_act_kernel", tmp_path / "remote", tmp_path / "cache", STANDIN_CALLS=str(calls)
    )
    assert r.returncode == 0, r.stderr
    assert heat_lines(r.stdout, kernel) == list(BODY_LINES)
    report = json.loads(r.stdout)
    downloaded = Path(report["downloaded"])
    assert downloaded.is_relative_to(tmp_path / "cache" / "add_act.add_act_kernel" / "trn2-test")
    assert report["profile"]["format"] == "parquet"
    # the kernel's text as captured, stored with the profile for `profile compare` (line_align)
    snapshot = read_snapshot(downloaded)
    assert [t.lines for t in snapshot.values()] == [tuple(kernel.read_text().splitlines())]
    argvs = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    assert argvs[0] == [
        "capture",
        "-n",
        "artifacts/kernel.neff",
        "-s",
        "out.ntff",
        "--num-exec=2",
        "--profile-nth-exec=2",
        "--enable-dge-notifs",
    ]
    assert argvs[1][:5] == ["view", "-n", "artifacts/kernel.neff", "-s", "out_exec_2.ntff"]
    assert "--nki-source-root" in argvs[1] and argvs[1][-4:] == [
        "--output-format",
        "parquet",
        "--output-file",
        "profile",
    ]
    assert list((tmp_path / "remote").iterdir()) == []  # remote job directory cleaned (keepFiles off)
    for stage in ("[upload]", "[compile]", "[capture]", "[view]", "[download]", "[load]"):
        assert stage in r.stderr
    assert "captured execution 2 of 2" in r.stderr  # remote stdout reaches the log


@pytest.mark.parametrize("transfer", ["scp", "rsync"])
def test_hostile_paths_and_names_run_nothing(host: LoopbackHost, tmp_path: Path, transfer: str) -> None:
    marker = f"pwned-{uuid.uuid4().hex[:8]}"
    folder = tmp_path / f"dir with 'quotes' and \"double\" $(touch {marker}) ; touch {marker}"
    folder.mkdir()
    kernel = folder / f"k $(touch {marker}); `touch {marker}` 'q\" && touch {marker}.py"
    kernel.write_text(KERNEL_SOURCE, encoding="utf-8")
    remote = tmp_path / "remote"
    r = cli(
        host, f"{kernel}::add_act_kernel", remote, tmp_path / "cache", "--keep-remote", "--transfer", transfer
    )
    assert r.returncode == 0, r.stderr
    assert f"$ {transfer} " in r.stderr
    assert heat_lines(r.stdout, kernel) == list(BODY_LINES)
    jobs = list(remote.iterdir())
    assert (
        len(jobs) == 1 and (jobs[0] / "src" / kernel.name).read_text() == KERNEL_SOURCE
    )  # kept, name intact
    # a hostile kernel name never reaches the host: no such kernel
    r2 = cli(host, f"{kernel}::add_act_kernel; touch {marker}", remote, tmp_path / "cache")
    assert r2.returncode == 2 and "no kernel named" in r2.stderr
    for place in (tmp_path, Path.home(), Path.cwd(), Path("/tmp")):
        assert not list(place.glob(f"**/{marker}*" if place == tmp_path else f"{marker}*")), place


def test_older_tool_falls_back_to_json(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    r = cli(host, str(kernel), tmp_path / "remote", tmp_path / "cache", STANDIN_OLD_TOOL="1")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["profile"]["format"] == "legacy-json"
    assert "retrying with --output-format json" in r.stderr
    assert heat_lines(r.stdout, kernel) == list(BODY_LINES)
