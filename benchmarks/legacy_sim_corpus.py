"""Legacy simulation on the nki-samples corpus (issue 28 item 3). Prints figures; asserts nothing.

aws-neuron/nki-samples at commit 0898a77 (2025-11-12, before its legacy kernels were removed) is all legacy
``neuronxcc.nki`` code. Every kernel whose own code gives shapes and a NumPy reference is run, unmodified,
through the embedded simulator's drop-in (``neuronxcc`` imports resolve to ``nki_studio.sim.legacy``):

* each tutorial script ``src/nki_samples/tutorials/*/*.py`` that checks its kernel against a reference
  (``allclose``), run as ``__main__``: the kernel files' NumPy checks, the attention tutorial's test script, and
  the PyTorch and JAX scripts, which call the kernel on torch tensors on the XLA device (``torch_xla``: the
  drop-in's stands in as the CPU) or on JAX arrays, as a user's would (``sim.frameworks`` converts them at the
  kernel boundary); ``neuronxcc.nki.docs.examples``, where the SDK bundled the tutorials, is the corpus's
  tutorials folder;
* each ``test/unit/test_*.py`` test marked ``simulation``, run by pytest with the suite's own
  ``--simulation-only`` switch (its tests call ``simulate_kernel(baremetal(kernel)[grid], ...)``), the
  project's pytest plugin (``-p nki_studio.pytest_plugin``, the drop-in for the session) and
  ``trn2_host_plugin.py`` (the simulated trn2 answers the host check of the tests that run only on a trn2).

Per case (each in its own process, so a slow one times out alone): matching (the reference check passed), failing
(the first error line, or the time limit) or not runnable here (a module the script needs is not installed). ``--per-test N`` runs only the first N parametrisations of each test function.

Per kernel (the figure issue 28 names): each kernel a script or test file exercises (``corpus_kernels``: the
decorated kernels it names, directly or through a plain function of a kernel file) is counted once, over all
the cases that exercise it: failing when any of them fails, matching when its runnable cases all match, not
runnable when none of them can run (with the reasons). A case that exercises several kernels (the matrix
multiplication script checks five) counts for each.

The references need torch, jax and scipy, which are not nki-studio's dependencies: ``benchmarks/reference_env.py``
installs CPU builds of them into ``.cache/reference-env``, which ``--reference-packages`` takes by default when it
exists (only the packages ``.venv`` cannot import are taken from it). The corpus is read from ``--repo`` (a clone of
nki-samples holding the commit) or cloned into ``.cache/nki-samples``; nothing of it is copied into this tree.
Usage: ``.venv/bin/python benchmarks/legacy_sim_corpus.py [--repo PATH] [--timeout S] [--only SUBSTRING]
[--per-test N] [--reference-packages SITE_PACKAGES]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from corpus_kernels import kernels
from reference_env import REFERENCE_ENV

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0898a77"
URL = "https://github.com/aws-neuron/nki-samples"

_TUTORIAL_RUNNER = """
import os, runpy, sys, types
from nki_studio.sim import dropin
sys.argv = [sys.argv[1]]
with dropin.installed():
    # The SDK bundled the tutorials as the package neuronxcc.nki.docs.examples (layernorm_torch.py imports its
    # kernel from there): the corpus's tutorials folder (the script's folder's parent) stands in for it.
    for name, path in (("neuronxcc.nki.docs", []), ("neuronxcc.nki.docs.examples", [os.path.dirname(os.getcwd())])):
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].__path__ = path
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


@dataclass
class Case:
    name: str
    status: str  # "matching", "failing", "not runnable", "not run" (--per-test)
    detail: str = ""
    kernels: tuple[str, ...] = ()  # what the script or test file exercises (corpus_kernels)


def corpus_tree(repo: Path | None, into: Path) -> Path:
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
    pytest_errors = [
        line for line in lines if line.startswith("E ") and ("Error" in line or "assert" in line)
    ]
    if pytest_errors:
        return pytest_errors[0][:300]
    for line in reversed(lines):
        if re.match(r"^(E\s+)?[\w.]+(Error|Exception|Timeout)\b", line) or "Error:" in line:
            return line[:300]
    return (lines[-1] if lines else "no output")[:300]


def _missing_only(site: Path, into: Path) -> Path:
    """A folder linking the packages of ``site`` this interpreter cannot import (e.g. scipy), so the references
    get them while everything the project has (numpy ...) stays the project's own."""
    into.mkdir()
    for entry in site.iterdir():
        name = (
            entry.name.split("-")[0].removesuffix(".py").removesuffix(".libs")
        )  # scipy.libs goes with scipy
        if name.isidentifier() and importlib.util.find_spec(name) is None:
            (into / entry.name).symlink_to(entry)
    return into


def environment(corpus: Path, reference_packages: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(corpus / "src"), str(Path(__file__).parent), env.get("PYTHONPATH", "")]  # trn2_host_plugin
    if reference_packages is not None:
        paths.append(str(reference_packages))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """(exit code or None on timeout, stdout + stderr)."""
    try:
        run = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    return run.returncode, run.stdout + run.stderr


# What scripts that exit 0 print when their check failed: "NKI and Torch differ", and the rotary tutorial's log
# (it catches each configuration's failure and logs it).
_FAILURE_REPORTS = ("differ", "Some tests failed")


def _verdict(name: str, code: int | None, out: str, timeout: float, exercised: tuple[str, ...]) -> Case:
    if code is None:
        return Case(name, "failing", f"timed out after {timeout:.0f} s", exercised)
    if code == 0:
        failed = any(report in out for report in _FAILURE_REPORTS)
        return Case(name, "failing" if failed else "matching", kernels=exercised)
    error = _first_error(out)
    return Case(name, "not runnable" if error.startswith("needs ") else "failing", error, exercised)


def tutorial_runs(
    corpus: Path, env: dict[str, str], only: str = "", runner: list[str] | None = None
) -> Iterator[tuple[str, list[str], Path, dict[str, str]]]:
    """(name, command, folder, environment) of each tutorial script that checks its kernel against a reference,
    run as ``__main__`` in the drop-in (or by the command ``runner``, given the script's name)."""
    for path in sorted((corpus / "src" / "nki_samples" / "tutorials").glob("*/*.py")):
        name = f"tutorial {path.parent.name}/{path.name}"
        if "allclose" not in path.read_text() or only not in name:
            continue  # no reference check in the file
        local = {**env, "PYTHONPATH": f"{path.parent}{os.pathsep}{env['PYTHONPATH']}"}
        command = [*(runner or [sys.executable, "-c", _TUTORIAL_RUNNER]), path.name]
        yield name, command, path.parent, local


def _tutorials(corpus: Path, env: dict[str, str], timeout: float, only: str) -> Iterator[Case]:
    for name, command, folder, local in tutorial_runs(corpus, env, only):
        code, out = run(command, folder, local, timeout)
        yield _verdict(name, code, out, timeout, kernels(folder / command[-1], corpus / "src"))


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "nki_studio.pytest_plugin"]
PYTEST += ["--simulation-only", "-m", "simulation"]


def simulation_tests(corpus: Path, only: str = "") -> Iterator[Path]:
    """The unit-test files holding simulation-marked tests (whose name, ``unit test_x.py``, contains ``only``)."""
    for path in sorted((corpus / "test" / "unit").glob("test_*.py")):
        if "pytest.mark.simulation" in path.read_text() and only in f"unit {path.name}":
            yield path


def first_cases(
    path: Path, env: dict[str, str], timeout: float, per_test: int
) -> tuple[list[str], list[str], tuple[int | None, str]]:
    """A test file's simulation cases: (the first ``per_test`` parametrisations of each test function, the
    others, the collection's exit code and output)."""
    code, out = run([*PYTEST, "--collect-only", path.name], path.parent, env, timeout)
    taken: dict[str, int] = {}
    kept: list[str] = []
    left: list[str] = []
    for node in (line for line in out.splitlines() if line.startswith(f"{path.name}::")):
        function = node.split("[", 1)[0]
        taken[function] = taken.get(function, 0) + 1
        (kept if taken[function] <= per_test else left).append(node)
    return kept, left, (code, out)


def _unit_tests(
    corpus: Path, env: dict[str, str], timeout: float, only: str, per_test: int
) -> Iterator[Case]:
    """Every simulation-marked test case, each in its own pytest process (a slow case times out alone)."""
    for path in simulation_tests(corpus, only):
        exercised = kernels(path, corpus / "src")
        kept, left, (code, out) = first_cases(path, env, timeout, per_test)
        if not kept and not left:
            yield _verdict(f"unit {path.name}", code or 1, out, timeout, exercised)
            continue
        for node in kept:
            code, out = run([*PYTEST, "-p", "trn2_host_plugin", node], path.parent, env, timeout)
            yield _verdict(f"unit {node}", code, out, timeout, exercised)
        yield from (Case(f"unit {node}", "not run", f"--per-test {per_test}", exercised) for node in left)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a clone of aws-neuron/nki-samples holding commit 0898a77")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per tutorial or unit-test case")
    parser.add_argument(
        "--per-test",
        type=int,
        default=1000,
        help="run at most this many parametrisations of each test function",
    )
    parser.add_argument(
        "--reference-packages",
        type=Path,
        default=REFERENCE_ENV if REFERENCE_ENV.exists() else None,
        help="a site-packages folder with what the references import and .venv lacks (torch, jax, scipy): only "
        "the packages .venv cannot import are taken from it (default: .cache/reference-env when it exists, "
        "made by benchmarks/reference_env.py)",
    )
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    cases: list[Case] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = corpus_tree(args.repo, work)
        extra = args.reference_packages and _missing_only(
            args.reference_packages, work / "reference_packages"
        )
        env = environment(corpus, extra)
        tutorials = _tutorials(corpus, env, args.timeout, args.only)
        for case in itertools.chain(
            tutorials, _unit_tests(corpus, env, args.timeout, args.only, args.per_test)
        ):
            print(
                f"{case.status:13} {case.name}" + (f"  -- {case.detail}" if case.detail else ""), flush=True
            )
            cases.append(case)
    ran = [c for c in cases if c.status != "not run"]
    runnable = [c for c in ran if c.status != "not runnable"]
    matching = sum(c.status == "matching" for c in cases)
    per_kernel = kernel_verdicts(ran)
    print("\nper kernel (each kernel a script or test gives shapes for; its cases' verdicts above):")
    for verdict in per_kernel:
        print(f"{verdict.status:13} {verdict.name}  -- {verdict.detail}")
    print(
        f"\n{len(ran)} cases run ({len(cases) - len(ran)} left out by --per-test); {len(runnable)} runnable here; "
        f"simulated and matching their reference: {matching} ({100 * matching / max(1, len(runnable)):.0f}% of "
        f"runnable, {100 * matching / max(1, len(ran)):.0f}% of run); failing: "
        f"{sum(c.status == 'failing' for c in cases)}; not runnable: {len(ran) - len(runnable)}"
    )
    print(_counts("kernels", per_kernel))
    unnamed = [c.name for c in ran if not c.kernels]
    if unnamed:
        print(f"cases naming no kernel of the corpus (not in the per-kernel figure): {', '.join(unnamed)}")


def kernel_verdicts(cases: list[Case]) -> list[Case]:
    """One verdict per kernel over the cases that exercise it: failing when any of them fails, matching when its
    runnable cases all match, not runnable when none can run (with their reasons)."""
    by_kernel: dict[str, list[Case]] = {}
    for case in cases:
        for kernel in case.kernels:
            by_kernel.setdefault(kernel, []).append(case)
    verdicts: list[Case] = []
    for kernel, its in sorted(by_kernel.items()):
        failing = [c for c in its if c.status == "failing"]
        matching = [c for c in its if c.status == "matching"]
        left = len(its) - len(failing) - len(matching)
        if failing:
            detail = f"{len(failing)} of {len(its)} cases fail, first {failing[0].name}: {failing[0].detail}"
            verdicts.append(Case(kernel, "failing", detail))
        elif matching:
            detail = f"{len(matching)} of {len(its)} cases match" + (f", {left} not runnable" if left else "")
            verdicts.append(Case(kernel, "matching", detail))
        else:
            reasons = sorted({f"{c.name.split('::')[0]}: {c.detail}" for c in its})
            verdicts.append(Case(kernel, "not runnable", "; ".join(reasons)))
    return verdicts


def _counts(what: str, verdicts: list[Case]) -> str:
    total = len(verdicts)
    matching = sum(v.status == "matching" for v in verdicts)
    runnable = sum(v.status != "not runnable" for v in verdicts)
    return (
        f"{total} {what}: simulated and matching their references: {matching} ({100 * matching / max(1, total):.0f}% "
        f"of all, {100 * matching / max(1, runnable):.0f}% of runnable); failing: "
        f"{sum(v.status == 'failing' for v in verdicts)}; not runnable: {total - runnable}"
    )


if __name__ == "__main__":
    main()
