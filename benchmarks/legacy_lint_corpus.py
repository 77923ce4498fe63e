"""Out-of-the-box lint of a legacy ``neuronxcc.nki`` corpus: error findings per rule (target: none) and the
other findings with our verdict on each.

The corpus is aws-neuron/nki-samples at commit 0898a77 (2025-11-12, before its legacy kernels were removed),
cloned with ``git`` into a cache folder (``--cache``), or any folder given with ``--path``. Each ``.py`` file is
linted as ``nki-studio lint`` does it with no configuration (``nkilint.api.lint_paths``: the nearest
``pyproject.toml``, none in the corpus); a file is legacy when its imports name the legacy API
(``model.api_version``). Nothing of the corpus is copied into this repository. Prints figures; asserts nothing.

Run: ``.venv/bin/python benchmarks/legacy_lint_corpus.py [--path DIR | --cache DIR]``
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.api_version import legacy_evidence
from nki_studio.model.imports import ImportAliases
from nki_studio.nkilint.api import iter_python_files, lint_paths

REPO = "https://github.com/aws-neuron/nki-samples"
COMMIT = "0898a77"

# (file relative to the corpus, code) -> our verdict after reading the code at 0898a77. A finding of a code
# reported in a file not listed here is printed as "not judged yet".
JUDGED: dict[tuple[str, str], str] = {
    **{
        (file, "NKI120"): "real (info): print() of shapes/config in kernel code runs once, while tracing"
        for file in (
            "contributed/neuron-team-kernels/conv.py",
            "contributed/neuron-team-kernels/flash_paged_attn_varlen/utils.py",
        )
    },
    ("src/nki_samples/tutorials/attention_fwd_performance/test_attention.py", "NKI120"): (
        "false (info): a host-side test driver; kernel discovery counts it as kernel code because it calls "
        "nl.static_cast on its NumPy inputs"
    ),
}
NAMESPACE = "NKI208"  # the legacy namespace itself: a warning on every legacy import, by design


def fetch(cache: str) -> str:
    """The corpus at ``COMMIT`` in ``cache`` (cloned on first use)."""
    target = os.path.join(cache, f"nki-samples-{COMMIT}")
    if not os.path.isdir(os.path.join(target, ".git")):
        subprocess.run(["git", "clone", "--quiet", REPO, target], check=True)
    subprocess.run(["git", "-C", target, "checkout", "--quiet", COMMIT], check=True)
    return target


def is_legacy_file(path: str) -> bool:
    """Whether the file's imports name the legacy API (files importing both namespaces included)."""
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        aliases = ImportAliases.from_tree(ast.parse(source))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return False
    return legacy_evidence(aliases, source) is not None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--path", help="an already fetched corpus folder")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "nki-studio-corpus"))
    args = parser.parse_args()
    try:
        root = os.path.abspath(args.path) if args.path else fetch(args.cache)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"cannot fetch {REPO} at {COMMIT} ({exc}); pass an already fetched copy with --path")
        return 2

    files = sorted(iter_python_files([root]))
    legacy = [f for f in files if is_legacy_file(f)]
    started = time.perf_counter()
    findings: list[Finding] = lint_paths(legacy)
    seconds = time.perf_counter() - started

    print(f"corpus: {root}")
    print(f"python files: {len(files)}, legacy files: {len(legacy)}, lint: {seconds:.2f} s")
    by_rule = Counter((f.code, f.severity.value) for f in findings)
    print("findings per rule and severity (out of the box, no configuration):")
    for (code, severity), count in sorted(by_rule.items()):
        print(f"  {code} {severity:<8} {count}")
    errors = [f for f in findings if f.severity is Severity.ERROR]
    print(f"error-severity findings: {len(errors)} (target: 0 false errors)")
    for f in errors:
        print(f"  ERROR {_where(f, root)} {f.code}: {f.message}")
    print("other findings (the namespace warning aside) and our verdict:")
    for f in findings:
        if f.code == NAMESPACE or f.severity is Severity.ERROR:
            continue
        rel = os.path.relpath(f.path, root)
        verdict = JUDGED.get((rel, f.code), "not judged yet")
        print(f"  {_where(f, root)} {f.code} [{f.severity.value}]: {verdict}")
    return 0


def _where(f: Finding, root: str) -> str:
    return f"{os.path.relpath(f.path, root)}:{f.span.line}"


if __name__ == "__main__":
    sys.exit(main())
