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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from lsp_harness import TRY_KERNEL
from nki_studio.core.text_units import client_units
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

    def __init__(self, cache: Path, fastpath: str | None = None) -> None:
        """``fastpath``: the value of ``NKI_STUDIO_FASTPATH`` (None: unset, whatever the caller's environment)."""
        env = {k: v for k, v in os.environ.items() if k != start.ENV}
        env["XDG_CACHE_HOME"] = str(cache)
        if fastpath is not None:
            env[start.ENV] = fastpath
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nki_studio", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()  # the reader thread answers the server's requests
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
            message = json.loads(out.read(length))
            with self._lock:
                self.received.append(message)
                self._lock.notify_all()
            if "method" in message and "id" in message:  # a request to the client: answered as a client would
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": _client_answer(message)})

    def send(self, *messages: dict[str, Any]) -> None:
        """Write the messages in one go (as a client writes back-to-back notifications)."""
        assert self.proc.stdin is not None
        with self._write_lock:
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


def _client_answer(request: dict[str, Any]) -> Any:
    """A client's answer to a server request: no settings of its own for workspace/configuration, else null."""
    if request["method"] == "workspace/configuration":
        return [None for _ in (request.get("params") or {}).get("items", [])]
    return None


def _initialize(
    options: dict[str, Any], encoding: str, capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": os.getpid(),
            "rootUri": None,
            "initializationOptions": options,
            "capabilities": {"general": {"positionEncodings": [encoding]}, **(capabilities or {})},
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


def test_the_environment_switches_the_fast_path_off(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin, stdout = io.BytesIO(b"never read"), io.BytesIO()
    for value in ("0", "false", "Off", "no"):
        monkeypatch.setenv(start.ENV, value)
        assert not start.enabled()
        assert start.fast_start(stdin, stdout) == (stdin, stdout, None)  # the full server alone, as it was
    for value in ("1", ""):
        monkeypatch.setenv(start.ENV, value)
        assert start.enabled()


# ---- the same conversation with and without the fast path ------------------------------------------------------

CHANGED = KERNEL.replace('    n = ["d\u00e9j\u00e0 \U0001f600", nl.affine_range(2)]\n', "")
# A client that asks for settings, registers watchers and takes versioned edits, so the server's requests to
# it and the edits of the quick fixes are part of what is compared.
CAPABILITIES = {
    "workspace": {
        "configuration": True,
        "didChangeWatchedFiles": {"dynamicRegistration": True},
        "workspaceEdit": {"documentChanges": True},
    },
    "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}},
}
# Log lines whose presence depends on the machine's load, not on the conversation.
TIMING_LOGS = re.compile(r"took \d+ ms on the event loop")


def _request(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


class Conversation(NamedTuple):
    """Every message the client received (in order, up to the answer to shutdown), and the server's stderr."""

    received: list[dict[str, Any]]
    stderr: str

    def answer(self, id_: int) -> Any:
        """The result of the client's request ``id_``."""
        return next(m for m in self.received if m.get("id") == id_ and "method" not in m)["result"]


def _converse(
    cache: Path, workdir: Path, options: dict[str, Any], fastpath: str | None = None
) -> Conversation:
    """initialize, didOpen of a kernel with findings, didChange, a code action, hover, shutdown."""
    path = workdir / "k.py"
    path.write_text(KERNEL)
    uri = path.as_uri()
    doc = {"textDocument": {"uri": uri}}
    s = Session(cache, fastpath)

    def published(version: int) -> dict[str, Any]:
        return s.wait(
            lambda m: m.get("method") == PUBLISH and m["params"].get("version") == version, f"v{version}"
        )

    try:
        s.send(_initialize(options, "utf-16", CAPABILITIES))
        s.wait(lambda m: m.get("id") == 1, "initialize answer")
        s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}}, _did_open(uri, KERNEL))
        published(1)
        path.write_text(CHANGED)
        change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": CHANGED}]}
        s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change})
        diagnostics = published(2)["params"]["diagnostics"]
        loop = {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 30}}
        s.send(
            _request(
                2, "textDocument/codeAction", {**doc, "range": loop, "context": {"diagnostics": diagnostics}}
            ),
            _request(3, "textDocument/hover", {**doc, "position": {"line": 6, "character": 16}}),
        )
        s.wait(lambda m: m.get("id") == 2, "codeAction answer")
        s.wait(lambda m: m.get("id") == 3, "hover answer")
        time.sleep(0.5)  # a late (duplicate) publish would have arrived by now
    except BaseException:
        s.proc.kill()
        raise
    stderr = s.close()
    return Conversation(list(s.received), stderr)


def _as_compared(received: list[dict[str, Any]]) -> dict[str, Any]:
    """What the client received, as compared. The order of messages is kept per kind (each publish of a
    document, each log line, each request to the client, in the order sent) but not across kinds: the fast path
    answers initialize before the full server has loaded, so that answer comes before the full server's first
    log lines instead of after them (LSP allows log messages on either side of the initialize answer). The ids
    of the server's requests to the client are the server's own numbering, not part of the conversation. Log
    lines about slow event-loop listeners depend on the machine's load and are left out."""
    answers = {m["id"]: m for m in received if "method" not in m}
    by_method: dict[str, list[Any]] = {}
    for m in received:
        if "method" not in m:
            continue
        if m["method"] == "window/logMessage" and TIMING_LOGS.search(m["params"]["message"]):
            continue
        by_method.setdefault(m["method"], []).append(m.get("params"))
    return {"answers": answers, "by_method": by_method}


def test_the_same_conversation_with_and_without_the_fast_path(tmp_path: Path, workdir: Path) -> None:
    cache = tmp_path / "cache"
    options = {"nkiVersion": "0.6"}
    first = _converse(cache, workdir, options)  # nothing remembered yet: the full server answers everything
    fast = _converse(cache, workdir, options)
    assert EARLY_LOG in fast.stderr
    plain = _converse(cache, workdir, options, fastpath="0")
    assert EARLY_LOG not in first.stderr and EARLY_LOG not in plain.stderr
    assert _as_compared(fast.received) == _as_compared(plain.received) == _as_compared(first.received)
    # What the comparison covers is really there: both versions' diagnostics, the fixes, the hover, the server's
    # requests to the client and its log.
    by_method = _as_compared(fast.received)["by_method"]
    assert [len(p["diagnostics"]) for p in by_method[PUBLISH]] == [2, 1]
    assert [a["title"] for a in fast.answer(2)] == [
        "Replace with range() (NKI201)",
        "Suppress NKI201 on this line (# noqa: NKI201)",
        "Migrate kernel to NKI 0.7 (proven by simulating both versions)",  # 0.6 code (nkiVersion above)
    ]
    assert "affine_range" in fast.answer(3)["contents"]["value"]
    assert {"client/registerCapability", "workspace/configuration", "window/logMessage"} <= set(by_method)

    # Off by the setting: the early phase reads initialize but leaves it to the full server.
    off = _converse(cache, workdir, {**options, "fastStart": False})
    assert EARLY_LOG not in off.stderr and "setting fastStart" in off.stderr
    assert _as_compared(off.received) == _as_compared(plain.received)


TYPING = (
    "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef k(a):\n"
    '    s = "d\u00e9j\u00e0 \U0001f600"; nisa.tensor_scalar(dst=a, data=a, op\n    return a\n'
)


@contextmanager
def _killed_on_failure(s: Session) -> Iterator[Session]:
    """``s``, its process killed if the block fails (a closed conversation is read after the block)."""
    try:
        yield s
    except BaseException:
        s.proc.kill()
        raise


def _fast_and_plain(
    drive: Callable[..., Conversation], cache: Path, workdir: Path
) -> tuple[Conversation, Conversation]:
    """``drive`` once to remember the initialize answer, then with the fast path and without it."""
    drive(cache, workdir)
    return drive(cache, workdir), drive(cache, workdir, fastpath="0")


def _typed_right_after_opening(cache: Path, workdir: Path, fastpath: str | None = None) -> Conversation:
    """didOpen and two keyword completions sent back to back (the user typing at once), then one more later."""
    path = workdir / "k.py"
    path.write_text(TYPING)
    uri = path.as_uri()
    row = TYPING.split("\n")[7]
    at = {"line": 7, "character": client_units(row, "utf-16")}  # after the emoji: UTF-16 units differ
    with _killed_on_failure(Session(cache, fastpath)) as s:
        s.send(_initialize({"nkiVersion": "0.6"}, "utf-16", CAPABILITIES))
        s.wait(lambda m: m.get("id") == 1, "initialize answer")
        completion = {"textDocument": {"uri": uri}, "position": at}
        s.send(
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            _did_open(uri, TYPING),
            _request(2, "textDocument/completion", completion),
            _request(3, "textDocument/completion", completion),
        )
        s.wait(lambda m: m.get("id") == 3, "the second completion")
        time.sleep(1.0)  # the full server is up by then: it answers this one
        s.send(_request(4, "textDocument/completion", completion))
        s.wait(lambda m: m.get("id") == 4, "the later completion")
        time.sleep(0.5)  # a duplicate answer from the full server would have arrived by now
    return Conversation(list(s.received), s.close())


def test_keyword_completions_typed_at_once_are_answered_early_as_the_full_server_answers(
    tmp_path: Path, workdir: Path
) -> None:
    fast, plain = _fast_and_plain(_typed_right_after_opening, tmp_path / "cache", workdir)
    assert "2 completion(s) answered before the full server loaded" in fast.stderr
    assert "answered before the full server" not in plain.stderr
    for conversation in (fast, plain):  # each request answered exactly once
        ids = [m["id"] for m in conversation.received if "method" not in m]
        assert sorted(i for i in ids if i in (2, 3, 4)) == [2, 3, 4]
    expected = ["op0=", "op1=", "operand0=", "operand1="]
    assert [i["label"] for i in plain.answer(2)["items"]] == expected
    for id_ in (2, 3, 4):
        assert fast.answer(id_) == plain.answer(id_) == plain.answer(4)


def _edits(uri: str) -> list[dict[str, Any]]:
    """Two edits of KERNEL that change its diagnostics: v2 replaces ``nl.affine_range(2)`` after the emoji
    (UTF-16 columns differ from code points there) by ``range(2)``, v3 inserts a loop with no NKI work."""
    row = KERNEL.split("\n")[8]
    start = client_units(row[: row.index("nl.affine_range(2)")], "utf-16")
    replaced = {
        "range": {
            "start": {"line": 8, "character": start},
            "end": {"line": 8, "character": start + len("nl.affine_range(2)")},
        },
        "text": "range(2)",
    }
    at_return = {"start": {"line": 9, "character": 0}, "end": {"line": 9, "character": 0}}
    inserted = {"range": at_return, "text": "    for j in nl.affine_range(3):\n        pass\n"}
    return [
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        }
        for version, change in ((2, replaced), (3, inserted))
    ]


def _edited_right_after_opening(
    cache: Path, workdir: Path, fastpath: str | None = None, debounce_ms: int = 0
) -> Conversation:
    """didOpen and two edits: sent back to back (the user typing at once) with the fast path, each after the
    previous version's diagnostics without it (so every version is published)."""
    path = workdir / "k.py"
    path.write_text(KERNEL)
    uri = path.as_uri()
    with _killed_on_failure(Session(cache, fastpath)) as s:

        def published(version: int) -> None:
            s.wait(
                lambda m: m.get("method") == PUBLISH and m["params"].get("version") == version, f"v{version}"
            )

        s.send(_initialize({"nkiVersion": "0.6", "lintDebounceMs": debounce_ms}, "utf-16", CAPABILITIES))
        s.wait(lambda m: m.get("id") == 1, "initialize answer")
        opened = [{"jsonrpc": "2.0", "method": "initialized", "params": {}}, _did_open(uri, KERNEL)]
        if fastpath is None:
            s.send(*opened, *_edits(uri))
        else:
            s.send(*opened)
            for version, edit in zip((1, 2), _edits(uri), strict=True):
                published(version)
                s.send(edit)
        published(3)
        time.sleep(1.0)  # the full server is up by then: a late (stale or duplicate) publish would be here
    return Conversation(list(s.received), s.close())


def test_edits_typed_right_after_opening_are_linted_early_as_the_full_server_lints_them(
    tmp_path: Path, workdir: Path
) -> None:
    # no debounce: every version is linted and published, with the fast path as without it
    fast, plain = _fast_and_plain(_edited_right_after_opening, tmp_path / "cache", workdir)
    assert "2 edit(s) of the opened document followed before the full server loaded" in fast.stderr
    # the same diagnostics for every version, each published once, in order: none of an older version after
    # a newer one (the full server skips the versions the fast path published), no duplicate
    fast_publishes = [m["params"] for m in fast.received if m.get("method") == PUBLISH]
    plain_publishes = [m["params"] for m in plain.received if m.get("method") == PUBLISH]
    assert fast_publishes == plain_publishes
    assert [(p["version"], sorted(d["code"] for d in p["diagnostics"])) for p in fast_publishes] == [
        (1, ["NKI201", "NKI201"]),
        (2, ["NKI201"]),
        (3, ["NKI201", "NKI201"]),
    ]


def test_edits_typed_at_once_are_linted_once_they_pause_for_the_debounce(
    tmp_path: Path, workdir: Path
) -> None:
    cache = tmp_path / "cache"
    _edited_right_after_opening(cache, workdir, debounce_ms=150)  # remembers the initialize answer
    fast = _edited_right_after_opening(cache, workdir, debounce_ms=150)
    assert "2 edit(s) of the opened document followed before the full server loaded" in fast.stderr
    publishes = [m["params"] for m in fast.received if m.get("method") == PUBLISH]
    assert [p["version"] for p in publishes] == [1, 3]  # v2 was superseded by v3 within the debounce
