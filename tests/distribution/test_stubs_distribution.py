"""``nki-studio-stubs`` (PEP 561, package ``nki-stubs``): builds, passes ``twine check``, and once installed
type-checks a kernel with pyright and nothing else configured but the documented ``reportMissingModuleSource``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nki_studio
import pytest
from wheels import install, twine_check

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "tests" / "stubs" / "kernels" / "typed_style.py"
LEGACY_KERNEL = ROOT / "tests" / "stubs" / "kernels" / "legacy_style.py"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stubs-dist")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_stubs_dist.py"), "--outdir", str(out / "dist")],
        check=True,
        capture_output=True,
    )
    twine_check(out / "dist")
    (wheel,) = (out / "dist").glob("*.whl")
    assert wheel.name.startswith(f"nki_studio_stubs-{nki_studio.__version__}-")
    return install(wheel, out / "site")


def _pyright(site: Path, folder: Path, source: Path) -> list[str]:
    pyright = Path(sys.executable).with_name("pyright")
    if not pyright.exists():
        pytest.skip("pyright not installed (dev dependencies)")
    folder.mkdir()
    shutil.copyfile(source, folder / "k.py")
    (folder / "pyrightconfig.json").write_text(
        json.dumps({"extraPaths": [str(site)], "reportMissingModuleSource": "none"})
    )
    done = subprocess.run([str(pyright), "--outputjson", "k.py"], capture_output=True, text=True, cwd=folder)
    return [d["message"] for d in json.loads(done.stdout)["generalDiagnostics"] if d["severity"] == "error"]


def test_an_installed_stubs_package_type_checks_a_kernel(installed: Path, tmp_path: Path) -> None:
    assert (installed / "nki-stubs" / "language" / "__init__.pyi").is_file()
    assert _pyright(installed, tmp_path / "clean", KERNEL) == []


def test_the_installed_stubs_are_what_pyright_checks_against(installed: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(KERNEL.read_text().replace("dge_mode=2)", "dge_mode=2, no_such_parameter=1)"))
    assert _pyright(installed, tmp_path / "broken", broken) == ['No parameter named "no_such_parameter"']


def test_the_legacy_stubs_type_check_a_legacy_kernel(installed: Path, tmp_path: Path) -> None:
    assert (installed / "neuronxcc-stubs" / "py.typed").read_text() == "partial\n"
    assert _pyright(installed, tmp_path / "legacy", LEGACY_KERNEL) == []
    broken = tmp_path / "broken.py"
    broken.write_text(LEGACY_KERNEL.read_text().replace("nl.arange(512)", "nl.arange(512, step=1)"))
    assert _pyright(installed, tmp_path / "broken", broken) == ['No parameter named "step"']
