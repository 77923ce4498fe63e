"""Command building and harness generation without a network: quoting survives hostile names, host/workdir
settings are validated, ssh never gets host-key or password overrides, the harness builds the simulator's inputs."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from nki_studio.remote.commands import env_argv, kill_line, rsync_argv, scp_argv, shell_line, ssh_argv
from nki_studio.remote.config import RemoteConfigError, parse_host, remote_workdir, settings_from
from nki_studio.remote.harness import harness_spec, stage_job
from nki_studio.verify.inputs import make_inputs
from nki_studio.verify.spec import SimSpec, TensorSpec

STANDIN = Path(__file__).parent / "standin"
HOSTILE = [
    "with space.py",
    "it's.py",
    'say "hi".py',
    "$(touch MARKER).py",
    "`touch MARKER`.py",
    "a; touch MARKER",
    "x && touch MARKER",
    "new\nline; touch MARKER",
    "$HOME",
    "back\\slash",
    "-rf",
    "*",
    "~",
    "a|touch MARKER",
]


@pytest.mark.parametrize("word", HOSTILE)
def test_shell_line_keeps_every_word_literal(tmp_path: Path, word: str) -> None:
    # The remote login shell is played by a local sh: the line must give back exactly the argv we built.
    line = shell_line(
        str(tmp_path),
        env_argv(
            {"NAME": word},
            [
                sys.executable,
                "-c",
                "import json, os, sys; print(json.dumps([os.environ['NAME'], *sys.argv[1:]]))",
                word,
            ],
        ),
    )
    out = subprocess.run(["sh", "-c", line], capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert json.loads(out) == [word, word]
    assert not list(tmp_path.rglob("MARKER"))
    assert (tmp_path / ".stage.pid").read_text().strip().isdigit()


def test_activation_is_run_before_the_command(tmp_path: Path) -> None:
    line = shell_line(str(tmp_path), ["sh", "-c", 'echo "$GREETING"'], "export GREETING='hello there'")
    out = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "hello there"


def test_kill_line_ends_the_recorded_process_group(tmp_path: Path) -> None:
    line = shell_line(str(tmp_path), ["sleep", "30"])
    proc = subprocess.Popen(["sh", "-c", line], start_new_session=True)  # like sshd: a session leader
    for _ in range(100):
        if (tmp_path / ".stage.pid").exists() and (tmp_path / ".stage.pid").read_text().strip():
            break
        subprocess.run(["sleep", "0.05"])
    subprocess.run(["sh", "-c", kill_line(str(tmp_path))], check=True, timeout=10)
    assert proc.wait(timeout=5) != 0


def test_env_names_must_be_identifiers() -> None:
    with pytest.raises(ValueError):
        env_argv({"A=B": "x"}, ["true"])


@pytest.mark.parametrize(
    "text,dest,port",
    [
        ("trn2", "trn2", None),
        ("ubuntu@10.0.0.5", "ubuntu@10.0.0.5", None),
        ("ubuntu@trn2.example.org:2222", "ubuntu@trn2.example.org", 2222),
        ("host:22", "host", 22),
    ],
)
def test_parse_host(text: str, dest: str, port: int | None) -> None:
    spec = parse_host(text)
    assert (spec.destination, spec.port) == (dest, port)


@pytest.mark.parametrize(
    "text", ["", "-oProxyCommand=touch MARKER", "a b", "user@-oProxyCommand=x", "h:99999", "a@b@c"]
)
def test_parse_host_refuses(text: str) -> None:
    with pytest.raises(RemoteConfigError):
        parse_host(text)


def test_workdir() -> None:
    assert remote_workdir("~/nki-studio-remote") == "nki-studio-remote"
    assert remote_workdir("/scratch/me/") == "/scratch/me"
    for bad in ("~/a b", "$(touch x)", "a;b", "../up", "-x", "/tmp/'q'"):
        with pytest.raises(RemoteConfigError):
            remote_workdir(bad)


def test_ssh_and_scp_argv() -> None:
    s = settings_from(
        {"host": "ubuntu@h:2200", "sshOptions": ["-o", "ProxyJump=bastion"], "sshConfig": "/c f"}
    )
    argv = ssh_argv(s, "echo ok")
    assert argv[:3] == ["ssh", "-F", "/c f"]
    assert "BatchMode=yes" in argv and argv[-3:] == ["--", "ubuntu@h", "echo ok"]
    assert argv[argv.index("-p") + 1] == "2200" and "ProxyJump=bastion" in argv
    assert not any("StrictHostKeyChecking" in a or "Password" in a for a in argv)  # the user's config decides
    scp = scp_argv(s, ["/local dir"], "ubuntu@h:work/job")
    assert scp[scp.index("-P") + 1] == "2200" and scp[-3:] == ["--", "/local dir", "ubuntu@h:work/job"]
    # a user-chosen ConnectTimeout is not overridden
    s2 = settings_from({"host": "h", "sshOptions": ["-o", "ConnectTimeout=30"]})
    assert [a for a in ssh_argv(s2, "x") if a.startswith("ConnectTimeout")] == ["ConnectTimeout=30"]


def test_rsync_argv_protects_args_and_quotes_the_ssh_command() -> None:
    s = settings_from({"host": "h:2022", "sshConfig": "/it's a/config"})
    argv = rsync_argv(s, ["/local dir/"], "h:work/job")
    assert argv[:3] == ["rsync", "-a", "--protect-args"] and argv[-3:] == ["--", "/local dir/", "h:work/job"]
    ssh = shlex.split(argv[argv.index("-e") + 1])
    assert ssh[:3] == ["ssh", "-F", "/it's a/config"] and ssh[-2:] == ["-p", "2022"]


def test_settings_errors() -> None:
    with pytest.raises(RemoteConfigError, match=r"remote\.host is not set"):
        settings_from({})
    with pytest.raises(RemoteConfigError, match="neuronCore"):
        settings_from({"host": "h", "neuronCore": -1})
    with pytest.raises(RemoteConfigError, match="sshOptions"):
        settings_from({"host": "h", "sshOptions": [1]})
    with pytest.raises(RemoteConfigError, match="transfer"):
        settings_from({"host": "h", "transfer": "ftp"})


def test_harness_spec_refuses_non_identifier_kernels() -> None:
    with pytest.raises(ValueError):
        harness_spec(SimSpec(kernel="k; touch MARKER"), "k.py")


def test_harness_builds_the_simulators_inputs_and_keeps_the_neff(tmp_path: Path) -> None:
    kernel = tmp_path / "local" / "it's a $(kernel).py"
    kernel.parent.mkdir()
    kernel.write_text("import nki\n\n\n@nki.jit\ndef k(a, b, c, n):\n    return a\n", encoding="utf-8")
    (kernel.parent / "helper.py").write_text("X = 1\n", encoding="utf-8")
    spec = SimSpec(
        kernel="k",
        args=(
            ("a", TensorSpec("bfloat16", (4, 8))),
            ("b", TensorSpec("int32", (3,))),
            ("c", TensorSpec("float32", (2, 2))),
            ("n", 3),
        ),
        seed=5,
    )
    job = stage_job(tmp_path / "job", kernel, spec)
    assert sorted(p.name for p in (job / "src").iterdir()) == ["helper.py", kernel.name]
    env = {
        **os.environ,
        "PYTHONPATH": str(STANDIN),
        "NKI_ARTIFACTS_DIR": str(job / "artifacts"),
        "NKI_DEBUG_INFO": "True",
        "NEURON_FRAMEWORK_DEBUG": "1",
    }
    r = subprocess.run(
        [sys.executable, "harness.py", "spec.json"], cwd=job, env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert "NKI_STUDIO_NEFF " in r.stdout
    neff = json.loads((job / "artifacts" / "kernel.neff").read_text())
    assert neff["kernel"] == "k" and Path(neff["kernel_file"]).name == kernel.name and neff["debug_info"]
    assert (
        neff["args"][:3] == [[[4, 8], "bfloat16"], [[3], "int32"], [[2, 2], "float32"]]
        and neff["args"][3] == "3"
    )
    # same values as the simulator's generator
    sys.path.insert(0, str(job))
    try:
        import harness as remote_harness  # the generated file itself

        got = remote_harness.make_args(json.loads((job / "spec.json").read_text()))
    finally:
        sys.path.remove(str(job))
        sys.modules.pop("harness", None)
    want = make_inputs(spec)
    for g, w in zip(got[:3], want[:3], strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    assert got[3] == want[3] == 3
