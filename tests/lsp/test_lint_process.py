"""The lint worker process (lsp.lint_process / lsp.lint_worker): same findings as a lint in this process, extra
rules loaded, stray prints kept out of the frames, log records forwarded, restarts after a crash, a hung
superseded lint killed, and the process ended by ``stop``."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import psutil
import pytest
from nki_studio.lsp import lint_process
from nki_studio.lsp.jobs import CancelToken, JobCancelled
from nki_studio.lsp.lint_process import LintProcess
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples"

KERNEL = """import nki
import nki.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)
    return t
"""

# An extra rule, loaded by the worker from this file: it prints (stdout must stay out of the frames) and sleeps
# when the text asks it to (a lint that does not end).
_SLOW_RULE = """
import time
from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis, rule


@rule(code="NKI991", name="test-only-slow", severity=Severity.INFO, summary="test only", basis=Basis.INFERRED,
      bad="", good="")
def check(ctx):
    print("stray output from the slow rule", flush=True)
    if "SLEEP" in ctx.source:
        time.sleep(60)
    return iter(())
"""


@pytest.fixture
def process() -> LintProcess:
    proc = LintProcess(rule_files=[])
    yield proc
    proc.stop()


def test_the_worker_gives_the_findings_of_a_lint_in_this_process(
    process: LintProcess, tmp_path: Path
) -> None:
    config = LintConfig()
    for example in sorted(EXAMPLES.glob("*.py"))[:4]:
        text = example.read_text()
        findings, checked = process.lint(example.as_uri(), str(example), text, config, CancelToken())
        assert findings == lint_source(text, str(example), config)
        assert checked >= 1
    path = tmp_path / "k.py"
    findings, _ = process.lint(path.as_uri(), str(path), KERNEL, config, CancelToken())
    assert [f.code for f in findings] == ["NKI301"]
    again, checked = process.lint(path.as_uri(), str(path), KERNEL, config, CancelToken())
    assert [f.code for f in again] == ["NKI301"] and checked == 0  # the worker kept the document's linter


def test_a_superseded_lint_waiting_for_the_worker_is_not_sent(process: LintProcess, tmp_path: Path) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(JobCancelled):
        process.lint((tmp_path / "k.py").as_uri(), str(tmp_path / "k.py"), KERNEL, LintConfig(), token)
    assert process.pid is None  # not even started for it


def test_a_dead_worker_is_replaced(process: LintProcess, tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    process.lint(path.as_uri(), str(path), KERNEL, LintConfig(), CancelToken())
    first = process.pid
    assert first is not None
    psutil.Process(first).kill()
    psutil.Process(first).wait(10)
    findings, _ = process.lint(path.as_uri(), str(path), KERNEL, LintConfig(), CancelToken())
    assert [f.code for f in findings] == ["NKI301"]
    assert process.pid not in (None, first)


def test_stop_ends_the_worker_and_the_next_lint_starts_one(process: LintProcess, tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    process.lint(path.as_uri(), str(path), KERNEL, LintConfig(), CancelToken())
    pid = process.pid
    assert pid is not None
    process.close([path.as_uri()])  # forgetting a document keeps the worker
    assert process.pid == pid
    process.stop()
    assert process.pid is None and not psutil.pid_exists(pid)  # ended and reaped
    findings, _ = process.lint(path.as_uri(), str(path), KERNEL, LintConfig(), CancelToken())
    assert [f.code for f in findings] == ["NKI301"]


def test_extra_rules_run_in_the_worker_their_prints_go_to_stderr_and_logs_come_back(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    raising = HERE / "raising_rule_server.py"  # registers NKI990, which prints and raises
    proc = LintProcess(rule_files=[str(raising)])
    try:
        path = tmp_path / "k.py"
        with caplog.at_level(logging.ERROR, logger="nki_studio"):
            findings, _ = proc.lint(path.as_uri(), str(path), KERNEL, LintConfig(), CancelToken())
        internal = [f for f in findings if f.code == "NKI999"]
        assert len(internal) == 1 and "NKI990" in internal[0].message
        assert "NKI301" in [f.code for f in findings]  # the other rules still ran
        assert any("deliberate failure" in r.getMessage() for r in caplog.records)
        err = ""
        for _ in range(100):
            err += capfd.readouterr().err
            if "stray output from a rule" in err:
                break
            time.sleep(0.02)
        assert "stray output from a rule" in err
    finally:
        proc.stop()


def test_a_hung_superseded_lint_kills_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(lint_process, "HUNG_AFTER_S", 0.5)
    rule_file = tmp_path / "slow_rule.py"
    rule_file.write_text(_SLOW_RULE)
    proc = LintProcess(rule_files=[str(rule_file)])
    try:
        path = tmp_path / "k.py"
        token = CancelToken()
        proc.lint(path.as_uri(), str(path), KERNEL, LintConfig(), CancelToken())  # started, rule loaded
        pid = proc.pid
        started = time.monotonic()
        threading.Timer(0.3, token.cancel).start()
        with pytest.raises(JobCancelled):
            proc.lint(path.as_uri(), str(path), KERNEL + "# SLEEP\n", LintConfig(), token)
        assert time.monotonic() - started < 20  # not the rule's 60 s
        assert proc.pid is None and pid is not None
        findings, _ = proc.lint(path.as_uri(), str(path), KERNEL, LintConfig(), CancelToken())
        assert [f.code for f in findings] == ["NKI301"]
        assert "stray output from the slow rule" in capfd.readouterr().err
    finally:
        proc.stop()


def test_the_environment_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(lint_process.ENV, raising=False)
    assert lint_process.enabled()
    for off in ("0", "false", "off", "no"):
        monkeypatch.setenv(lint_process.ENV, off)
        assert not lint_process.enabled()
