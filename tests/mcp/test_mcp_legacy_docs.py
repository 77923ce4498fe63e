"""The MCP API docs at the legacy version: ``explain`` of a ``neuronxcc.nki`` name (or with ``nki_version``
legacy) documents the legacy API, labelled, with what ``nki-studio migrate`` does; the legacy modules are
resources; current names keep the current docs."""

from __future__ import annotations

from mcp_harness import mcp_session, structured

LABEL = "NKI legacy (neuronxcc.nki, Neuron <= 2.26)"


async def test_explain_and_resources_follow_the_version() -> None:
    async with mcp_session() as s:
        legacy = structured(await s.call_tool("explain", {"name": "nisa.nc_matmul", "nki_version": "legacy"}))
        assert [m["name"] for m in legacy["matches"]] == ["neuronxcc.nki.isa.nc_matmul"]
        assert legacy["matches"][0]["signature"].startswith("def nc_matmul(stationary")
        assert LABEL in legacy["markdown"] and "nisa.nc_matmul(dst=t, ...)" in legacy["markdown"]

        qualified = structured(await s.call_tool("explain", {"name": "neuronxcc.nki.language.par_dim"}))
        assert (
            qualified["name"] == "neuronxcc.nki.language.par_dim"
            and "fold the block" in qualified["markdown"]
        )

        # a name the legacy API shares with the current one: the current docs
        shared = structured(
            await s.call_tool("explain", {"name": "nl.affine_range", "nki_version": "legacy"})
        )
        assert [m["name"] for m in shared["matches"]] == ["nki.language.affine_range"]

        current = structured(await s.call_tool("explain", {"name": "nisa.nc_matmul"}))
        assert [m["name"] for m in current["matches"]] == ["nki.isa.nc_matmul"] and LABEL not in current[
            "markdown"
        ]

        uris = {str(r.uri) for r in (await s.list_resources()).resources}
        assert {"nki-studio://api/neuronxcc.nki", "nki-studio://api/neuronxcc.nki.isa"} <= uris
        language = (await s.read_resource("nki-studio://api/neuronxcc.nki.language")).contents[0].text
        assert "### `neuronxcc.nki.language.arange`" in language and LABEL in language
