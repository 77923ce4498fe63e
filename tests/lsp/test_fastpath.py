"""The first diagnostics published before the full server loads (``lsp.fastpath``): the same answers as the
full server, nothing lost at the handover, and the plain full start whenever the shortcut does not apply.

The process tests drive ``nki-studio serve`` over raw JSON-RPC with their own cache folder, so whether the
early phase runs is decided by the test, not by earlier runs on the machine."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import TRY_KERNEL
from nki_studio.lsp.convert import client_units
from nki_studio.lsp.fastpath import initialize_cache, start
from nki_studio.lsp.fastpath.early_phase import EarlyPhase
from nki_studio.lsp.fastpath.handover import EarlyLint, Handover
from nki_studio.lsp.fastpath.streams import AlreadySentFilter, ReplayReader
from nki_studio.lsp.fastpath.wire import PUBLISH
from nki_studio.nkilint.incremental import IncrementalLinter
from pygls.workspace.position_codec import PositionCodec

pytestmark = pytest.mark.skipif(not start.supported(), reason="the early phase needs select() on pipes")

KERNEL = (
    "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(a):\n"
    '    for i in nl.affine_range(4):\n        pass\n    n = ["d\u00e9j\u00e0 \U0001f600", nl.affine_range(2)]\n    return a\n'
)
EARLY_LOG = "before the full server loaded"


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Session:
    """A ``nki-studio serve`` process and the messages it sent, read on a thread."""

    def __init__(self, cache: Path) -> None:
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nki_studio", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                return
            with self._lock:
                self.received.append(json.loads(out.read(length)))
                self._lock.notify_all()

    def send(self, *messages: dict[str, Any]) -> None:
        """Write the messages in one go (as a client writes back-to-back notifications)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(_frame(m) for m in messages))
        self.proc.stdin.flush()

    def wait(self, pred: Any, what: str, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for m in self.received:
                    if pred(m):
                        return m
                left = deadline - time.monotonic()
                assert left > 0, f"no {what} in {self.received}"
                self._lock.wait(left)

    def publishes(self, uri: str) -> list[dict[str, Any]]:
        with self._lock:
            return [
                m["params"]
                for m in self.received
                if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            ]

    def close(self) -> str:
        """Shut the server down; returns its stderr."""
        self.send({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
        self.wait(lambda m: m.get("id") == 99, "shutdown answer")
        self.send({"jsonrpc": "2.0", "method": "exit"})
        _, err = self.proc.communicate(timeout=30)
        return err.decode(errors="replace")


def _initialize(options: dict[str, Any], encoding: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": os.getpid(),
            "rootUri": None,
            "initializationOptions": options,
            "capabilities": {"general": {"positionEncodings": [encoding]}},
        },
    }


def _did_open(uri: str, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    }


def test_second_start_answers_early_with_the_full_servers_answers(tmp_path: Path, workdir: Path) -> None:
    cache = tmp_path / "cache"
    options = {"nkiVersion": "0.6", "logLevel": "debug"}
    s1 = _start_and_open(cache, workdir, options)
    assert EARLY_LOG not in s1.stderr  # nothing remembered yet: the full server answered everything
    assert initialize_cache.cache_file().name in os.listdir(cache / "nki-studio")

    s2 = _start_and_open(cache, workdir, options)
    assert EARLY_LOG in s2.stderr
    assert s2.initialize == s1.initialize  # the remembered answer is the full server's
    assert len(s2.publishes) == 1, "the full server's identical first publish is not sent again"
    assert s2.publishes == s1.publishes  # same diagnostics, positions (UTF-16 after the emoji), fixes, links
    assert [d["code"] for d in s2.publishes[0]["diagnostics"]] == ["NKI201", "NKI201"]
    assert s2.code_actions == s1.code_actions and s2.code_actions  # the quick fix works after the handover
    # The full server's own first lint of that text reuses the early linter: no kernel group is checked again.
    assert re.search(r"v1: 2 diagnostics, .*, 0 kernel groups checked", s2.stderr), s2.stderr
    assert re.search(r"v1: 2 diagnostics, .*, [1-9]\d* kernel groups checked", s1.stderr), s1.stderr


def test_early_lint_uses_the_settings_of_this_start(tmp_path: Path, workdir: Path) -> None:
    cache = tmp_path / "cache"
    _start_and_open(cache, workdir, {"nkiVersion": "0.6"}, TRY_KERNEL)
    on_06 = _start_and_open(cache, workdir, {"nkiVersion": "0.6"}, TRY_KERNEL)
    on_07 = _start_and_open(cache, workdir, {"nkiVersion": "0.7"}, TRY_KERNEL)
    assert EARLY_LOG in on_06.stderr and EARLY_LOG in on_07.stderr  # settings are not part of the key
    assert [d["code"] for d in on_06.publishes[0]["diagnostics"]] == ["NKI101"]  # try/except before NKI 0.7
    assert on_07.publishes == [{"uri": (workdir / "k.py").as_uri(), "diagnostics": [], "version": 1}]


def test_other_client_capabilities_or_a_damaged_cache_start_the_full_server(
    tmp_path: Path, workdir: Path
) -> None:
    cache = tmp_path / "cache"
    utf16 = _start_and_open(cache, workdir, {"nkiVersion": "0.6"})
    utf8 = _start_and_open(cache, workdir, {"nkiVersion": "0.6"}, encoding="utf-8")
    assert EARLY_LOG not in utf8.stderr  # another client: no remembered answer for it
    utf8_early = _start_and_open(cache, workdir, {"nkiVersion": "0.6"}, encoding="utf-8")
    assert EARLY_LOG in utf8_early.stderr
    assert utf8_early.publishes == utf8.publishes != utf16.publishes  # columns in UTF-8 units after "déjà 😀"

    (cache / "nki-studio" / initialize_cache.cache_file().name).write_text("{not json")
    damaged = _start_and_open(cache, workdir, {"nkiVersion": "0.6"})
    assert EARLY_LOG not in damaged.stderr and damaged.publishes == utf16.publishes
    again = _start_and_open(cache, workdir, {"nkiVersion": "0.6"})
    assert EARLY_LOG in again.stderr  # rewritten by the full start


class Started:
    """What one start-open-ask round saw."""

    def __init__(
        self, initialize: dict[str, Any], publishes: list[dict[str, Any]], code_actions: Any, stderr: str
    ):
        self.initialize, self.publishes, self.code_actions, self.stderr = (
            initialize,
            publishes,
            code_actions,
            stderr,
        )


def _start_and_open(
    cache: Path, workdir: Path, options: dict[str, Any], text: str = KERNEL, encoding: str = "utf-16"
) -> Started:
    path = workdir / "k.py"
    path.write_text(text)
    uri = path.as_uri()
    s = Session(cache)
    try:
        s.send(_initialize(options, encoding))
        initialize = s.wait(lambda m: m.get("id") == 1, "initialize answer")["result"]
        action_range = {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 30}}
        s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}}, _did_open(uri, text))
        published = s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics", "diagnostics")
        s.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "textDocument/codeAction",
                "params": {
                    "textDocument": {"uri": uri},
                    "range": action_range,
                    "context": {"diagnostics": published["params"]["diagnostics"]},
                },
            }
        )
        actions = s.wait(lambda m: m.get("id") == 2, "codeAction answer")["result"]
        time.sleep(0.5)  # a duplicate publish from the full server would have arrived by now
        publishes = s.publishes(uri)
    except BaseException:
        s.proc.kill()
        raise
    return Started(initialize, publishes, actions, s.close())


def test_the_early_diagnostics_stay_when_another_feature_publishes_first(
    tmp_path: Path, workdir: Path
) -> None:
    # The simulate feature reports the malformed spec comment (NKI601), possibly before the full server's lint.
    text = KERNEL.replace("@nki.jit\n", "# nki-studio: simulate a=float32[0]\n@nki.jit\n")
    cache = tmp_path / "cache"
    _start_and_open(cache, workdir, {"nkiVersion": "0.6"}, text)
    run = _start_and_open(cache, workdir, {"nkiVersion": "0.6"}, text)
    assert EARLY_LOG in run.stderr
    codes = [sorted(d["code"] for d in p["diagnostics"]) for p in run.publishes]
    assert codes[0] == ["NKI201", "NKI201"]  # the early lint
    assert all({"NKI201"} <= set(c) for c in codes), codes  # no later publish drops the lint diagnostics
    assert codes[-1] == ["NKI201", "NKI201", "NKI601"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_client_units_agree_with_pygls(encoding: str) -> None:
    codec = PositionCodec(encoding)  # type: ignore[arg-type]
    for text in ["", "abc", "déjà", "a😀b", "😀😀", "中文", "\u00e9\u0301", "x = '\U0001f600'  # é"]:
        assert client_units(text, encoding) == codec.client_num_units(text), text


def test_replay_reader_continues_a_message_the_early_phase_read_part_of() -> None:
    stream = io.BytesIO(b"ength: 5\r\n\r\nhelloContent-Length: 2\r\n\r\nhi")
    reader = ReplayReader(b"Content-L", stream)
    assert reader.readline() == b"Content-Length: 5\r\n"
    assert reader.readline() == b"\r\n"
    assert reader.read(5) == b"hello"
    reader = ReplayReader(b"Content-Length: 2\r\n\r\nh", io.BytesIO(b"i"))
    assert [reader.readline(), reader.readline(), reader.read(2)] == [
        b"Content-Length: 2\r\n",
        b"\r\n",
        b"hi",
    ]


def test_handover_filter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    published = {"uri": "file:///k.py", "diagnostics": [{"message": "m"}], "version": 1}
    early = EarlyPhase(
        consumed=b"",
        initialize_id=1,
        cache_key="k",
        handover=Handover(
            initialize_result={"capabilities": {"a": 1}},
            lints={"file:///k.py": EarlyLint(published=published, linter=IncrementalLinter("/k.py"))},
        ),
    )
    out = io.BytesIO()
    sent = AlreadySentFilter(out, early)
    sent.write(_frame({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {"a": 2}}}))
    assert out.getvalue() == b""  # answered already; the new answer is remembered for the next start
    assert initialize_cache.load("k") == {"capabilities": {"a": 2}}
    same = _frame({"jsonrpc": "2.0", "method": PUBLISH, "params": published})
    sent.write(same)
    assert out.getvalue() == b""
    sent.write(same)  # only the first one per document is the duplicate
    assert out.getvalue() == same
