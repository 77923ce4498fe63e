"""The simulation result schema: the generated files are current, and ``simulate --json`` follows the schema.

The check is a minimal JSON Schema validator for the constructs ``result_schema`` emits (``$ref``, ``anyOf``,
``enum``, ``type``, ``properties``/``required``/``additionalProperties``, ``items``): no jsonschema dependency.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from nki_studio.cli.main import main
from nki_studio.protocol import schema as result_schema

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
SCHEMA = result_schema.schema()


def _whole(v: Any) -> bool:
    return isinstance(v, float) and v.is_integer()  # JSON Schema: 1.0 is an integer


_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or _whole(v),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def violations(value: Any, node: dict[str, Any], where: str = "$") -> list[str]:
    """Where ``value`` breaks ``node`` (a schema node; ``$ref`` resolves in ``SCHEMA``)."""
    if "$ref" in node:
        return violations(value, SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]], where)
    if "anyOf" in node:
        if all(violations(value, option, where) for option in node["anyOf"]):
            return [f"{where}: {value!r:.80} matches none of {node['anyOf']}"]
        return []
    if "enum" in node:
        return [] if value in node["enum"] else [f"{where}: {value!r} not in {node['enum']}"]
    if not _TYPES[node["type"]](value):
        return [f"{where}: {value!r:.80} is not {node['type']}"]
    problems: list[str] = []
    if node["type"] == "array":
        for i, item in enumerate(value):
            problems += violations(item, node["items"], f"{where}[{i}]")
    elif node["type"] == "object":
        properties = node.get("properties", {})
        problems += [f"{where}: missing {key!r}" for key in node.get("required", ()) if key not in value]
        for key, item in value.items():
            extra = node.get("additionalProperties", True)
            if key in properties:
                problems += violations(item, properties[key], f"{where}.{key}")
            elif extra is False:
                problems.append(f"{where}: undeclared key {key!r}")
            elif isinstance(extra, dict):
                problems += violations(item, extra, f"{where}.{key}")
    return problems


RESULT = {"$ref": "#/$defs/SimulationResult"}


def test_generated_files_are_current() -> None:
    """``python -m nki_studio.protocol.schema`` rewrites these; run it after changing ``result.py``."""
    assert (ROOT / result_schema.SCHEMA_FILE).read_text() == result_schema.render_schema()
    assert (ROOT / result_schema.TS_FILE).read_text() == result_schema.render_ts()


@pytest.mark.parametrize(
    ("argv", "statuses"),
    [
        ([f"{DATA / 'add_kernel.py'}::add"], ["passed"]),  # oracle, peak, estimate
        ([str(DATA / "rmsnorm_eps.py")], ["passed", "failed"]),  # several kernels: a list
        ([str(DATA / "broken_kernel.py")], ["error"]),  # error with its call chain
        ([str(DATA / "half_written.py")], ["failed"]),  # NaN: uninitializedRead from the strict re-run
        ([str(DATA / "loop_kernel.py"), "--timeout", "1"], ["timeout"]),  # no result from the worker
    ],
    ids=["passed", "several", "error", "uninitialized", "timeout"],
)
def test_simulate_json_follows_the_schema(
    argv: list[str], statuses: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    main(["simulate", *argv, "--json"])
    printed = json.loads(capsys.readouterr().out)
    results = printed if isinstance(printed, list) else [printed]
    assert [r["status"] for r in results] == statuses
    assert [p for r in results for p in violations(r, RESULT)] == []


def test_notices_follow_the_root_schema() -> None:
    """What no worker produced (refused, cancelled) is a notice; a result with a stray key is neither."""
    assert violations({"status": "refused", "message": "untrusted"}, SCHEMA) == []
    cancelled = {"status": "cancelled", "kernel": "k", "message": "m", "uri": "file:///k.py"}
    assert violations(cancelled, SCHEMA) == []
    assert violations({"status": "passed", "message": "m", "stray": 1}, SCHEMA)


def test_validator_reports_a_wrong_shape() -> None:
    """The check can fail: a wrong type deep inside, a missing key and an unknown status are reported."""
    main_result = {
        "status": "bogus",
        "message": "m",
        "backend": None,
        "kernel": "k",
        "path": "/k.py",
        "timings": {"total": "1s"},
        "oracle": None,
        "peak": {"sbuf": {"capacityBytes": 1, "peakBytes": 1.5, "live": []}},
        "warnings": [],
        "error": None,
        "estimate": None,
    }
    problems = violations(main_result, RESULT)
    assert any("missing 'spec'" in p for p in problems)
    assert any(p.startswith("$.status") for p in problems)
    assert any(p.startswith("$.timings.total") for p in problems)
    assert any(p.startswith("$.peak") for p in problems)
