"""The MCP server through the real ``mcp`` client SDK: tool list and schemas, every tool on the examples, the
scripted agent loop, and bad input answered with structured errors while the server keeps answering."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profile"))
import fixturegen
from mcp_harness import EXAMPLES, ROOT, error_of, mcp_session, structured

TOOLS = {
    "lint",
    "simulate",
    "estimate",
    "analyze_profile",
    "compare",
    "explain",
    "calibrate",
    "tune",
    "migrate",
}
# the tools that change the workspace: the calibration file; tune's cache under .nki-studio/ (never the kernel
# file); migrate writes the file when asked (write=true)
WRITES = {"calibrate", "tune", "migrate"}


async def test_tool_list_schemas_resources_and_prompt() -> None:
    async with mcp_session("--root", str(EXAMPLES)) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == TOOLS  # no profile_remote without a host and the switch
        for t in tools.values():
            Draft202012Validator.check_schema(t.input_schema)
            Draft202012Validator.check_schema(t.output_schema)
            assert t.input_schema["type"] == "object" and t.input_schema["additionalProperties"] is False
            assert t.description and t.annotations.read_only_hint is (t.name not in WRITES)
        for name in ("lint", "simulate", "estimate"):  # a saved file or unsaved source text
            schema = tools[name].input_schema
            assert schema["anyOf"] == [{"required": ["file"]}, {"required": ["source"]}], name
            assert {"file", "source", "path"} <= set(schema["properties"]), name
        assert tools["estimate"].output_schema["properties"]["label"] == {"const": "estimated"}

        uris = {str(r.uri) for r in (await s.list_resources()).resources}
        assert {"nki-studio://rules", "nki-studio://rules/NKI201", "nki-studio://rules/NKI620"} <= uris
        assert {
            f"nki-studio://api/{m}" for m in ("nki", "nki.language", "nki.isa", "nki.collectives")
        } <= uris
        page = (await s.read_resource("nki-studio://rules/NKI201")).contents[0].text
        assert page == (ROOT / "docs" / "rules" / "NKI201.md").read_text(encoding="utf-8")
        isa = (await s.read_resource("nki-studio://api/nki.isa")).contents[0].text
        assert "### `nki.isa.nc_matmul`" in isa and "Engine: Tensor" in isa

        prompt = await s.get_prompt("optimise_kernel", {"file": "k.py"})
        text = prompt.messages[0].content.text
        for step in ("`lint`", "`simulate`", "`estimate`", "`compare`", "ESTIMATED"):
            assert step in text
        assert "profile_remote" not in text


async def test_profile_remote_is_offered_only_when_configured_and_enabled() -> None:
    for args, offered in (
        (["--remote-host", "trn2"], False),
        (["--enable-remote-profiling"], False),
        (["--remote-host", "trn2", "--enable-remote-profiling", "--untrusted"], False),
        (["--remote-host", "trn2", "--enable-remote-profiling"], True),
    ):
        async with mcp_session("--root", str(EXAMPLES), *args) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert ("profile_remote" in names) is offered, args
            if not offered:
                err = error_of(await s.call_tool("profile_remote", {"file": "tensor_add.py"}))
                assert err["kind"] == "invalid_arguments" and "enable-remote-profiling" in err["message"]


async def test_every_tool_on_the_examples(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    fixturegen.main([str(EXAMPLES / "rmsnorm_residual.py"), str(profiles)])
    parquet = next(profiles.glob("*_parquet"))
    async with mcp_session("--root", str(EXAMPLES), "--root", str(tmp_path)) as s:
        lint = structured(await s.call_tool("lint", {"file": "deprecated_loop.py"}))
        nki201 = [f for f in lint["findings"] if f["code"] == "NKI201"]
        assert nki201 and nki201[0]["fix"]["edits"] and lint["path"] == "deprecated_loop.py"
        unsaved = "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(x):\n    for i in nl.affine_range(4):\n        pass\n    return x\n"
        text = structured(await s.call_tool("lint", {"source": unsaved, "path": "new_kernel.py"}))
        assert [(f["code"], f["line"], f["path"]) for f in text["findings"]] == [
            ("NKI201", 7, "new_kernel.py")
        ]

        sim = structured(await s.call_tool("simulate", {"file": "tensor_add.py"}))
        assert sim["passed"] and sim["status"] == "passed" and not sim["failedMetrics"]
        assert sim["outputs"] and sim["peak"]["sbuf"]["peakBytes"] > 0

        est = await s.call_tool("estimate", {"file": "softmax.py"})
        view = structured(est)
        assert view["label"] == "estimated" and "estimated" in est.content[0].text
        assert view["summary"]["latency_ns"] > 0 and view["lines"][0]["file"] == "softmax.py"
        assert view["simulation"]["status"] == "passed" and view["bounds"]["roofline"]["flops"] > 0
        families = {f["name"]: [b["name"] for b in f["bounds"]] for f in view["bounds"]["families"]}
        assert families["memory"][0] == "memory_bound" and families["pipeline"] == ["perfect_pipeline"]
        assert view["bounds"]["bottleneck"]
        kinds = {i["kind"]: i["status"] for i in view["investigations"]}
        assert set(kinds) == {"dma-efficiency", "redundant-dma", "tensor-engine", "transposes"}

        measured = structured(await s.call_tool("analyze_profile", {"profile": str(parquet)}))
        assert measured["label"] == "measured" and measured["problem"] is None
        assert measured["lines"][0]["file"] == "rmsnorm_residual.py" and measured["summary"]["latency_ns"] > 0

        both = structured(
            await s.call_tool(
                "compare", {"a": {"profile": str(parquet)}, "b": {"file": "rmsnorm_residual.py"}}
            )
        )
        assert (both["a"]["label"], both["b"]["label"]) == ("measured", "estimated")
        assert (
            both["totals"]["latency_ns"]["delta"]
            == both["b"]["summary"]["latency_ns"] - both["a"]["summary"]["latency_ns"]
        )
        assert both["lines"] and all(r["delta_ns"] == r["b_ns"] - r["a_ns"] for r in both["lines"])

        rule = structured(await s.call_tool("explain", {"name": "nki201"}))
        assert rule["kind"] == "rule" and rule["markdown"].startswith("<!--") and "NKI201" in rule["markdown"]
        api = structured(await s.call_tool("explain", {"name": "nisa.nc_matmul"}))
        assert [m["name"] for m in api["matches"]] == ["nki.isa.nc_matmul"] and "K <= 128" in api["markdown"]
        unknown = error_of(await s.call_tool("explain", {"name": "nisa.nc_matmal"}))
        assert unknown["kind"] == "unknown_name" and "nki.isa.nc_matmul" in unknown["suggestions"]


async def test_estimate_reads_the_fields_simulate_json_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """One documented ``estimate`` section: the MCP tool's bounds, investigations and totals are that section's
    (what a CI script reads from ``simulate --json``), not a second analysis."""
    import json

    from nki_studio.cli.main import main

    main(["simulate", str(EXAMPLES / "softmax.py"), "--json"])
    section = json.loads(capsys.readouterr().out)["estimate"]
    async with mcp_session("--root", str(EXAMPLES)) as s:
        est = await s.call_tool("estimate", {"file": "softmax.py"})
        view = structured(est)
    assert view["range"] == section["range"] and view["range"]["points"] > 0
    assert view["rangeText"].startswith("≈ ") and "public measurements (trn2, " in view["rangeText"]
    assert f"The estimate's likely range: {view['rangeText']}" in est.content[0].text
    assert view["investigations"] == section["investigations"]
    assert view["bounds"]["families"] == section["bounds"]["families"]
    assert view["bounds"]["bottleneck"] == section["bounds"]["bottleneck"]
    assert view["summary"]["latency_ns"] == section["totalNs"]
    assert view["summary"]["engines"] == section["engineNs"]
    assert view["summary"]["serialization_gap_ns"] == section["serializationGapNs"]
    assert [(ln["line"], ln["busy_ns"]) for ln in view["lines"]] == [
        (ln["line"], ln["busyNs"]) for ln in section["lines"][: len(view["lines"])]
    ]


async def test_scripted_agent_loop(workspace: Path) -> None:
    """Wrong epsilon → simulate fails naming the metric → the fixed kernel passes → estimate → the fused
    variant estimates faster than the plain one."""
    good = (workspace / "rmsnorm_residual.py").read_text(encoding="utf-8")
    assert good.count("operand1=EPS)") == 1  # the kernel's epsilon; the reference keeps the right one
    (workspace / "rmsnorm_residual.py").write_text(
        good.replace("operand1=EPS)", "operand1=0.5)"), encoding="utf-8"
    )
    async with mcp_session("--root", str(workspace)) as s:
        wrong = await s.call_tool("simulate", {"file": "rmsnorm_residual.py"})
        verdict = structured(wrong)
        assert verdict["status"] == "failed" and not verdict["passed"]
        metrics = {m["metric"] for m in verdict["failedMetrics"]}
        assert "allclose" in metrics and all(m["output"] == "out" for m in verdict["failedMetrics"])
        assert "allclose" in wrong.content[0].text

        (workspace / "rmsnorm_residual.py").write_text(good, encoding="utf-8")  # the agent's fix
        assert structured(await s.call_tool("simulate", {"file": "rmsnorm_residual.py"}))["passed"]
        assert structured(await s.call_tool("simulate", {"file": "rmsnorm_residual_fused.py"}))["passed"]

        plain = structured(await s.call_tool("estimate", {"file": "rmsnorm_residual.py"}))
        fused = structured(await s.call_tool("estimate", {"file": "rmsnorm_residual_fused.py"}))
        assert plain["simulation"]["status"] == fused["simulation"]["status"] == "passed"
        assert fused["summary"]["latency_ns"] < plain["summary"]["latency_ns"]
        assert fused["summary"]["instr"] < plain["summary"]["instr"]

        cmp = structured(
            await s.call_tool(
                "compare", {"a": {"file": "rmsnorm_residual.py"}, "b": {"file": "rmsnorm_residual_fused.py"}}
            )
        )
        assert cmp["faster"] == "b" and cmp["speedup"] > 1
        assert cmp["totals"]["latency_ns"] == {
            "a": plain["summary"]["latency_ns"],
            "b": fused["summary"]["latency_ns"],
            "delta": fused["summary"]["latency_ns"] - plain["summary"]["latency_ns"],
            "ratio": fused["summary"]["latency_ns"] / plain["summary"]["latency_ns"],
        }


async def test_bad_input_is_a_structured_error_and_the_server_keeps_answering(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("import nki\n", encoding="utf-8")
    os.symlink(outside, workspace / "link.py")
    (workspace / "corrupt.json").write_bytes(b'{"instructions": [\x00\xff garbage')
    cases = [
        ("simulate", {"file": "missing.py"}, "not_found"),
        ("lint", {"file": str(outside)}, "outside_roots"),
        ("lint", {"file": "../secret.py"}, "outside_roots"),
        ("lint", {"file": "link.py"}, "outside_roots"),
        ("simulate", {"file": "broken.py"}, "syntax_error"),
        ("simulate", {"file": "forever.py", "timeout_s": 3}, "timeout"),
        ("analyze_profile", {"profile": "corrupt.json"}, "unreadable_profile"),
        ("simulate", {"file": "rmsnorm_residual.py", "kernel": "nope"}, "no_kernel"),
        ("simulate", {"file": "rmsnorm_residual.py", "inputs": "a=bfloat16[oops"}, "bad_spec"),
        ("simulate", {}, "invalid_arguments"),
        ("lint", {"file": "rmsnorm_residual.py", "colour": "red"}, "invalid_arguments"),
        ("lint", {"file": "rmsnorm_residual.py", "target": "trn9"}, "invalid_arguments"),
    ]
    async with mcp_session("--root", str(workspace), "--timeout", "30") as s:
        for tool, args, kind in cases:
            err = error_of(await s.call_tool(tool, args))
            assert err["kind"] == kind, (tool, args, err)
            # ... and the next call still works
            ok = structured(await s.call_tool("lint", {"file": "rmsnorm_residual_fused.py"}))
            assert ok["counts"]["error"] == 0
        timeout = error_of(await s.call_tool("simulate", {"file": "forever.py", "timeout_s": 2}))
        assert timeout["result"]["status"] == "timeout" and "2 s" in timeout["message"]
        syntax = error_of(await s.call_tool("simulate", {"file": "broken.py"}))
        assert (syntax["file"], syntax["line"]) == ("broken.py", 6)
        assert structured(await s.call_tool("simulate", {"file": "rmsnorm_residual_fused.py"}))["passed"]


@pytest.mark.parametrize("tool", ["simulate", "estimate"])
async def test_an_untrusted_server_runs_no_kernel(workspace: Path, tool: str) -> None:
    async with mcp_session("--root", str(workspace), "--untrusted") as s:
        err = error_of(await s.call_tool(tool, {"file": "rmsnorm_residual.py"}))
        assert err["kind"] == "refused" and "untrusted" in err["message"]
        assert (
            structured(await s.call_tool("lint", {"file": "rmsnorm_residual.py"}))["path"]
            == "rmsnorm_residual.py"
        )


async def test_streamable_http_on_loopback(workspace: Path) -> None:
    import socket
    import subprocess

    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:  # a free port on loopback
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "nki_studio", "mcp", "--root", str(workspace), "--http", str(port)],
        stderr=subprocess.PIPE,
    )
    try:
        with anyio.fail_after(60):
            while True:  # until it listens
                with socket.socket() as c:
                    if c.connect_ex(("127.0.0.1", port)) == 0:
                        break
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                await anyio.sleep(0.2)
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            assert (
                structured(await s.call_tool("lint", {"file": "rmsnorm_residual_fused.py"}))["counts"][
                    "error"
                ]
                == 0
            )
            assert error_of(await s.call_tool("lint", {"file": "/etc/hostname"}))["kind"] == "outside_roots"
    finally:
        server.terminate()
        server.wait(timeout=20)


async def test_concurrent_calls_are_all_answered(workspace: Path) -> None:
    import anyio

    answers: dict[str, dict] = {}
    async with mcp_session("--root", str(workspace)) as s:

        async def call(key: str, tool: str, args: dict) -> None:
            answers[key] = structured(await s.call_tool(tool, args))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "plain", "simulate", {"file": "rmsnorm_residual.py"})
            tg.start_soon(call, "fused", "simulate", {"file": "rmsnorm_residual_fused.py"})
            tg.start_soon(call, "lint", "lint", {"file": "rmsnorm_residual.py"})
    assert answers["plain"]["passed"] and answers["fused"]["passed"]
    assert answers["plain"]["kernel"] == "rmsnorm_residual_kernel"
    assert answers["fused"]["kernel"] == "rmsnorm_residual_fused_kernel"
    assert answers["lint"]["path"] == "rmsnorm_residual.py"


async def test_simulate_and_estimate_of_unsaved_text(workspace: Path) -> None:
    # The draft exists only as text; its reference lives in a helper module next to where it would be saved.
    (workspace / "sub").mkdir()
    saved = (workspace / "rmsnorm_residual.py").read_text(encoding="utf-8")
    ref = saved[saved.index("def ref_rmsnorm_residual") : saved.index("# nki-studio: simulate")]
    (workspace / "sub" / "rms_ref.py").write_text(
        "import numpy as np\n\nEPS = 1e-6\n\n\n" + ref, encoding="utf-8"
    )
    draft = saved.replace("reference=ref_rmsnorm_residual", "reference=rms_ref:ref_rmsnorm_residual")
    marker = "    n, d = x.shape\n"
    raising = draft.replace(marker, marker + "    raise ValueError('boom in the draft')\n")
    boom_line = raising.splitlines().index("    raise ValueError('boom in the draft')") + 1
    async with mcp_session("--root", str(workspace), "--timeout", "60") as s:
        sim = structured(await s.call_tool("simulate", {"source": draft, "path": "sub/draft.py"}))
        assert sim["passed"] and sim["path"] == os.path.join("sub", "draft.py")

        failed = error_of(await s.call_tool("simulate", {"source": raising, "path": "sub/draft.py"}))
        result = failed["result"]
        assert (result["error"]["file"], result["error"]["line"]) == (
            os.path.join("sub", "draft.py"),
            boom_line,
        )
        assert [(f["path"], f["line"]) for f in result["findings"]][:1] == [
            (os.path.join("sub", "draft.py"), boom_line)
        ]

        est = structured(await s.call_tool("estimate", {"source": draft, "path": "sub/draft.py"}))
        assert est["label"] == "estimated" and est["simulation"]["status"] == "passed"
        assert est["lines"] and {line["file"] for line in est["lines"]} == {os.path.join("sub", "draft.py")}

        # Without a path the text is untitled.py in the first root; the staged copy is named nowhere.
        plain = structured(await s.call_tool("simulate", {"source": saved}))
        assert plain["passed"] and plain["path"] == "untitled.py"
        for answer in (sim, result, est, plain):
            assert "nki-studio-unsaved-" not in json.dumps(answer)

        syntax = error_of(await s.call_tool("simulate", {"source": "def k(:\n", "path": "sub/bad.py"}))
        assert syntax["kind"] == "syntax_error" and syntax["line"] == 1
        outside = error_of(await s.call_tool("estimate", {"source": draft, "path": "../elsewhere/k.py"}))
        assert outside["kind"] == "outside_roots"


async def test_calibrate_writes_the_project_file_and_later_estimates_say_so(workspace: Path) -> None:
    fixturegen.main([str(workspace / "rmsnorm_residual.py"), str(workspace / "profiles")])
    parquet = next((workspace / "profiles").glob("*_parquet"))
    async with mcp_session("--root", str(workspace)) as s:
        got = structured(await s.call_tool("calibrate", {"profiles": [str(parquet)], "target": "trn2"}))
        assert got["file"] == str(workspace / ".nki-studio" / "calibration.json") and got["skipped"] == []
        (used,) = got["used"]
        assert used["kernel"].endswith("rmsnorm_residual.py::rmsnorm_residual_kernel") and used["matched"] > 0
        assert got["table"]["held_out"]["kernels"] == 0  # one kernel: no held-out figure, and it says so
        est = await s.call_tool("estimate", {"file": "rmsnorm_residual.py", "target": "trn2"})
        view = structured(est)
        assert view["calibration"]["status"] == "applied"
        assert "calibrated on 1 of your profiles, held-out error unknown" in view["rangeText"]
        assert "calibrated on 1 of your profiles" in est.content[0].text
        err = error_of(await s.call_tool("calibrate", {"profiles": ["/etc/passwd"]}))
        assert err["kind"] == "outside_roots"
