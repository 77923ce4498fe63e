"""Import cost of the compiled dependencies and of the modules every start loads, each in a fresh interpreter.

Every simulation worker, language-server start, MCP start and CLI run pays these imports before doing anything,
so a dependency release that imports slowly shows here first (ml_dtypes 0.7.0: ~0.55 s against 0.6.0's 5 ms, the
reason ``extension/native-pins.txt`` and ``pyproject.toml`` keep it out). Each line is the least of ``--repeat``
fresh processes: the module's own import with what it names first already imported (``after``), and with nothing
imported before it. Prints figures; asserts nothing.

Run: ``.venv/bin/python benchmarks/import_bench.py [--repeat 5]``
"""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import sys

# (module, modules imported before it is timed): the second figure is the module's own share
MODULES = (
    ("numpy", ()),
    ("ml_dtypes", ("numpy",)),
    ("pyarrow", ("numpy",)),
    ("lsprotocol.types", ()),
    ("pygls.lsp.server", ("lsprotocol.types",)),
    ("nki_studio.sim.dtypes", ("ml_dtypes",)),
    ("nki_studio.service.simulation", ()),
    ("nki_studio.lsp.server", ()),
)

_PROBE = """
import importlib, sys, time
for name in sys.argv[2:]:
    importlib.import_module(name)
t = time.perf_counter()
importlib.import_module(sys.argv[1])
print(time.perf_counter() - t)
"""


def import_seconds(module: str, before: tuple[str, ...], repeat: int) -> float:
    """The least time importing ``module`` takes in a fresh interpreter that has imported ``before`` first."""
    times = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE, module, *before], capture_output=True, text=True, check=True
        )
        times.append(float(out.stdout.strip()))
    return min(times)


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def main() -> None:
    """Print each module's import time, alone and after its named dependencies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"Python {sys.version.split()[0]}; numpy {_version('numpy')}, ml_dtypes {_version('ml_dtypes')}, "
        f"pyarrow {_version('pyarrow')}; least of {args.repeat} fresh processes each"
    )
    for module, before in MODULES:
        alone = import_seconds(module, (), args.repeat)
        line = f"import {module}: {alone * 1000:.0f} ms"
        if before:
            own = import_seconds(module, before, args.repeat)
            line += f" ({own * 1000:.0f} ms after {', '.join(before)})"
        print(line)


if __name__ == "__main__":
    main()
