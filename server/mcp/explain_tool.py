"""The ``explain`` tool: a rule code → its rule page; an NKI API name → its stub documentation."""

from __future__ import annotations

from typing import Any

from nki_studio.mcp import docs
from nki_studio.mcp.errors import ToolFailure
from nki_studio.model.targets import LEGACY, parse_nki_version


def explain(args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Explain ``args["name"]``; returns the structured result and the Markdown (the text the agent reads)."""
    name = str(args.get("name", "")).strip()
    if not name:
        raise ToolFailure(
            "invalid_arguments", "name: give a rule code (NKI101) or an NKI API name (nisa.nc_matmul)"
        )
    if docs.is_rule_code(name):
        page = docs.rule_page(name)
        if page is None:
            raise ToolFailure(
                "unknown_name",
                f"{name.upper()} is not a diagnostic code of this release (read nki-studio://rules for the list)",
            )
        code = name.upper()
        return {"kind": "rule", "name": code, "uri": f"nki-studio://rules/{code}", "markdown": page}, page
    try:  # the API of that version: the legacy one has its own stubs (a neuronxcc.nki name implies it)
        legacy = parse_nki_version(str(args["nki_version"])) <= LEGACY if args.get("nki_version") else False
    except ValueError as exc:
        raise ToolFailure("invalid_arguments", f"nki_version: {exc}") from None
    entries = docs.find_api(name, legacy=legacy)
    if not entries:
        raise ToolFailure(
            "unknown_name",
            f"{name}: no NKI API of that name in the stubs (modules: {', '.join(docs.MODULES)})",
            suggestions=docs.close_names(name),
        )
    text = "\n".join(e.markdown() for e in entries)
    return {
        "kind": "api",
        "name": docs.canonical(name, legacy=legacy or name.startswith("neuronxcc.")),
        "matches": [{"name": e.qualname, "signature": e.signature, "doc": e.doc} for e in entries],
        "markdown": text,
    }, text
