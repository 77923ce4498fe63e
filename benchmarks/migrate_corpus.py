"""``nki-studio migrate`` on the nki-samples legacy corpus (issue 28 item 5). Prints figures; asserts nothing.

aws-neuron/nki-samples at commit 0898a77 (checked out as ``legacy_sim_corpus.py`` does; nothing of it is copied
into this tree): every kernel (a ``@nki.jit``-style decorated function) of every file under ``src/nki_samples``
that imports ``neuronxcc.nki`` is classified

* **proven**: it migrates with no manual step in its lines or the functions it calls, and the proof (both
  versions simulated on the same seeded inputs: the shapes the corpus's PyTorch scripts give (the table below),
  else those its unit tests and NumPy-checked scripts launch it with -- their first case, run as
  ``legacy_sim_corpus.py`` runs them, stopped at the launch --, else its spec comments or the shapes its asserts
  pin) holds;
* **proof failed**: the same, but an output differs or a run fails (the first difference is printed);
* **migrated, not proven**: rewritten without a manual step in its own lines, but no inputs are known or it calls
  a function of the file that has manual steps (the service proves each completely migrated kernel on its own);
* **not migratable**: manual steps in its own lines, counted by construct (that is the explanation).

Usage: ``.venv/bin/python benchmarks/migrate_corpus.py [--repo PATH] [--only SUBSTRING] [--timeout S]``.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from launch_inputs_plugin import ENVIRONMENT
from legacy_sim_corpus import (
    PYTEST,
    corpus_tree,
    environment,
    first_cases,
    run,
    simulation_tests,
    tutorial_runs,
)
from nki_studio.migrate.rewrite import NotMigratable, migrate_source
from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings, file_target
from nki_studio.service.simulation import kernels
from targets import goal

# Input shapes a corpus file's own scripts give its kernels (its __main__ block or its PyTorch tutorial script),
# for the proof; key "file" or "file::kernel" (kernels of one file taking different shapes). A kernel not listed is
# proven on its spec comments or the shapes its asserts pin, if any. (The tensor-addition kernels are not listed:
# they read a 2-D launch grid, which a proof's single launch does not give.)
_INPUTS = {
    "src/nki_samples/tutorials/rmsnorm/rmsnorm_nki_kernels.py": "a_tensor=float32[250,512] g_tensor=float32[512]",
    "src/nki_samples/tutorials/softmax/softmax_nki_kernels.py": "a_tensor=float32[2,5]",
    # matrix_multiplication_torch.py: lhs_small (64, 128) @ rhs_small (128, 512) for the basic kernel, lhs
    # (4096, 1024) @ rhs (1024, 2048) for the others (the kernels take lhs transposed)
    "src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py::nki_matmul_basic_": (
        "lhsT=bfloat16[128,64] rhs=bfloat16[128,512]"
    ),
    "src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py": (
        "lhsT=bfloat16[1024,4096] rhs=bfloat16[1024,2048]"
    ),
}


@dataclass
class Verdict:
    kernel: str
    status: str  # proven | proof failed | migrated, not proven | not migratable
    detail: str


def _ends(text: str) -> dict[str, int]:
    """Last line of each top-level function."""
    return {f.name: f.end_lineno or f.lineno for f in ast.parse(text).body if isinstance(f, ast.FunctionDef)}


def _tested_inputs(corpus: Path, timeout: float) -> dict[str, str]:
    """``file::kernel`` -> the inputs the first case of each simulation test, or a tutorial script checked
    against a reference, first launches it with (the first found; each launch is stopped, a script goes on with its
    next statement, then repeats its launching calls for the launched kernel's siblings: launch_inputs_plugin)."""
    env = environment(corpus, None)
    env["PYTHONPATH"] += os.pathsep + str(Path(__file__).parent)  # the launch_inputs_plugin
    found: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        env[ENVIRONMENT] = str(Path(folder) / "inputs.jsonl")
        Path(env[ENVIRONMENT]).touch()
        for path in simulation_tests(corpus):
            for node in first_cases(path, env, timeout, 1)[0]:
                run([*PYTEST, "-p", "launch_inputs_plugin", node], path.parent, env, timeout)
        # each script's own launches, and the same calls with the launched kernel's siblings in its place
        runner = [sys.executable, str(Path(__file__).with_name("launch_inputs_plugin.py"))]
        for _, command, folder, local in tutorial_runs(corpus, env, runner=runner):
            run(command, folder, local, timeout)
        for line in Path(env[ENVIRONMENT]).read_text(encoding="utf-8").splitlines():
            launch = json.loads(line)
            file = Path(launch["file"]).resolve()
            if file.is_relative_to(corpus.resolve()):  # not a kernel of the corpus's sources
                found.setdefault(f"{file.relative_to(corpus.resolve())}::{launch['kernel']}", launch["spec"])
    return found


def _missing_module(message: str) -> str | None:
    """The module a proof could not run without (``No module named 'torch_xla'``), if that stopped it."""
    found = re.search(r"did not run .*No module named '([^']+)'", message)
    return found.group(1) if found else None


def _file_verdicts(path: Path, rel: str, settings: Settings, tested: dict[str, str]) -> list[Verdict]:
    text = path.read_text(encoding="utf-8")
    found = kernels(text, str(path))
    try:
        migration = migrate_source(text, platform=file_target(str(path), settings).generation)
    except NotMigratable as exc:
        return [Verdict(f"{rel}::{k.name}", "not migratable", str(exc)) for k in found]
    ends = _ends(text)
    inputs = {
        k.name: _INPUTS.get(f"{rel}::{k.name}", _INPUTS.get(rel, tested.get(f"{rel}::{k.name}")))
        for k in found
    }
    proofs = {}
    with tempfile.TemporaryDirectory() as folder:  # the service writes nothing without --write; a copy anyway
        copy = Path(folder) / path.name
        shutil.copy(path, copy)
        for given in dict.fromkeys(inputs.values()):  # one run per distinct set of inputs
            for proof in migrate(str(copy), settings, inputs=given)["proofs"]:
                if inputs[proof["kernel"]] == given:
                    proofs[proof["kernel"]] = proof
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
            why = (
                "no inputs (no script or unit test launches it with arrays and numbers only, no spec comment, "
                "asserts do not pin shapes), or it calls a function with manual steps"
            )
            out.append(Verdict(name, "migrated, not proven", why))
        elif (missing := _missing_module(proof["message"])) is not None:
            # the file cannot even be imported here: nothing was compared, so nothing failed
            out.append(
                Verdict(name, "migrated, not proven", f"no inputs run: needs {missing} (not installed)")
            )
        else:
            out.append(Verdict(name, "proven" if proof["equivalent"] else "proof failed", proof["message"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a clone of aws-neuron/nki-samples holding commit 0898a77")
    parser.add_argument("--only", default="", help="only the files whose path contains this")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per unit-test case")
    args = parser.parse_args()
    settings = Settings(trusted_workspace=True)  # running the benchmark is the decision to run the corpus
    with tempfile.TemporaryDirectory() as folder:
        corpus = corpus_tree(args.repo, Path(folder))
        tested = _tested_inputs(corpus, args.timeout)
        verdicts: list[Verdict] = []
        for path in sorted((corpus / "src" / "nki_samples").rglob("*.py")):
            rel = str(path.relative_to(corpus))
            if args.only in rel and "neuronxcc" in path.read_text(encoding="utf-8"):
                verdicts.extend(_file_verdicts(path, rel, settings, tested))
    for v in verdicts:
        print(f"{v.status:22} {v.kernel}: {v.detail}")
    counts = collections.Counter(v.status for v in verdicts)
    total = len(verdicts)
    print(f"\nkernels: {total}; " + ", ".join(f"{s}: {n}" for s, n in counts.most_common()))
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
