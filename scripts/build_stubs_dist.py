"""Build ``nki-studio-stubs``: the bundled NKI stubs as a PEP 561 stub-only distribution (packages ``nki-stubs``
and, for the legacy API, a partial ``neuronxcc-stubs``: only ``neuronxcc.nki`` is stubbed, so the rest of an
installed compiler keeps its own types) for pyright, Pylance and mypy without the server. Version, licence and URLs come from the main project's
``pyproject.toml`` and ``nki_studio.__version__``, so they are declared once.

Usage: ``.venv/bin/python scripts/build_stubs_dist.py [--outdir dist]`` → wheel and sdist in ``outdir``.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
STUBS = ROOT / "server" / "stubs" / "nki"
LEGACY_STUBS = ROOT / "server" / "stubs" / "neuronxcc"
NAME = "nki-studio-stubs"


def version() -> str:
    """``nki_studio.__version__`` read from the source (no import: the build may run without the package)."""
    tree = ast.parse((ROOT / "server" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets):
            return str(ast.literal_eval(node.value))
    raise SystemExit("server/__init__.py has no __version__")


def pyproject(project: dict[str, object]) -> str:
    urls = "\n".join(f'"{label}" = "{url}"' for label, url in dict(project["urls"]).items())  # type: ignore[call-overload]
    return f'''[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{NAME}"
version = "{version()}"
description = "Type stubs (PEP 561) for AWS Neuron NKI kernels: nki, nki.language, nki.isa, nki.collectives, nki.compiler and the legacy neuronxcc.nki"
readme = "README.md"
requires-python = "{project["requires-python"]}"
license = "{project["license"]}"
dependencies = ["numpy>=1.26"]

[project.urls]
{urls}

[tool.setuptools]
packages = {sorted(_packages())!r}
include-package-data = true

[tool.setuptools.package-data]
"*" = ["*.pyi", "py.typed"]
'''


def _packages() -> list[str]:
    return [
        f"{name}-stubs" + "".join(f".{part}" for part in p.relative_to(root).parts)
        for name, root in (("nki", STUBS), ("neuronxcc", LEGACY_STUBS))
        for p in [root, *sorted(root.rglob("*"))]
        if p.is_dir() and p.name != "__pycache__"
    ]


README = """# nki-studio-stubs

Type stubs for AWS Neuron NKI kernels (`nki`, `nki.language`, `nki.isa`, `nki.collectives`, `nki.compiler`, and
the legacy `neuronxcc.nki` API of Neuron <= 2.26), from nki-studio, so pyright, Pylance and mypy check kernels on
a machine without the Neuron SDK.

    pip install nki-studio-stubs

Without the SDK installed, pyright and Pylance warn `reportMissingModuleSource` on every `import nki`; set it to
`"none"` (pyright: `pyrightconfig.json` or `[tool.pyright]`; Pylance: `python.analysis.diagnosticSeverityOverrides`).
"""


def build(outdir: Path) -> list[Path]:
    """Stage the distribution in a temporary folder and build its wheel and sdist into ``outdir``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        for root in (STUBS, LEGACY_STUBS):
            shutil.copytree(
                root, stage / f"{root.name}-stubs", ignore=shutil.ignore_patterns("__pycache__", "*.py[co]")
            )
        (stage / "neuronxcc-stubs" / "py.typed").write_text(
            "partial\n"
        )  # PEP 561: only neuronxcc.nki is here
        (stage / "pyproject.toml").write_text(pyproject(project))
        (stage / "README.md").write_text(README)
        before = set(outdir.iterdir())
        subprocess.run(
            [
                sys.executable,
                "-m",
                "build",
                "--no-isolation",
                "--sdist",
                "--wheel",
                "--outdir",
                str(outdir),
                str(stage),
            ],
            check=True,
            capture_output=True,
        )
    return sorted(set(outdir.iterdir()) - before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outdir", type=Path, default=ROOT / "dist")
    for path in build(parser.parse_args().outdir):
        print(path)


if __name__ == "__main__":
    main()
