"""Kernels inside packages (``sim.packages``): a file with relative imports is simulated as its module of the
package, from the CLI, from unsaved text (the editor's and MCP's staged copy) and under ``PYTHONPATH``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nki_studio.cli.main import main
from nki_studio.sim.packages import ModuleLocation, package_module
from nki_studio.verify.job import Job
from nki_studio.verify.runner import run_job
from nki_studio.verify.spec import resolve

DATA = Path(__file__).parent / "data"
KERNEL = DATA / "kpkg" / "kernels" / "k.py"


def test_package_found_from_init_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert package_module(str(KERNEL)) == ModuleLocation("kpkg.kernels.k", str(DATA))
    assert package_module(str(KERNEL)).package == "kpkg.kernels"  # type: ignore[union-attr]
    loose = tmp_path / "loose.py"
    loose.write_text("x = 1\n")
    assert package_module(str(loose)) is None
    odd = tmp_path / "my-pkg"
    odd.mkdir()
    (odd / "__init__.py").write_text("")
    assert package_module(str(odd / "k.py")) is None  # not importable by name: loaded loose as before
    nested = tmp_path / "src" / "ns" / "kernels"
    nested.mkdir(parents=True)
    assert package_module(str(nested / "k.py")) is None
    assert package_module(str(nested / "k.py"), [str(tmp_path / "src")]) == ModuleLocation(
        "ns.kernels.k", str(tmp_path / "src")
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "src"))
    assert package_module(str(nested / "k.py")) == ModuleLocation("ns.kernels.k", str(tmp_path / "src"))


def test_cli_simulates_a_kernel_with_relative_imports(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(KERNEL), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "passed", result.get("message")


def test_unsaved_text_of_a_package_module_keeps_its_package() -> None:
    source = KERNEL.read_text().replace("nl.add(t, t)", "nl.multiply(t, 3.0)")  # now wrong: triples
    spec = resolve(source, str(KERNEL), "double").spec
    assert spec is not None
    job = Job(path=str(KERNEL), spec=spec.to_json(), backend="embedded")
    result = run_job(job, source=source, timeout_s=120)
    assert result["status"] == "failed", result.get("message")  # ran (imports resolved) and caught the bug


def test_namespace_package_under_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    kernels = src / "nspkg" / "kernels"
    kernels.mkdir(parents=True)
    (src / "nspkg" / "helpers.py").write_text((DATA / "kpkg" / "helpers.py").read_text())
    (kernels / "k.py").write_text(KERNEL.read_text())
    monkeypatch.setenv("PYTHONPATH", str(src))
    assert main(["simulate", str(kernels / "k.py"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "passed"
