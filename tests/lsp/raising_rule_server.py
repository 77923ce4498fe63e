"""Test-only server entry point: the real ``nki-studio serve`` with one extra rule, registered through the
engine's public ``rule`` decorator, whose check prints to stdout (which carries the protocol) and then
raises. Used by test_lsp_robustness.py."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from nki_studio.cli.main import main
from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.rule import Basis, rule

CODE = "NKI990"
NAME = "test-only-always-raises"


@rule(
    code=CODE,
    name=NAME,
    severity=Severity.ERROR,
    summary="test only: raises on every file",
    basis=Basis.INFERRED,
    bad="",
    good="",
)
def check(ctx: object) -> Iterable[Finding]:
    print("stray output from a rule", flush=True)  # must not reach the protocol stream
    raise RuntimeError("deliberate failure from the test rule")


if __name__ == "__main__":
    sys.exit(main(["serve"]))
