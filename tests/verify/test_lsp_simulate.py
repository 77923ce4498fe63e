"""End-to-end through the real ``nki-studio serve`` process (pytest-lsp): simulate-on-save, the command,
progress, result notification, diagnostics, timeout while the server keeps answering, newest save wins,
and the trust refusal."""

from __future__ import annotations

import asyncio
import hashlib
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.slow  # each test starts a server and worker processes (~5-9 s)

DATA = Path(__file__).parent / "data"
CONFIG = ClientServerConfig(server_command=[sys.executable, "-m", "nki_studio", "serve"])


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    """A running server; each test initialises it with its own options."""
    lsp_client.results = []  # type: ignore[attr-defined]

    @lsp_client.feature("nki/simulationResult")
    def on_result(ls: LanguageClient, params: Any) -> None:
        ls.results.append(params)  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(ls: LanguageClient, params: types.RegistrationParams) -> None:
        return None

    @lsp_client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_refresh(ls: LanguageClient, params: None) -> None:
        ls.inlay_refreshes = getattr(ls, "inlay_refreshes", 0) + 1  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(ls: LanguageClient, params: None) -> None:
        ls.lens_refreshes = getattr(ls, "lens_refreshes", 0) + 1  # type: ignore[attr-defined]

    @lsp_client.feature("nki/heatmap")
    def on_heatmap(ls: LanguageClient, params: Any) -> None:
        ls.heatmaps = [*getattr(ls, "heatmaps", []), params]  # type: ignore[attr-defined]

    yield
    await lsp_client.shutdown_session()


async def _start(client: LanguageClient, tmp: Path, **options: Any) -> None:
    (tmp / "pyproject.toml").write_text("[tool.nki-studio]\n")
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp.as_uri(),
            initialization_options={"nki-studio": {"lintDebounceMs": 0, **options}},
        )
    )


def _save(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text)
    uri = path.as_uri()
    if version == 1:
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
    else:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return uri


async def _result(client: LanguageClient, count: int = 1, timeout: float = 60) -> list[Any]:
    deadline = time.monotonic() + timeout
    while len(client.results) < count:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "no nki/simulationResult in time"
        await asyncio.sleep(0.02)
    return list(client.results)  # type: ignore[attr-defined]


async def _until(condition: Any, timeout: float = 20) -> None:
    """Poll ``condition()`` until true (messages arrive in order, but a loaded machine delays them)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def _sim_diags(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri, []) if d.source == "nki-sim"]


async def test_save_with_spec_gives_progress_result_and_diagnostics(
    client: LanguageClient, tmp_path: Path
) -> None:
    await _start(client, tmp_path, trustedWorkspace=True, inlayHints=True)
    uri = _save(client, tmp_path / "add.py", (DATA / "add_kernel.py").read_text())
    [note] = await _result(client)
    result = note
    assert (
        result.kernel == "add"
        and result.uri == uri
        and result.status == "passed"
        and result.backend == "embedded"
    )
    assert result.estimate.label == "estimated"
    kinds = [type(v).__name__ for reports in client.progress_reports.values() for v in reports]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    # a passing kernel has no problems: its SBUF peak is a note in the hover of the allocation that reached it
    # (nl.add: the third live tile), not a Problems entry
    peak_hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=17, character=4)
        )
    )
    assert peak_hover is not None and "SBUF peak" in str(peak_hover.contents)
    assert _sim_diags(client, uri) == []
    [heatmap] = client.heatmaps  # type: ignore[attr-defined]
    assert heatmap.source == "estimate" and heatmap.lines and heatmap.kernel.estimated
    assert "estimated" in heatmap.profile.label
    assert {ln.line for ln in heatmap.lines} == {15, 16, 17}  # 0-based: the two loads and the add+store
    # painted from the estimated timeline (its latency and engine tracks), not from per-instruction sums
    assert heatmap.kernel.latency_ns == result.estimate.totalNs > 0
    assert {t.name for t in heatmap.kernel.timeline} >= {"DMA", "Vector"}
    await _until(lambda: getattr(client, "lens_refreshes", 0) >= 1)  # the lens title has the new result
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    [lens] = lenses or []
    assert lens.command is not None and lens.command.command == "nki-studio.simulate"
    assert (
        list(lens.command.arguments or []) == [uri, "add"] and "last: passed, estimated" in lens.command.title
    )
    assert re.search(
        r"estimated ≈ [\d.]+ [nµm]?s, likely [\d.]+ [nµm]?s–[\d.]+ [nµm]?s\)", lens.command.title
    )
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=30, character=0)
            ),
        )
    )
    assert sorted(h.position.line for h in hints or []) == [15, 16, 17]
    assert all("est." in str(h.label) for h in hints or [])
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=15, character=4)
        )
    )
    assert hover is not None and "Estimated (simulator trace, not measured)" in str(hover.contents)
    # the kernel's estimated time with its likely range, as the text report says it
    assert "Kernel time (estimated): ≈ " in str(hover.contents) and "public measurements (trn2, " in str(
        hover.contents
    )


async def test_broken_kernel_diagnostic_on_the_failing_line(client: LanguageClient, tmp_path: Path) -> None:
    await _start(client, tmp_path, trustedWorkspace=True)
    uri = _save(client, tmp_path / "broken.py", (DATA / "broken_kernel.py").read_text())
    [note] = await _result(client)
    assert note.status == "error"
    await _until(lambda: any(d.code == "NKI610" for d in _sim_diags(client, uri)))
    [diag] = [d for d in _sim_diags(client, uri) if d.code == "NKI610"]
    assert diag.range.start.line == 6  # 0-based: line 7, inside the helper
    assert [r.location.range.start.line for r in diag.related_information or []] == [13, 6]


async def test_a_result_is_dropped_when_the_text_changes(client: LanguageClient, tmp_path: Path) -> None:
    """A simulation's diagnostics belong to the text it ran on: an edit (or the client reloading a file changed
    on disk, e.g. by git checkout, which arrives as the same didChange) drops them, and the lens says so."""
    await _start(client, tmp_path, trustedWorkspace=True, simulateOnSave=False)
    path = tmp_path / "broken.py"
    saved = (DATA / "broken_kernel.py").read_text()
    uri = _save(client, path, saved)
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="nki-studio.simulate", arguments=[uri, "broken"])
    )
    assert answer["status"] == "error"
    # the text it ran on, as the editor's panel checks it to mark the result stale
    digest = hashlib.sha256(saved.encode()).hexdigest()
    assert answer["textSha256"] == digest
    assert [r.textSha256 for r in await _result(client)] == [digest]
    await _until(lambda: any(d.code == "NKI610" for d in _sim_diags(client, uri)))
    checked_out = saved.replace("return t * factor[0]", "return t * factor")  # the fixed version
    path.write_text(checked_out)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=checked_out)],
        )
    )
    await _until(lambda: _sim_diags(client, uri) == [])
    [lens] = (
        await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        or []
    )
    assert lens.command is not None and "(last: error, of an earlier text)" in lens.command.title
    # back to the text it ran on: its result applies again
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=saved)],
        )
    )
    await _until(lambda: any(d.code == "NKI610" for d in _sim_diags(client, uri)))


async def test_half_typed_text_gives_no_spec_problem_and_keeps_the_lens(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A spec value being typed, or a code line that leaves the file unparsable, makes no NKI601 and the
    "Simulate" lens stays; the unfinished value is reported on save."""
    await _start(client, tmp_path)  # untrusted: spec checks and lenses run no user code
    text = (DATA / "broken_kernel.py").read_text()
    uri = _save(client, tmp_path / "broken.py", text)

    async def lens_titles() -> list[str]:
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return [lens.command.title for lens in lenses or [] if lens.command is not None]

    assert await lens_titles() == ["▶ Simulate broken"]
    half_spec = text.replace("a=float32[128,64]", "a=float32[128,")
    half_code = text.replace("    return out", "    return out +")
    for version, edited in enumerate((half_spec, half_code), start=2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        await asyncio.sleep(1.0)  # the spec job (debounce 0) has run
        assert _sim_diags(client, uri) == [], edited
        assert await lens_titles() == ["▶ Simulate broken"], edited
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=4),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=half_spec)],
        )
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await _until(lambda: [d.code for d in _sim_diags(client, uri)] == ["NKI601"])


async def test_infinite_loop_times_out_while_the_server_answers(
    client: LanguageClient, tmp_path: Path
) -> None:
    await _start(client, tmp_path, trustedWorkspace=True, simulationTimeout=8)
    path = tmp_path / "loop.py"
    uri = _save(client, path, (DATA / "loop_kernel.py").read_text())
    await asyncio.sleep(1.0)  # the worker is now spinning in the kernel
    latencies = []
    for _ in range(3):
        t = time.perf_counter()
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=9, character=6),
            )
        )
        await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(
                    start=types.Position(line=8, character=0), end=types.Position(line=8, character=0)
                ),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        latencies.append(time.perf_counter() - t)
    assert client.results == []  # type: ignore[attr-defined]  # answered while the kernel still ran
    print(f"hover+code action while simulating: max {max(latencies) * 1000:.0f} ms")
    [note] = await _result(client)
    assert note.status == "timeout"
    await _until(lambda: any(d.code == "NKI611" for d in _sim_diags(client, uri)))


async def test_rapid_saves_publish_only_the_last_run(client: LanguageClient, tmp_path: Path) -> None:
    await _start(client, tmp_path, trustedWorkspace=True)
    text = (DATA / "add_kernel.py").read_text()
    path = tmp_path / "add.py"
    for version, seed in enumerate((11, 12, 13), start=1):
        _save(client, path, text.replace("seed=1", f"seed={seed}"), version)
        await asyncio.sleep(0.05)
    [note] = await _result(client)
    await asyncio.sleep(3)  # a superseded run would have finished by now
    assert len(client.results) == 1  # type: ignore[attr-defined]
    assert note.spec.seed == 13


async def test_untrusted_is_refused_then_the_command_runs(client: LanguageClient, tmp_path: Path) -> None:
    await _start(client, tmp_path, trustedWorkspace=False)
    uri = _save(client, tmp_path / "add.py", (DATA / "add_kernel.py").read_text())
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="nki-studio.simulate", arguments=[uri, "add"])
    )
    assert answer["status"] == "refused" and "untrusted" in answer["message"]
    await asyncio.sleep(1.5)
    assert client.results == []  # type: ignore[attr-defined]  # on-save did nothing either
    assert any("untrusted" in m.message for m in client.messages)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"nki-studio": {"trustedWorkspace": True, "simulateOnSave": False}}
        )
    )
    deadline = time.monotonic() + 20
    while True:  # the settings notification may still be in flight
        answer = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="nki-studio.simulate", arguments=[uri, "add"])
        )
        if answer["status"] != "refused" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert answer["status"] == "passed", answer


def _without_spec() -> str:
    """The add kernel with its spec comment taken out."""
    spec = "# nki-studio: simulate a=bfloat16[128,512] b=bfloat16[128,512] reference=ref_add seed=1\n"
    return (DATA / "add_kernel.py").read_text().replace(spec, "")


async def _spec_action(client: LanguageClient, uri: str, line: int) -> types.CodeAction:
    """The one "Add simulate spec" action offered on 0-based ``line``."""
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    [action] = [a for a in actions or [] if isinstance(a, types.CodeAction) and "simulate spec" in a.title]
    return action


async def test_add_simulate_spec_action(client: LanguageClient, tmp_path: Path) -> None:
    await _start(client, tmp_path)
    text = _without_spec().replace(
        "    out = nl.ndarray",
        "    assert a.shape == (128, 512) and b.shape == (128, 512)\n    out = nl.ndarray",
    )
    uri = _save(client, tmp_path / "add.py", text)
    line = text.splitlines().index("@nki.jit")
    action = await _spec_action(client, uri, line)
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "# nki-studio: simulate a=float32[128,512] b=float32[128,512]\n"
    assert edit.range.start.line == line
    # without the asserts nothing pins the shapes: the action still comes, with example shapes to edit
    bare = text.replace("    assert a.shape == (128, 512) and b.shape == (128, 512)\n", "")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=bare)],
        )
    )
    action = await _spec_action(client, uri, line)
    assert "example shapes" in action.title
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "# nki-studio: simulate a=float32[128,512] b=float32[128,512]\n"


async def test_progress_cancel_kills_the_worker_and_its_children(
    client: LanguageClient, tmp_path: Path
) -> None:
    await _start(client, tmp_path, trustedWorkspace=True)
    pids = tmp_path / "pids"
    kernel = (
        (DATA / "spawn_kernel.py")
        .read_text()
        .replace('os.environ["NKI_TEST_CHILD_PID_FILE"]', repr(str(pids)))
        .replace("fh.write(str(child.pid))", "fh.write(f'{os.getpid()} {child.pid}')")
    )
    _save(client, tmp_path / "spawn.py", kernel)
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text()):
        assert time.monotonic() < deadline, "the kernel never started"
        await asyncio.sleep(0.05)
    worker, child = (int(p) for p in pids.read_text().split())
    [token] = [t for t, reports in client.progress_reports.items() if reports]
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    while _alive(worker) or _alive(child):
        assert time.monotonic() < deadline + 10, "worker or its child survived the cancel"
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    assert client.results == []  # type: ignore[attr-defined]  # a cancelled run publishes nothing
    assert type(client.progress_reports[token][-1]).__name__ == "WorkDoneProgressEnd"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


async def test_spec_problems_follow_edits_next_to_lint_diagnostics(
    client: LanguageClient, tmp_path: Path
) -> None:
    """NKI601 is recomputed after each didChange (in a job, off the event loop) and published with lint's
    diagnostics through the server's per-feature union: neither feature's publish erases the other's."""
    await _start(client, tmp_path)  # untrusted: spec checks run no user code
    text = (
        (DATA / "add_kernel.py")
        .read_text()
        .replace(
            "    ta = nl.load(a)",
            "    big = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)\n    ta = nl.load(a)",
        )
    )
    spec = "# nki-studio: simulate a=bfloat16[128,512] b=bfloat16[128,512] reference=ref_add seed=1"
    path = tmp_path / "add.py"
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )

    def codes() -> set[Any]:
        return {d.code for d in client.diagnostics.get(uri, [])}

    await _until(lambda: "NKI301" in codes())
    assert "NKI601" not in codes()
    for version, (edited, present) in enumerate(
        ((text.replace(spec, spec + " c=float32[4]"), True), (text, False)), start=2
    ):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        await _until(lambda present=present: ("NKI601" in codes()) == present and "NKI301" in codes())
    assert (
        _sim_diags(client, uri) == []
    )  # the fixed spec cleared NKI601; lint's NKI301 stayed (checked above)


async def test_a_kernel_with_no_version_named_simulates_with_the_inferred_version(
    client: LanguageClient, tmp_path: Path
) -> None:
    await _start(client, tmp_path, trustedWorkspace=True)  # its pyproject table names no version
    _save(client, tmp_path / "triple.py", (DATA / "trip_count_06.py").read_text())
    [result] = await _result(client)
    assert result.status == "passed", result.message
    assert any("NKI version 0.6 inferred from nl.dynamic_range" in w for w in result.warnings)


async def test_the_command_simulates_unsaved_text_with_the_editors_lines(
    client: LanguageClient, tmp_path: Path
) -> None:
    await _start(client, tmp_path, trustedWorkspace=True, simulateOnSave=False)
    path = tmp_path / "broken.py"
    saved = (DATA / "broken_kernel.py").read_text()
    uri = _save(client, path, saved)
    edited = "# three lines\n# typed in the editor\n# and not saved\n" + saved  # the helper's line 7 → 10
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="nki-studio.simulate", arguments=[uri, "broken"])
    )
    assert answer["status"] == "error", answer
    assert (answer["error"]["file"], answer["error"]["line"]) == (str(path), 10)
    assert answer["path"] == str(path) and "nki-studio-unsaved-" not in str(answer)
    assert not any("saved file" in w for w in answer.get("warnings", []))
    await _until(lambda: any(d.code == "NKI610" for d in _sim_diags(client, uri)))
    [diag] = [d for d in _sim_diags(client, uri) if d.code == "NKI610"]
    assert diag.range.start.line == 9  # 0-based: the helper's line in the edited text
    assert path.read_text() == saved  # nothing was written over the user's file


async def test_first_run_commands_guess_write_and_add_a_reference(
    client: LanguageClient, tmp_path: Path
) -> None:
    """specGuesses, writeSpec and referenceTemplate on the open document's text (untrusted: nothing runs)."""
    await _start(client, tmp_path)
    text = _without_spec()
    uri = _save(client, tmp_path / "add.py", text)

    async def run(command: str, *args: Any) -> Any:
        return await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(args))
        )

    guesses = await run("nki-studio.specGuesses", uri, "add")
    assert guesses["needed"] and [(p["name"], p["source"]) for p in guesses["parameters"]] == [
        ("a", "example"),
        ("b", "example"),
    ]
    written = await run("nki-studio.writeSpec", uri, "add", {"a": "bf16[128,64]", "b": "bf16[128,64]"})
    decorator = text.splitlines().index("@nki.jit")
    assert written["edit"] == {
        "line": decorator,
        "replace": False,
        "text": "# nki-studio: simulate a=bfloat16[128,64] b=bfloat16[128,64]\n",
    }
    template = await run("nki-studio.referenceTemplate", uri, "add")
    assert (
        template["function"] == "ref_add" and "def ref_add" not in template["edit"]["text"]
    )  # already there
    assert template["edit"]["text"].endswith("reference=ref_add\n")


async def test_simulate_kernel_right_after_a_save_is_not_cancelled_by_simulate_on_save(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Simulate Kernel saves a dirty document, then runs: the save's own run of the same text does not
    supersede (cancel) the command's run."""
    await _start(client, tmp_path, trustedWorkspace=True)
    uri = _save(client, tmp_path / "add.py", (DATA / "add_kernel.py").read_text())
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="nki-studio.simulate", arguments=[uri, "add"])
    )
    assert answer["status"] == "passed", answer
    await asyncio.sleep(2)
    assert len(client.results) == 1  # type: ignore[attr-defined]  # one run of this text, not two
