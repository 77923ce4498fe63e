"""JSON Schema and TypeScript types of the simulation result, generated from ``nki_studio.protocol.simulation``.

* ``server/protocol/simulation.schema.json``: JSON Schema (draft 2020-12) with one ``$defs`` entry per TypedDict and
  named alias; the root accepts a result or a notice (what ``nki/simulationResult`` and the command send).
* ``extension/src/simulationResult.generated.ts``: the same types for the extension, rendered from that schema
  (Prettier-clean as written).

Run ``python -m nki_studio.protocol.schema`` from the repository root to rewrite both; a test fails when a
file differs from what this module renders. Only the constructs ``result`` uses are supported.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import textwrap
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from nki_studio.protocol import simulation as result
from nki_studio.protocol.analysis import DetailValue

SCHEMA_FILE = os.path.join("server", "protocol", "simulation.schema.json")
TS_FILE = os.path.join("extension", "src", "simulationResult.generated.ts")
ROOTS: tuple[type, ...] = (result.SimulationResult, result.SimulationNotice)
ALIASES: dict[str, object] = {
    "Status": result.Status,
    "MetricValue": result.MetricValue,
    "Peak": result.Peak,
    "DetailValue": DetailValue,
}
_SCALARS: dict[object, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}
_WIDTH = 120  # Prettier's printWidth (.prettierrc)


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _doc(obj: object) -> str:
    return inspect.cleandoc(obj.__doc__ or "").replace("``", "`")


class _Converter:
    """Python type -> JSON Schema, collecting every TypedDict and alias under ``defs``."""

    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def convert(self, tp: Any) -> dict[str, Any]:
        for name, alias in ALIASES.items():
            if tp == alias:
                if name not in self.defs:
                    self.defs[name] = {}  # placeholder: keeps the order of first use
                    self.defs[name] = self._plain(alias)
                return _ref(name)
        return self._plain(tp)

    def _plain(self, tp: Any) -> dict[str, Any]:
        origin, args = get_origin(tp), get_args(tp)
        if origin is Annotated:
            return {**self.convert(args[0]), "description": str(args[1])}
        if is_typeddict(tp):
            if tp.__name__ not in self.defs:
                self.defs[tp.__name__] = {}
                self.defs[tp.__name__] = self._object(tp)
            return _ref(tp.__name__)
        if tp in _SCALARS:
            return dict(_SCALARS[tp])
        if origin is Literal:
            return {"enum": list(args)}
        if origin is list:
            return {"type": "array", "items": self.convert(args[0])}
        if origin is dict:
            return {"type": "object", "additionalProperties": self.convert(args[1])}
        if origin in (Union, types.UnionType):
            return {"anyOf": [self.convert(a) for a in args]}
        raise TypeError(f"no JSON Schema for {tp!r}")

    def _object(self, td: Any) -> dict[str, Any]:
        hints = get_type_hints(td, include_extras=True)
        out: dict[str, Any] = {"type": "object"}
        if td.__doc__:
            out["description"] = _doc(td)
        out["properties"] = {key: self.convert(tp) for key, tp in hints.items()}
        out["required"] = [key for key in hints if key in td.__required_keys__]
        out["additionalProperties"] = False
        return out


def schema() -> dict[str, Any]:
    """The JSON Schema of everything the server sends as a simulation result."""
    converter = _Converter()
    roots = [converter.convert(r) for r in ROOTS]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "nki-studio simulation result",
        "description": "A simulation result (simulate --json, nki/simulationResult) or a notice that no worker "
        "produced (refused, cancelled, could not start). Generated from nki_studio.protocol.simulation.",
        "anyOf": roots,
        "$defs": converter.defs,
    }


def render_schema() -> str:
    """``simulation.schema.json`` as written."""
    return json.dumps(schema(), indent=2) + "\n"


# ---- TypeScript ------------------------------------------------------------------------------------------------
def _ts_type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    if "enum" in node:
        return " | ".join(json.dumps(v).replace('"', "'") for v in node["enum"])
    if "anyOf" in node:  # integer and number are both number: once
        return " | ".join(dict.fromkeys(_ts_type(n) for n in node["anyOf"]))
    kind = node["type"]
    if kind == "array":
        item = _ts_type(node["items"])
        return f"({item})[]" if " | " in item else f"{item}[]"
    if kind == "object":
        return f"Record<string, {_ts_type(node['additionalProperties'])}>"
    return "number" if kind == "integer" else str(kind)  # string, number, boolean, null


def _comment(text: str, indent: str) -> list[str]:
    if not text:
        return []
    one = f"{indent}/** {text} */"
    if len(one) <= _WIDTH and "\n" not in text:
        return [one]
    lines = [f"{indent}/**"]
    for paragraph in text.split("\n"):
        wrapped = textwrap.wrap(paragraph, _WIDTH - len(indent) - 3) or [""]
        lines += [f"{indent} * {w}".rstrip() for w in wrapped]
    return [*lines, f"{indent} */"]


def _ts_alias(name: str, node: dict[str, Any]) -> list[str]:
    body = _ts_type(node)
    line = f"export type {name} = {body};"
    if len(line) <= _WIDTH:
        return [line]
    if len(f"  {body};") <= _WIDTH:  # Prettier's layout: the union on the next line while it fits there
        return [f"export type {name} =", f"  {body};"]
    lines = [
        f"export type {name} =",
        *(f"  | {part}" for part in body.split(" | ")),
    ]  # else one member a line
    return [*lines[:-1], lines[-1] + ";"]


def _ts_values(name: str, values: list[Any]) -> list[str]:
    items = [json.dumps(v).replace('"', "'") for v in values]
    head = f"export const {name.upper()}_VALUES: readonly {name}[] = ["
    line = f"{head}{', '.join(items)}];"
    if len(line) <= _WIDTH:
        return [line]
    return [head, *(f"  {item}," for item in items), "];"]  # Prettier's layout


def render_ts() -> str:
    """``simulationResult.generated.ts``, rendered from the JSON Schema."""
    doc = schema()
    out = [
        "// Generated by `python -m nki_studio.protocol.schema` from server/protocol/simulation.py",
        "// (via server/protocol/simulation.schema.json). Do not edit: change the Python types and regenerate.",
    ]
    for name, node in doc["$defs"].items():
        out.append("")
        if node.get("type") != "object" or "properties" not in node:
            out += _comment(node.get("description", ""), "")
            out += _ts_alias(name, node)
            if "enum" in node:  # the values at run time too, for checking what arrives
                out += _ts_values(name, node["enum"])
            continue
        out += _comment(node.get("description", ""), "")
        out.append(f"export interface {name} {{")
        for key, prop in node["properties"].items():
            out += _comment(prop.get("description", ""), "  ")
            optional = "" if key in node["required"] else "?"
            out.append(f"  {key}{optional}: {_ts_type(prop)};")
        out.append("}")
    out += ["", *_comment(doc["description"], "")]
    out.append(f"export type AnyResult = {' | '.join(_ts_type(r) for r in doc['anyOf'])};")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the schema and the TypeScript types under the repository root (default: the current directory)."""
    root = (argv or sys.argv[1:] or ["."])[0]
    for path, text in ((SCHEMA_FILE, render_schema()), (TS_FILE, render_ts())):
        with open(os.path.join(root, path), "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
