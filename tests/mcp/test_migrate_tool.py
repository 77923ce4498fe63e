"""The ``migrate`` tool through the real ``mcp`` client: the rewrite and its manual steps, refusal when untrusted,
an unparsable file as a tool error; files untouched unless proven and asked."""

from __future__ import annotations

from pathlib import Path

from mcp_harness import error_of, mcp_session, structured

LEGACY = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[128,64]
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    x = nl.load(a[i_p, i_f])
    nl.store(out[i_p, i_f], value=x * 2)
    return out
"""


async def test_migrate_lists_manual_steps_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    text = LEGACY.replace("nl.load(a[i_p, i_f])", "nl.load(a[i_p, i_f], mask=(i_f < i_p))")
    path.write_text(text, encoding="utf-8")
    async with mcp_session("--root", str(tmp_path)) as s:
        result = structured(await s.call_tool("migrate", {"file": "k.py", "write": True}))
    assert result["status"] == "manual_steps" and result["path"] == "k.py" and not result["written"]
    assert {(m["line"], m["construct"]) for m in result["manual"]} == {
        (10, "mask="),
        (10, "index tile `i_p`"),
        (10, "index tile `i_f`"),
    }
    assert path.read_text(encoding="utf-8") == text


async def test_migrate_proves_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(LEGACY, encoding="utf-8")
    async with mcp_session("--root", str(tmp_path)) as s:
        result = structured(await s.call_tool("migrate", {"file": "k.py", "write": True}))
    assert result["status"] == "proven", result["message"]
    assert result["written"] and "nl.store(out[0:128, 0:64], value=nl.multiply(x, 2))" in path.read_text()


async def test_untrusted_server_refuses_and_a_broken_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "broken.py").write_text("import neuronxcc.nki as nki\ndef k(:\n", encoding="utf-8")
    async with mcp_session("--root", str(tmp_path), "--untrusted") as s:
        refused = error_of(await s.call_tool("migrate", {"file": "k.py", "write": True}))
        broken = error_of(await s.call_tool("migrate", {"file": "broken.py"}))
    assert refused["kind"] == "refused" and "untrusted" in refused["message"]
    assert broken["kind"] == "syntax_error" and "line 2" in broken["message"]
    assert (tmp_path / "k.py").read_text(encoding="utf-8") == LEGACY
