"""extension/native-pins.txt: one exact version of each compiled distribution for every (VS Code target, CPython)
pair, chosen by PEP 508 markers evaluated in that target's environment, and every chosen pin has a binary wheel
for the pair on the registry (``pip install --dry-run --report``: nothing is downloaded beyond the index).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("native_pins", ROOT / "scripts" / "native_pins.py")
assert _spec and _spec.loader
native_pins = importlib.util.module_from_spec(_spec)
sys.modules["native_pins"] = native_pins
_spec.loader.exec_module(native_pins)

TABLE = native_pins.load_targets()
PINS = native_pins.read_pins()
PAIRS = [(t, v) for t in TABLE["targets"] for v in TABLE["supportedPythons"]]
# pip's words when the index cannot be reached at all (a laptop offline); CI has the registry and never skips
OFFLINE = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ProxyError",
)


def chosen(target: str, python: str) -> dict[str, str]:
    env = TABLE["targets"][target]["environment"]
    return {p.name: p.version for p in native_pins.pins_for(PINS, env, python)}


@pytest.mark.parametrize(("target", "python"), PAIRS)
def test_every_pair_gets_each_compiled_distribution_once(target: str, python: str) -> None:
    names = {p.name for p in PINS if 'sys_platform == "win32"' not in p.marker}
    got = chosen(target, python)  # pins_for raises when two versions of one distribution match
    assert names <= set(got), f"{target} {python} lacks {sorted(names - set(got))}"


def test_markers_pick_per_python_and_per_target_versions() -> None:
    assert chosen("linux-x64", "3.10")["numpy"] == "2.2.6"
    assert chosen("linux-x64", "3.11")["numpy"] == chosen("win32-x64", "3.13")["numpy"] == "2.4.6"
    # cryptography 49+ has no macOS x86_64 wheels: an older one there only
    assert chosen("darwin-x64", "3.12")["cryptography"] == "48.0.1"
    assert chosen("darwin-arm64", "3.12")["cryptography"] == "50.0.2"
    assert "pywin32" in chosen("win32-x64", "3.12") and "pywin32" not in chosen("linux-x64", "3.12")


def test_a_range_is_not_a_pin(tmp_path: Path) -> None:
    bad = tmp_path / "pins.txt"
    bad.write_text("numpy>=2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not an exact pin"):
        native_pins.read_pins(bad)


def test_two_versions_for_one_pair_are_refused(tmp_path: Path) -> None:
    pins = tmp_path / "pins.txt"
    pins.write_text('numpy==2.4.6\nnumpy==2.2.6; python_version < "3.11"\n', encoding="utf-8")
    env = TABLE["targets"]["linux-x64"]["environment"]
    with pytest.raises(ValueError, match="more than one version of numpy"):
        native_pins.pins_for(native_pins.read_pins(pins), env, "3.10")
    assert len(native_pins.pins_for(native_pins.read_pins(pins), env, "3.12")) == 1


def test_the_dry_run_asks_for_binary_wheels_of_the_foreign_platform() -> None:
    cmd = native_pins.resolve_command("3.10", ["win_amd64"], ["numpy==2.2.6"], "/r.json", "/t")
    assert cmd[cmd.index("--python-version") + 1] == "3.10"
    assert cmd[cmd.index("--platform") + 1] == "win_amd64"
    assert {"--dry-run", "--only-binary=:all:", "--no-deps"} <= set(cmd) and cmd[-1] == "numpy==2.2.6"


@pytest.mark.slow
def test_every_pin_has_a_wheel_for_every_target_and_python() -> None:
    results = native_pins.check_pairs(PAIRS, TABLE, PINS, jobs=5)
    failures = {pair: r for pair, r in zip(PAIRS, results, strict=True) if isinstance(r, str)}
    if failures and not os.environ.get("CI") and all(any(w in r for w in OFFLINE) for r in failures.values()):
        pytest.skip("the package registry cannot be reached")
    assert not failures, "\n".join(failures.values())
    for (target, python), wheels in zip(PAIRS, results, strict=True):
        assert isinstance(wheels, dict)
        tag = f"cp{python.replace('.', '')}"
        pinned = {norm(n): v for n, v in chosen(target, python).items()}
        assert {norm(n) for n in wheels} == set(pinned)
        for name, wheel in wheels.items():
            # version-specific wheels for exactly this CPython; abi3 ones for at most it; the pinned version
            abi = wheel[:-4].split("-")[-2]
            assert abi in ("abi3", tag), f"{target} {python}: {wheel}"
            assert wheel.split("-")[1] == pinned[norm(name)], f"{target} {python}: {wheel}"


def norm(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()
