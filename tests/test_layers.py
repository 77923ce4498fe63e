"""Imports under ``server/`` point down the layer order declared in docs/architecture.md, never sideways or up.

Every ``import``/``from ... import`` counts: module level, inside functions and under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "server"
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = "nki_studio"
# front-end types: the front ends (layer of lsp) and above only
PROTOCOL_LIBRARIES = ("lsprotocol", "pygls", "mcp")
# The front ends reach what computes only through ``service`` (docs/architecture.md): none of them imports these.
# ``pytest_plugin`` is not one: it is the embedded simulator's pytest glue (installs the ``nki`` drop-in).
FRONT_ENDS = ("lsp", "mcp", "cli")
BEHIND_THE_SERVICE = ("sim", "verify", "estimate", "profile", "remote", "tune")


def declared_layers(text: str) -> dict[str, int]:
    """Package (first path component under ``server/``, ``__init__`` for the root) -> layer, from the table
    between the ``layers`` markers of docs/architecture.md."""
    table = text.split("<!-- layers:begin -->", 1)[1].split("<!-- layers:end -->", 1)[0]
    out: dict[str, int] = {}
    for m in re.finditer(r"^\| (\d+) \| ([^|]+) \|", table, re.M):
        for name in re.findall(r"`([^`]+)`", m.group(2)):
            out[name] = int(m.group(1))
    return out


LAYERS = declared_layers(DOC.read_text(encoding="utf-8"))
FRONT_END = LAYERS["lsp"]


def unit_of(path: Path) -> str:
    """The layer unit of a source file: its top package under ``server/``, or the module's own name."""
    parts = path.relative_to(SERVER).parts
    return parts[0] if len(parts) > 1 else parts[0].split(".")[0]


def sources() -> list[Path]:
    """Every Python source and stub under ``server/``."""
    return sorted(
        p for p in SERVER.rglob("*.py*") if p.suffix in (".py", ".pyi") and "__pycache__" not in p.parts
    )


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in a file; ``from X import name`` also yields ``X.name``
    (``from nki_studio import cli`` imports the package ``cli``)."""
    rel = path.relative_to(SERVER).with_suffix("").parts
    package = [PACKAGE, *rel[:-1]]  # the package a relative import starts from (a package's own __init__ too)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def target_unit(module: str) -> str | None:
    """The layer unit an imported module belongs to (None outside ``nki_studio``)."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return "__init__"  # ``from nki_studio import __version__``


def bypasses(src: str, module: str) -> bool:
    """Whether a module of unit ``src`` importing ``module`` is a front end going around the service."""
    return src in FRONT_ENDS and target_unit(module) in BEHIND_THE_SERVICE


def violations() -> list[str]:
    """One line per import against the order, ``file:line``, plus every unit without a layer."""
    out: list[str] = []
    for path in sources():
        src = unit_of(path)
        where = path.relative_to(ROOT)
        if src not in LAYERS:
            out.append(f"{where}: package {src!r} has no layer in docs/architecture.md")
            continue
        for line, module in imported(path):
            if bypasses(src, module):
                out.append(f"{where}:{line}: front end {src} imports {module}: go through nki_studio.service")
            if LAYERS[src] < FRONT_END and module.split(".")[0] in PROTOCOL_LIBRARIES:
                out.append(f"{where}:{line}: {src} imports {module}: protocol types stay in the front ends")
            dst = target_unit(module)
            if dst is None or dst == src:
                continue
            if LAYERS[dst] >= LAYERS[src]:
                side = "its peer" if LAYERS[dst] == LAYERS[src] else "the higher layer"
                out.append(
                    f"{where}:{line}: {src} (layer {LAYERS[src]}) imports {module}: {side} {dst} "
                    f"(layer {LAYERS[dst]})"
                )
    return out


def test_the_order_is_declared() -> None:
    assert {"core", "model", "nkilint", "sim", "profile", "verify", "remote", "lsp", "cli"} <= set(LAYERS)
    assert LAYERS["core"] < LAYERS["model"] < LAYERS["nkilint"] == LAYERS["sim"] < LAYERS["profile"]
    assert LAYERS["remote"] < LAYERS["service"] < LAYERS["lsp"] == LAYERS["mcp"] < LAYERS["cli"]


def test_a_front_end_importing_past_the_service_is_caught() -> None:
    assert bypasses("lsp", "nki_studio.verify.runner.run_job")
    assert bypasses("cli", "nki_studio.profile.analyze")
    assert bypasses("mcp", "nki_studio.remote.flow.RemoteJob")
    assert not bypasses("mcp", "nki_studio.service.simulation.prepare")
    assert not bypasses(
        "lsp", "nki_studio.nkilint.api"
    )  # lint and the model are shared, not behind the service
    assert not bypasses("service", "nki_studio.verify.runner")


def test_imports_point_down_the_layers() -> None:
    found = violations()
    assert not found, "imports against docs/architecture.md:\n" + "\n".join(found)


def test_imported_names_are_resolved_to_their_packages() -> None:
    assert target_unit("nki_studio.nkilint.config.LintConfig") == "nkilint"
    assert target_unit("nki_studio.__version__") == "__init__"
    assert target_unit("numpy") is None
