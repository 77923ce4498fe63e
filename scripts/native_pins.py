"""The exact versions of the server's compiled dependencies, per (VS Code target, CPython version).

``extension/native-pins.txt`` is the one place they are declared: requirement lines with PEP 508 markers
(``numpy==2.4.6; python_version >= "3.11"``). Three readers:

- the packaging script (extension/scripts/bundle-python.mjs) asks ``pins TARGET PYTHON`` for the versions to
  ``pip download`` for a target, and passes the file to ``pip install -c`` so the build machine's pure part is
  resolved against the same versions;
- the extension's on-demand environment (extension/src/privateEnv.ts) gives the lines, markers and all, to the
  user's own pip, which evaluates the markers for the real interpreter;
- ``check`` resolves every pair with ``pip install --dry-run --report`` against the registry (nothing is
  installed) and fails when a pin has no binary wheel for a target and CPython version (tests/distribution).

pip evaluates markers against the interpreter running it, never against ``--platform``/``--python-version``,
so for a foreign target they are evaluated here, in the target's environment (``environment`` in
extension/scripts/targets.json).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from packaging.markers import Marker
    from packaging.requirements import Requirement
except ImportError:  # pip always carries a copy
    from pip._vendor.packaging.markers import Marker  # type: ignore[no-redef]
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "extension" / "native-pins.txt"
TARGETS = ROOT / "extension" / "scripts" / "targets.json"


@dataclass(frozen=True)
class Pin:
    """One line of the pin file: a distribution at one exact version, where its marker holds."""

    name: str
    version: str
    marker: str  # '' = everywhere

    @property
    def spec(self) -> str:
        """``name==version`` (what pip download is given for a target)."""
        return f"{self.name}=={self.version}"


def read_pins(path: Path = PINS) -> list[Pin]:
    """The pin file's requirements; each must be ``name==version`` with an optional marker."""
    pins = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version or req.extras:
            raise ValueError(f"{path.name}:{number}: not an exact pin (name==version): {line}")
        pins.append(Pin(req.name, specs[0].version, str(req.marker) if req.marker else ""))
    return pins


def load_targets(path: Path = TARGETS) -> dict[str, Any]:
    """targets.json: ``targets`` (platform tags, bundled pythons, marker environment), ``supportedPythons``."""
    table: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return table


def environment(target_env: dict[str, str], python: str) -> dict[str, str]:
    """The PEP 508 marker environment of CPython ``python`` ("3.12") on a target."""
    return {
        **target_env,
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "implementation_version": f"{python}.0",
        "platform_python_implementation": "CPython",
    }


def pins_for(pins: list[Pin], target_env: dict[str, str], python: str) -> list[Pin]:
    """The pins whose markers hold for CPython ``python`` on the target; one per distribution, or ValueError."""
    env = environment(target_env, python)
    chosen = [p for p in pins if not p.marker or Marker(p.marker).evaluate(env)]
    names = [_normalise(p.name) for p in chosen]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"markers select more than one version of {', '.join(twice)} for CPython {python}")
    return chosen


def _normalise(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()


def resolve_command(
    python: str, platforms: list[str], specs: list[str], report: str, target: str
) -> list[str]:
    """``pip install --dry-run --report`` of exactly ``specs`` as binary wheels for a foreign platform."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--ignore-installed",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        *[a for p in platforms for a in ("--platform", p)],
        "--target",
        target,
        "--report",
        report,
        *specs,
    ]


def resolve(target: str, python: str, table: dict[str, Any], pins: list[Pin]) -> dict[str, str]:
    """The wheel pip would take for each pin of (target, python): {name: wheel file name}; RuntimeError if any
    pin has none (pip's own message)."""
    info = table["targets"][target]
    specs = [p.spec for p in pins_for(pins, info["environment"], python)]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = resolve_command(python, info["platforms"], specs, str(report), str(Path(tmp) / "t"))
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            # pip's own reason, without its notes about unusable extra index locations
            why = [ln for ln in (done.stderr or done.stdout).splitlines() if not ln.startswith("WARNING")]
            raise RuntimeError(f"{target} CPython {python}: {' '.join(why).strip()}")
        items = json.loads(report.read_text(encoding="utf-8"))["install"]
    return {
        item["metadata"]["name"]: item["download_info"]["url"].rsplit("/", 1)[-1].split("#", 1)[0]
        for item in items
    }


def main(argv: list[str] | None = None) -> int:
    """``pins TARGET PYTHON`` prints the specs; ``check`` resolves every (target, python) pair."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("pins", help="the name==version specs for one target and CPython version")
    one.add_argument("target")
    one.add_argument("python")
    check = sub.add_parser("check", help="resolve every pin for every target and CPython version (dry run)")
    check.add_argument("--target", action="append", help="only these targets (default: all)")
    check.add_argument(
        "--python", action="append", help="only these CPython versions (default: all supported)"
    )
    check.add_argument("--jobs", type=int, default=4, help="pip processes at a time (default 4)")
    args = parser.parse_args(argv)
    table, pins = load_targets(), read_pins()
    if args.command == "pins":
        env = table["targets"][args.target]["environment"]
        print("\n".join(p.spec for p in pins_for(pins, env, args.python)))
        return 0
    pairs = [
        (t, v)
        for t in args.target or list(table["targets"])
        for v in args.python or table["supportedPythons"]
    ]
    results = check_pairs(pairs, table, pins, args.jobs)
    for (target, python), result in zip(pairs, results, strict=True):
        if isinstance(result, str):
            print(f"FAIL {result}")
        else:
            print(f"ok   {target:<13} {python:<5} {' '.join(sorted(result.values()))}")
    return 1 if any(isinstance(r, str) for r in results) else 0


def check_pairs(
    pairs: list[tuple[str, str]], table: dict[str, Any], pins: list[Pin], jobs: int = 4
) -> list[dict[str, str] | str]:
    """``resolve`` for each (target, python) pair, ``jobs`` at a time (each is a few seconds of index look-ups);
    per pair the wheels, or pip's reason as a string."""

    def one(pair: tuple[str, str]) -> dict[str, str] | str:
        try:
            return resolve(pair[0], pair[1], table, pins)
        except RuntimeError as err:
            return str(err)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, pairs))


if __name__ == "__main__":
    sys.exit(main())
