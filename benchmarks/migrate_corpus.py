"""``nki-studio migrate`` on the nki-samples legacy corpus (issue 28 item 5). Prints figures; asserts nothing.

aws-neuron/nki-samples at commit 0898a77 (checked out as ``legacy_sim_corpus.py`` does; nothing of it is copied
into this tree): every kernel (a ``@nki.jit``-style decorated function) of every file under ``src/nki_samples``
that imports ``neuronxcc.nki`` is classified

* **proven**: it migrates with no manual step in its lines or the functions it calls, and the proof (both
  versions simulated on the same seeded inputs: the shapes its unit tests and NumPy-checked scripts launch it with
  -- a unit test's smallest case (fewest input elements times launch-grid programs; the first of equals; the
  verdict names it), run as ``legacy_sim_corpus.py`` runs them, stopped at the launch --, else those the
  scripts that cannot run here (PyTorch, JAX) pass it, read from their text (``script_inputs.py``; the verdict
  names the script line), else those declared for it with their source (``declared_inputs.py``: a kernel no test
  or script launches, its shapes from the corpus's documentation of it), else its spec comments or the shapes its
  asserts pin) holds; or, with no inputs of its
  own, every kernel of its file calling it was proven and its proof ran it (``service.migration_callers``: its
  lines issued instructions in every run of both versions), counted apart in the summary ("through their
  callers");
* **proof failed**: the same, but an output differs or the migrated kernel fails (the first difference is printed);
* **migrated, not proven**: rewritten without a manual step in its own lines, but no inputs are known, the
  original itself does not run on the only inputs known (nothing was compared), it calls a function of the
  file that has manual steps (the service proves each completely migrated kernel on its own), or its callers are
  not proven or their proofs did not run it (said);
* **not migratable**: manual steps in its own lines, counted by construct (that is the explanation).

Usage: ``.venv/bin/python benchmarks/migrate_corpus.py [--repo PATH] [--only SUBSTRING] [--timeout S]
[--simulation-timeout S]``.
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from declared_inputs import DECLARED
from launch_inputs_plugin import ENVIRONMENT
from legacy_sim_corpus import (
    PYTEST,
    corpus_tree,
    environment,
    run,
    simulation_tests,
    tutorial_runs,
)
from nki_studio.migrate.rewrite import NotMigratable, migrate_source
from nki_studio.migrate.spmd_grids import grid_parameters
from nki_studio.service.migration import migrate, package_sources
from nki_studio.service.migration_callers import through_callers, unproven_callers
from nki_studio.service.settings import Settings, file_target
from nki_studio.service.simulation import kernels
from nki_studio.verify.spec import TensorSpec, parse_fields
from script_inputs import launches
from targets import goal


@dataclass
class Verdict:
    kernel: str
    status: str  # proven | proof failed | migrated, not proven | not migratable
    detail: str
    through: bool = False  # proven (or failed) through its callers' proofs, having no inputs of its own


def _ends(text: str) -> dict[str, int]:
    """Last line of each top-level function."""
    return {f.name: f.end_lineno or f.lineno for f in ast.parse(text).body if isinstance(f, ast.FunctionDef)}


def _size(launch: dict[str, Any]) -> int:
    """How much a recorded launch simulates: its arrays' elements times its grid's programs."""
    fields, _ = parse_fields(launch["spec"])
    elements = sum(math.prod(v.shape) for v in fields.values() if isinstance(v, TensorSpec))
    return elements * math.prod(launch.get("grid", ()))


def _preferred(recorded: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per kernel (``file::kernel``), the launch its proof takes of those ``recorded`` (in order): a unit test's
    smallest (:func:`_size`; the first of equals), else a script's first."""
    chosen: dict[str, dict[str, Any]] = {}
    for key, launch in recorded:
        before = chosen.get(key)
        tested = bool(launch.get("test"))
        if before is None or (tested and (not before.get("test") or _size(launch) < _size(before))):
            chosen[key] = launch
    return chosen


def _tested_inputs(
    corpus: Path, timeout: float
) -> tuple[dict[str, str], dict[str, tuple[int, ...]], dict[str, str]]:
    """``file::kernel`` -> the inputs the simulation tests' smallest case launching it, else a tutorial script
    checked against a reference, launches it with (each launch is stopped, a script goes on with its next
    statement, then repeats its launching calls for the launched kernel's siblings: launch_inputs_plugin); the
    legacy launch grid of that launch (``kernel[b, h](...)``), when it has one; and the test case, when a test's.
    The smallest case, not the first: nki-samples' flash attention tests start with six heads on three programs,
    beyond the proof's time limit, and go down to one head on one."""
    env = environment(corpus, None)
    env["PYTHONPATH"] += os.pathsep + str(Path(__file__).parent)  # the launch_inputs_plugin
    # in every pytest run, the collection too: a test file importing a module missing here (scipy) then collects
    env["PYTEST_PLUGINS"] = "launch_inputs_plugin"
    with tempfile.TemporaryDirectory() as folder:
        env[ENVIRONMENT] = str(Path(folder) / "inputs.jsonl")
        Path(env[ENVIRONMENT]).touch()
        for path in simulation_tests(corpus):
            # every case in one process (each stopped at its launch); a timeout keeps the launches recorded so far
            run([*PYTEST, path.name], path.parent, env, timeout)
        # each script's own launches, and the same calls with the launched kernel's siblings in its place
        runner = [sys.executable, str(Path(__file__).with_name("launch_inputs_plugin.py"))]
        for _, command, folder, local in tutorial_runs(corpus, env, runner=runner):
            run(command, folder, local, timeout)
        recorded = []
        for line in Path(env[ENVIRONMENT]).read_text(encoding="utf-8").splitlines():
            launch = json.loads(line)
            file = Path(launch["file"]).resolve()
            if file.is_relative_to(corpus.resolve()):  # not a kernel of the corpus's sources
                recorded.append((f"{file.relative_to(corpus.resolve())}::{launch['kernel']}", launch))
    chosen = _preferred(recorded)
    found = {key: launch["spec"] for key, launch in chosen.items()}
    grids = {key: tuple(launch.get("grid", ())) for key, launch in chosen.items()}
    cases = {key: launch["test"] for key, launch in chosen.items() if launch.get("test")}
    return found, grids, cases


def _script_inputs(corpus: Path) -> dict[str, tuple[str, str, tuple[int, ...]]]:
    """``file::kernel`` -> (inputs, where they came from, launch grid) read statically from the tutorial scripts
    that cannot run here (PyTorch/JAX: ``script_inputs``): each script's first call of a kernel of its folder, then
    the same inputs for that kernel's siblings (same file, same parameters) the scripts do not call themselves."""
    found: dict[str, tuple[str, str, tuple[int, ...]]] = {}
    root = corpus.resolve()
    for folder in sorted((root / "src" / "nki_samples" / "tutorials").iterdir()):
        files = sorted(folder.glob("*.py"))
        infos = {f: kernels(f.read_text(encoding="utf-8"), str(f)) for f in files}
        where = {k.name: f for f, found_here in infos.items() for k in found_here}
        parameters = {k.name: k.params for found_here in infos.values() for k in found_here}
        called = [launch for script in files for launch in launches(script, parameters)]
        for launch in called:
            found.setdefault(
                f"{where[launch.kernel].relative_to(root)}::{launch.kernel}",
                (launch.spec, launch.origin, launch.grid),
            )
        for launch in called:
            file = where[launch.kernel]
            for sibling in infos[file]:
                if sibling.params == parameters[launch.kernel]:
                    origin = f"{launch.origin}, the call of its sibling {launch.kernel}"
                    key = f"{file.relative_to(root)}::{sibling.name}"
                    found.setdefault(key, (launch.spec, origin, launch.grid))
    return found


def _missing_module(message: str) -> str | None:
    """The module a proof could not run without (``No module named 'torch_xla'``), if that stopped it."""
    found = re.search(r"did not run .*No module named '([^']+)'", message)
    return found.group(1) if found else None


def _callers_elsewhere(path: Path, name: str) -> list[str]:
    """The other modules of ``path``'s folder and those below it that call ``name`` by that name: a sub-kernel
    they call is not proven through them, since a proof migrates only its own file (theirs runs this one's
    original, not its migration)."""
    found = []
    for other in sorted(path.parent.rglob("*.py")):
        if other != path and name in (text := other.read_text(encoding="utf-8")):
            tree = ast.parse(text)
            if any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
                for n in ast.walk(tree)
            ):
                found.append(other.name)
    return found


@contextlib.contextmanager
def _declared_roots(path: Path, declared: bool) -> Iterator[None]:
    """While the proofs of a file with declared inputs run: this folder (their ``inputs=declared_inputs:...``
    functions) and the corpus's ``src`` (its package root, as the corpus's own unit tests import it:
    ``legacy_sim_corpus.environment``) are source roots of the simulator's workers. Other files are simulated as
    before."""
    if not declared:
        yield
        return
    src = next(p for p in path.parents if p.name == "src")
    saved = os.environ.get("PYTHONPATH")
    roots = [str(Path(__file__).parent), str(src), *([saved] if saved else [])]
    os.environ["PYTHONPATH"] = os.pathsep.join(roots)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def _file_verdicts(
    path: Path,
    rel: str,
    settings: Settings,
    tested: dict[str, str],
    scripted: dict[str, tuple[str, str, tuple[int, ...]]],
    grids: dict[str, tuple[int, ...]] | None = None,
    cases: dict[str, str] | None = None,
) -> list[Verdict]:
    text = path.read_text(encoding="utf-8")
    found = kernels(text, str(path))
    try:
        migration = migrate_source(
            text, helpers=package_sources(str(path)), platform=file_target(str(path), settings).generation
        )
    except NotMigratable as exc:
        return [Verdict(f"{rel}::{k.name}", "not migratable", str(exc)) for k in found]
    ends = _ends(text)
    inputs = {
        k.name: tested.get(f"{rel}::{k.name}", scripted.get(f"{rel}::{k.name}", (None, "", ()))[0])
        for k in found
    }
    # kernels no test or script launches: the inputs declared for them (declared_inputs.py), with their source
    declared = {k.name: DECLARED[f"{rel}::{k.name}"] for k in found if f"{rel}::{k.name}" in DECLARED}
    inputs.update((name, d.inputs) for name, d in declared.items() if inputs[name] is None)
    # where statically read inputs came from (said with the verdict)
    origins = {
        k.name: f" (inputs: shapes from {scripted[f'{rel}::{k.name}'][1]})"
        for k in found
        if f"{rel}::{k.name}" in scripted and inputs[k.name] == scripted[f"{rel}::{k.name}"][0]
    }
    origins.update(
        (name, f" (inputs: declared in benchmarks/declared_inputs.py from {d.source})")
        for name, d in declared.items()
        if inputs[name] == d.inputs
    )
    # and the unit-test case the inputs are the launch of (its smallest launching the kernel)
    tested_in = {k.name: (cases or {}).get(f"{rel}::{k.name}") for k in found}
    origins.update(
        (name, f" (inputs: the smallest test case, {case})") for name, case in tested_in.items() if case
    )
    # a kernel whose migrated form takes its grid as parameters runs on the grid its test (or the script whose
    # inputs it takes) launched it on
    for kernel, names in grid_parameters(text).items():
        key = f"{rel}::{kernel}"
        grid = (grids or {}).get(key, ()) if key in tested else scripted.get(key, (None, "", ()))[2]
        if inputs.get(kernel) is not None and len(grid) == len(names):
            inputs[kernel] = f"{inputs[kernel]} " + " ".join(
                f"{n}={e}" for n, e in zip(names, grid, strict=True)
            )
    proofs = {}
    # The service writes nothing without --write, and the corpus is a temporary checkout: the file is migrated in
    # place, in its package (the helpers its masks call are read from the package's other modules).
    for given in dict.fromkeys(inputs.values()):  # one run per distinct set of inputs
        with _declared_roots(path, bool(declared)):
            results = migrate(str(path), settings, inputs=given)["proofs"]
        for proof in results:
            if inputs[proof["kernel"]] == given and not proof["through"]:
                proofs[proof["kernel"]] = proof
    # sub-kernels through the proofs of their callers, each on its own inputs (not those of one run)
    own_proofs = list(proofs.values())
    proofs.update((p["kernel"], p) for p in through_callers(text, own_proofs, [k.name for k in found]))
    out = []
    for k in found:
        own = [s for s in migration.manual if k.decorator_line <= s.line <= ends.get(k.name, k.def_line)]
        name = f"{rel}::{k.name}"
        proof = proofs.get(k.name)
        if own:
            counts = collections.Counter(s.construct for s in own)
            out.append(
                Verdict(name, "not migratable", ", ".join(f"{c} x{n}" for c, n in counts.most_common()))
            )
        elif proof is None:
            elsewhere = ", ".join(_callers_elsewhere(path, k.name))
            why = (
                unproven_callers(text, own_proofs, k.name)
                or (
                    f"called from other modules only ({elsewhere}), whose proofs run its original, not its migration"
                    if elsewhere
                    else None
                )
                or (
                    "no inputs (no script or unit test launches it with arrays and numbers only, no spec comment, "
                    "asserts do not pin shapes), or it calls a function with manual steps"
                )
            )
            out.append(Verdict(name, "migrated, not proven", why))
        elif (missing := _missing_module(proof["message"])) is not None:
            # the file cannot even be imported here: nothing was compared, so nothing failed
            out.append(
                Verdict(name, "migrated, not proven", f"no inputs run: needs {missing} (not installed)")
            )
        elif "the original kernel did not run" in proof["message"]:
            # the only inputs known are ones the original itself cannot run on: nothing was compared
            why = f"no inputs the original runs on: {proof['message']}"
            out.append(Verdict(name, "migrated, not proven", why + origins.get(k.name, "")))
        else:
            status = "proven" if proof["equivalent"] else "proof failed"
            verdict = Verdict(
                name, status, proof["message"] + origins.get(k.name, ""), bool(proof["through"])
            )
            out.append(verdict)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a clone of aws-neuron/nki-samples holding commit 0898a77")
    parser.add_argument("--only", default="", help="only the files whose path contains this")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per unit-test case")
    # the flash-attention backward at its test's smallest shapes (seqlen 4096) simulates for minutes, not 60 s
    parser.add_argument(
        "--simulation-timeout", type=float, default=1500.0, help="seconds per simulation of a proof"
    )
    args = parser.parse_args()
    # running the benchmark is the decision to run the corpus
    settings = Settings(trusted_workspace=True, simulation_timeout_s=args.simulation_timeout)
    with tempfile.TemporaryDirectory() as folder:
        corpus = corpus_tree(args.repo, Path(folder))
        tested, grids, cases = _tested_inputs(corpus, args.timeout)
        scripted = _script_inputs(corpus)
        verdicts: list[Verdict] = []
        for path in sorted((corpus / "src" / "nki_samples").rglob("*.py")):
            rel = str(path.relative_to(corpus))
            if args.only in rel and "neuronxcc" in path.read_text(encoding="utf-8"):
                verdicts.extend(_file_verdicts(path, rel, settings, tested, scripted, grids, cases))
    for v in verdicts:
        print(f"{v.status:22} {v.kernel}: {v.detail}")
    counts = collections.Counter(v.status for v in verdicts)
    total = len(verdicts)
    through = sum(v.status == "proven" and v.through for v in verdicts)
    said = {"proven": f"proven: {counts['proven']} ({through} of them through their callers)"}
    print(f"\nkernels: {total}; " + ", ".join(said.get(s, f"{s}: {n}") for s, n in counts.most_common()))
    constructs = collections.Counter()
    for v in verdicts:
        if v.status == "not migratable":
            for part in v.detail.split(", "):
                construct, _, n = part.rpartition(" x")
                constructs[construct] += int(n) if n.isdigit() else 1
    print("manual steps by construct: " + ", ".join(f"{c} {n}" for c, n in constructs.most_common(12)))
    share = 100.0 * counts["proven"] / total if total else 0.0
    print(f"migrated and proven: {share:.0f}% {goal(100.0 - share, 20.0, '%', 'not proven')}")


if __name__ == "__main__":
    main()
