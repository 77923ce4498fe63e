"""Legacy simulation on the nki-samples corpus (issue 28 item 3). Prints figures; asserts nothing.

aws-neuron/nki-samples at commit 0898a77 (2025-11-12, before its legacy kernels were removed) is all legacy
``neuronxcc.nki`` code. Every kernel whose own code gives shapes and a NumPy reference is run, unmodified,
through the embedded simulator's drop-in (``neuronxcc`` imports resolve to ``nki_studio.sim.legacy``):

* each tutorial script ``src/nki_samples/tutorials/*/*.py`` that checks its kernel against a reference
  (``allclose``), run as ``__main__``: the kernel files' NumPy checks, the attention tutorial's test script, and
  the PyTorch/JAX scripts (not runnable without torch/jax);
* each ``test/unit/test_*.py`` test marked ``simulation``, run by pytest with the suite's own
  ``--simulation-only`` switch (its tests call ``simulate_kernel(baremetal(kernel)[grid], ...)``) and the
  project's pytest plugin (``-p nki_studio.pytest_plugin``, the drop-in for the session).

Per case: matching (the reference check passed), failing (the first error line) or not runnable here (a
module the script needs, e.g. torch or scipy, is not installed). The corpus is read from ``--repo`` (a clone of
nki-samples holding the commit) or cloned into ``.cache/nki-samples``; nothing of it is copied into this tree.
Usage: ``.venv/bin/python benchmarks/legacy_sim_corpus.py [--repo PATH] [--timeout S] [--only SUBSTRING]
[--reference-packages SITE_PACKAGES]`` (the last for the references' scipy/torch when .venv lacks them).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0898a77"
URL = "https://github.com/aws-neuron/nki-samples"

_TUTORIAL_RUNNER = """
import runpy, sys
from nki_studio.sim import dropin
sys.argv = [sys.argv[1]]
with dropin.installed():
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


@dataclass
class Case:
    name: str
    status: str  # "matching", "failing", "not runnable"
    detail: str = ""


def _corpus(repo: Path | None, into: Path) -> Path:
    if repo is None:
        repo = ROOT / ".cache" / "nki-samples"
        if not repo.exists():
            subprocess.run(["git", "clone", "--quiet", URL, str(repo)], check=True)
    archive = into / "corpus.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(repo), "archive", COMMIT], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "corpus", filter="data")
    return into / "corpus"


def _first_error(text: str) -> str:
    missing = re.search(r"No module named '([^']+)'", text)
    if missing:
        return f"needs {missing.group(1)}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^(E\s+)?[\w.]+(Error|Exception|Timeout)\b", line) or "Error:" in line:
            return line[:300]
    return (lines[-1] if lines else "no output")[:300]


def _missing_only(site: Path, into: Path) -> Path:
    """A folder linking the packages of ``site`` this interpreter cannot import (e.g. scipy), so the references
    get them while everything the project has (numpy ...) stays the project's own."""
    into.mkdir()
    for entry in site.iterdir():
        name = entry.name.split("-")[0].removesuffix(".py")
        if name.isidentifier() and importlib.util.find_spec(name) is None:
            (into / entry.name).symlink_to(entry)
    return into


def _env(corpus: Path, reference_packages: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(corpus / "src"), env.get("PYTHONPATH", "")]
    if reference_packages is not None:
        paths.append(str(reference_packages))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _tutorials(corpus: Path, env: dict[str, str], timeout: float, only: str) -> list[Case]:
    cases = []
    for path in sorted((corpus / "src" / "nki_samples" / "tutorials").glob("*/*.py")):
        text = path.read_text()
        name = f"tutorial {path.parent.name}/{path.name}"
        if "allclose" not in text or only not in name:
            continue  # no reference check in the file
        try:
            run = subprocess.run(
                [sys.executable, "-c", _TUTORIAL_RUNNER, path.name],
                cwd=path.parent,
                env={**env, "PYTHONPATH": f"{path.parent}{os.pathsep}{env['PYTHONPATH']}"},
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            cases.append(Case(name, "failing", f"timed out after {timeout:.0f} s"))
            continue
        out = run.stdout + run.stderr
        if run.returncode == 0:
            cases.append(Case(name, "matching" if "differ" not in run.stdout else "failing", ""))
        else:
            error = _first_error(out)
            cases.append(Case(name, "not runnable" if error.startswith("needs ") else "failing", error))
    return cases


def _unit_tests(corpus: Path, env: dict[str, str], timeout: float, only: str, work: Path) -> list[Case]:
    cases = []
    unit = corpus / "test" / "unit"
    for path in sorted(unit.glob("test_*.py")):
        if "pytest.mark.simulation" not in path.read_text() or only not in f"unit {path.name}":
            continue
        report = work / f"{path.stem}.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "nki_studio.pytest_plugin",
        ]
        command += ["--simulation-only", "-m", "simulation", f"--junitxml={report}", path.name]
        try:
            run = subprocess.run(command, cwd=unit, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            cases.append(Case(f"unit {path.name}", "failing", f"timed out after {timeout:.0f} s"))
            continue
        if not report.exists():
            cases.append(Case(f"unit {path.name}", "failing", _first_error(run.stdout + run.stderr)))
            continue
        for test in ET.parse(report).getroot().iter("testcase"):
            name = f"unit {path.name}::{test.get('name')}"
            problem = next((c for c in test if c.tag in ("failure", "error", "skipped")), None)
            if problem is None:
                cases.append(Case(name, "matching"))
                continue
            error = _first_error((problem.get("message") or "") + "\n" + (problem.text or ""))
            status = "not runnable" if error.startswith("needs ") or problem.tag == "skipped" else "failing"
            cases.append(Case(name, status, error))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a clone of aws-neuron/nki-samples holding commit 0898a77")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per tutorial or unit-test file")
    parser.add_argument(
        "--reference-packages",
        type=Path,
        help="a site-packages folder with what the references import and .venv lacks (scipy, torch): only the "
        "packages .venv cannot import are taken from it",
    )
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = _corpus(args.repo, work)
        extra = args.reference_packages and _missing_only(
            args.reference_packages, work / "reference_packages"
        )
        env = _env(corpus, extra)
        cases = _tutorials(corpus, env, args.timeout, args.only)
        cases += _unit_tests(corpus, env, args.timeout, args.only, work)
    for case in cases:
        print(f"{case.status:13} {case.name}" + (f"  -- {case.detail}" if case.detail else ""))
    runnable = [c for c in cases if c.status != "not runnable"]
    matching = sum(c.status == "matching" for c in cases)
    print(
        f"\n{len(cases)} cases; {len(runnable)} runnable here; simulated and matching their reference: {matching} "
        f"({100 * matching / max(1, len(runnable)):.0f}% of runnable, {100 * matching / max(1, len(cases)):.0f}% of all); "
        f"failing: {sum(c.status == 'failing' for c in cases)}; not runnable: {len(cases) - len(runnable)}"
    )


if __name__ == "__main__":
    main()
