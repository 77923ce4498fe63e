"""JSON Schema and TypeScript of the wire protocol, generated from the declarations in ``nki_studio.protocol``.

* ``server/protocol/simulation.schema.json``: JSON Schema (draft 2020-12) of a simulation result or notice (what
  ``simulate --json`` prints, ``nki/simulationResult`` and the ``nki-studio.simulate`` command send), one ``$defs``
  entry per TypedDict and named alias.
* ``server/protocol/protocol.schema.json``: every type of the protocol under ``$defs``, what each custom
  notification (``x-notifications``) and command (``x-serverCommands``, ``x-clientCommands``) carries, and what
  each ``--json`` output of the command line (``x-cliOutputs``) prints.
* ``extension/src/protocol.generated.ts``: the same types for the extension, rendered from that schema, plus
  constants for every method and command name (Prettier-clean as written).

Run ``python -m nki_studio.protocol.schema`` from the repository root to rewrite them; a test fails when a
file differs from what this module renders. Only the constructs the declarations use are supported.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import textwrap
import types
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from nki_studio.protocol import simulation as result
from nki_studio.protocol.analysis import DetailValue
from nki_studio.protocol.commands import CLIENT_COMMANDS, SERVER_COMMANDS, Command
from nki_studio.protocol.heatmap import HeatLayer, HeatMetric, HeatSource
from nki_studio.protocol.notifications import NOTIFICATIONS
from nki_studio.protocol.outputs import OUTPUTS

SCHEMA_FILE = os.path.join("server", "protocol", "simulation.schema.json")
PROTOCOL_SCHEMA_FILE = os.path.join("server", "protocol", "protocol.schema.json")
TS_FILE = os.path.join("extension", "src", "protocol.generated.ts")
ROOTS: tuple[type, ...] = (result.SimulationResult, result.SimulationNotice)
ALIASES: dict[str, object] = {
    "Status": result.Status,
    "MetricValue": result.MetricValue,
    "Peak": result.Peak,
    "DetailValue": DetailValue,
    "AnyResult": result.AnyResult,
    "HeatSource": HeatSource,
    "HeatMetric": HeatMetric,
    "HeatLayer": HeatLayer,
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
        if tp in _SCALARS or tp is None:
            return dict(_SCALARS[type(None) if tp is None else tp])
        if origin is Literal:
            return {"enum": list(args)}
        if origin is list:
            return {"type": "array", "items": self.convert(args[0])}
        if origin is tuple:  # positional arguments; tuple[()] is the empty list
            items = [self.convert(a) for a in args if a != ()]
            return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
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


def _command(converter: _Converter, command: Command) -> dict[str, Any]:
    return {
        "description": command.doc,
        "arguments": converter.convert(command.arguments),
        "result": converter.convert(command.result),
    }


def protocol_schema(*, outputs: bool = True) -> dict[str, Any]:
    """The JSON Schema of every type the server and the extension exchange, what each method carries and
    (``outputs``) what the command line prints with ``--json``."""
    converter = _Converter()
    notifications = {
        n.method: {"description": n.doc, "params": converter.convert(n.params)} for n in NOTIFICATIONS
    }
    server = {c.id: _command(converter, c) for c in SERVER_COMMANDS}
    client = {c.id: _command(converter, c) for c in CLIENT_COMMANDS}
    cli = {o.command: converter.convert(o.type) for o in OUTPUTS} if outputs else {}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "nki-studio protocol",
        "description": "The custom notifications the language server sends, the commands it answers "
        "(workspace/executeCommand), the VS Code commands the extension registers, with the types they "
        "carry, and what the command line prints with --json. Generated from nki_studio.protocol.",
        "x-notifications": notifications,
        "x-serverCommands": server,
        "x-clientCommands": client,
        **({"x-cliOutputs": cli} if outputs else {}),
        "$defs": converter.defs,
    }


def render_protocol_schema() -> str:
    """``protocol.schema.json`` as written."""
    return json.dumps(protocol_schema(), indent=2) + "\n"


# ---- TypeScript ------------------------------------------------------------------------------------------------
def _ts_type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    if "enum" in node:
        return " | ".join(_quote(v) for v in node["enum"])
    if "anyOf" in node:  # integer and number are both number: once
        return " | ".join(dict.fromkeys(_ts_type(n) for n in node["anyOf"]))
    kind = node["type"]
    if kind == "array" and "prefixItems" in node:
        return f"[{', '.join(_ts_type(n) for n in node['prefixItems'])}]"
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
    items = [_quote(v) for v in values]
    head = f"export const {name.upper()}_VALUES: readonly {name}[] = ["
    line = f"{head}{', '.join(items)}];"
    if len(line) <= _WIDTH:
        return [line]
    return [head, *(f"  {item}," for item in items), "];"]  # Prettier's layout


def _ts_names(const: str, doc: str, names: Sequence[tuple[str, str, str]]) -> list[str]:
    """``export const CONST = { key: 'name', ... } as const;`` with each entry's doc comment."""
    out = [*_comment(doc, ""), f"export const {const} = {{"]
    for key, name, text in names:
        out += _comment(text, "  ")
        out.append(f"  {key}: {_quote(name)},")
    return [*out, "} as const;"]


def _quote(value: object) -> str:
    """A JSON value as TypeScript writes it (single quotes, as Prettier's singleQuote)."""
    return json.dumps(value).replace('"', "'")


def _ts_map(name: str, doc: str, entries: Sequence[tuple[str, str]]) -> list[str]:
    """``export interface Name { 'method': Type; ... }`` (a type per method or command name)."""
    out = [*_comment(doc, ""), f"export interface {name} {{"]
    for key, tp in entries:
        line = f"  {_quote(key)}: {tp};"
        if len(line) <= _WIDTH:
            out.append(line)
        else:  # Prettier's layout of a long union
            out += [f"  {_quote(key)}:", *(f"    | {part}" for part in tp.split(" | "))]
            out[-1] += ";"
    return [*out, "}"]


def _ts_commands(prefix: str, doc: str, commands: dict[str, Any], declared: Sequence[Command]) -> list[str]:
    """The id constants of ``declared``, their union type, their argument lists and (server commands, the
    answers the extension reads) their results."""
    const = f"{prefix.upper()}_COMMANDS"
    title = prefix.capitalize()
    out = ["", *_ts_names(const, doc, [(c.key, c.id, c.doc) for c in declared])]
    out += ["", f"export type {title}Command = (typeof {const})[keyof typeof {const}];"]
    args = [(c.id, _ts_type(commands[c.id]["arguments"])) for c in declared]
    out += ["", *_ts_map(f"{title}CommandArguments", "The argument lists each command accepts.", args)]
    if any(c.result is not None for c in declared):
        results = [(c.id, _ts_type(commands[c.id]["result"])) for c in declared]
        out += ["", *_ts_map(f"{title}CommandResults", "What each command answers.", results)]
    return out


def _ts_types(defs: dict[str, Any]) -> list[str]:
    """One interface per TypedDict and one type per named alias (with its values, for an enum)."""
    out: list[str] = []
    for name, node in defs.items():
        out += ["", *_comment(node.get("description", ""), "")]
        if node.get("type") != "object" or "properties" not in node:
            out += _ts_alias(name, node)
            if "enum" in node:  # the values at run time too, for checking what arrives
                out += _ts_values(name, node["enum"])
            continue
        out.append(f"export interface {name} {{")
        for key, prop in node["properties"].items():
            out += _comment(prop.get("description", ""), "  ")
            optional = "" if key in node["required"] else "?"
            out.append(f"  {key}{optional}: {_ts_type(prop)};")
        out.append("}")
    return out


def render_ts() -> str:
    """``protocol.generated.ts``, rendered from the protocol's JSON Schema (what the extension exchanges with the
    server: the command line's outputs are left out)."""
    doc = protocol_schema(outputs=False)
    out = [
        "// Generated by `python -m nki_studio.protocol.schema` from server/protocol/ (via",
        "// server/protocol/protocol.schema.json). Do not edit: change the Python declarations and regenerate.",
        *_ts_types(doc["$defs"]),
        "",
        *_ts_names(
            "NOTIFICATIONS",
            "Custom notifications the server sends.",
            [(n.key, n.method, n.doc) for n in NOTIFICATIONS],
        ),
        "",
        "export type NotificationMethod = (typeof NOTIFICATIONS)[keyof typeof NOTIFICATIONS];",
        "",
        *_ts_map(
            "NotificationParams",
            "What each notification carries.",
            [(n.method, _ts_type(doc["x-notifications"][n.method]["params"])) for n in NOTIFICATIONS],
        ),
    ]
    out += _ts_commands(
        "server",
        "Commands the language server answers (workspace/executeCommand).",
        doc["x-serverCommands"],
        SERVER_COMMANDS,
    )
    out += _ts_commands(
        "client", "VS Code commands the extension registers.", doc["x-clientCommands"], CLIENT_COMMANDS
    )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the schemas and the TypeScript types under the repository root (default: the current directory)."""
    root = (argv or sys.argv[1:] or ["."])[0]
    for path, text in generated().items():
        with open(os.path.join(root, path), "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


def generated() -> dict[str, str]:
    """Every file this module writes (path relative to the repository root -> text)."""
    return {
        SCHEMA_FILE: render_schema(),
        PROTOCOL_SCHEMA_FILE: render_protocol_schema(),
        TS_FILE: render_ts(),
    }


if __name__ == "__main__":
    sys.exit(main())
