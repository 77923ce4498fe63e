"""The Python distribution: wheel and sdist build, pass ``twine check``, carry the rule pages and the project's
URLs, and a server installed from the wheel links diagnostics to its packaged pages. Version and URLs are
declared once (``nki_studio.__version__``, ``[project.urls]``); package.json is checked against them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import nki_studio
import pytest
from wheels import install, twine_check

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
RULE_PAGES = sorted(p.name for p in (ROOT / "docs" / "rules").glob("*.md"))


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--sdist",
            "--wheel",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def test_twine_check_passes(dist: Path) -> None:
    twine_check(dist)


def test_wheel_carries_every_rule_page_and_the_urls(dist: Path) -> None:
    with zipfile.ZipFile(_wheel(dist)) as whl:
        names = whl.namelist()
        (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = whl.read(meta_name).decode()
    packaged = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("nki_studio/rule_pages/"))
    assert packaged == RULE_PAGES and len(packaged) > 60
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    for label, url in declared.items():
        assert f"Project-URL: {label}, {url}" in metadata
    assert f"Version: {nki_studio.__version__}\n" in metadata


def test_sdist_carries_the_rule_pages(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        pages = sorted(
            n.rsplit("/", 1)[1] for n in tar.getnames() if "/docs/rules/" in n and n.endswith(".md")
        )
    assert pages == RULE_PAGES


def test_an_installed_wheel_links_rules_to_its_own_pages(dist: Path, tmp_path: Path) -> None:
    target = install(_wheel(dist), tmp_path / "site")
    probe = (
        "import json; from nki_studio.core import distribution as d; from nki_studio.lsp.convert import DOCS_DIR;"
        "print(json.dumps([str(d.rule_pages_dir()), str(DOCS_DIR), d.rule_page_url('NKI301')]))"
    )
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONSAFEPATH": "1"}
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, env=env, cwd=tmp_path
    )
    pages, docs_dir, url = json.loads(out.stdout)
    assert pages == docs_dir == str(target / "nki_studio" / "rule_pages")
    base = _declared_urls().get("Rule pages")
    assert url == (f"{base}/NKI301.md" if base else None)


def _declared_urls() -> dict[str, str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("urls", {})


def test_package_json_agrees_with_the_python_distribution() -> None:
    """package.json names exactly the addresses ``[project.urls]`` declares (none while the project has none:
    vsce packages without ``repository``, ``extension/scripts/package.mjs`` passes --allow-missing-repository)."""
    package = json.loads((ROOT / "package.json").read_text())
    urls = _declared_urls()
    assert package["version"] == nki_studio.__version__
    repository = package.get("repository", {}).get("url")
    assert repository == (urls["Repository"] + ".git" if "Repository" in urls else None)
    assert package.get("homepage") == urls.get("Homepage")
    assert package.get("bugs", {}).get("url") == urls.get("Issues")


# A web address of this project: the project's name in a URL's host or path.
_PROJECT_URL = re.compile(r"https?://[^\s\"'<>()\]\[`]*nki-studio[^\s\"'<>()\]\[`]*")


def test_no_file_names_an_undeclared_project_address() -> None:
    """Every address of the project in the tree (tracked files) is one ``[project.urls]`` declares, or lies under
    one: no placeholder repository anywhere."""
    declared = tuple(_declared_urls().values())
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    found = []
    for name in filter(None, files):
        path = ROOT / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary or unreadable (a deleted, still tracked file)
        for match in _PROJECT_URL.finditer(text):
            url = match.group(0).rstrip(".,;:")
            if not url.startswith(declared) or not declared:
                found.append(f"{name}: {url}")
    assert found == []
