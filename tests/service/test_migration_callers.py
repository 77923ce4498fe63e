"""``service.migration_callers``: sub-kernels without inputs of their own proven through the proofs of the
kernels calling them, when those proofs ran them (real simulations of both versions)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

from nki_studio.protocol.migration import KernelProof, MigrationResult
from nki_studio.service.migration import migrate
from nki_studio.service.migration_callers import ran, through_callers, unproven_callers
from nki_studio.service.settings import Settings

TRUSTED = Settings(trusted_workspace=True)

# outer -> twice -> double_tile run on outer's inputs; wide_only is called only for inputs wider than these;
# lonely is called only by a kernel without inputs.
CALLED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def double_tile(x, out):
    y = nl.load(x)
    nl.store(out, value=y + y)


@nki.jit
def twice(x, out):
    double_tile(x, out)


@nki.jit
def wide_only(x, out):
    nl.store(out, value=nl.load(x) * 3)


# nki-studio: simulate a=float32[128,64]
@nki.jit
def outer(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    twice(a, out)
    if a.shape[1] > 512:
        wide_only(a, out)
    return out


@nki.jit
def lonely(x, out):
    nl.store(out, value=nl.load(x) - 1)


@nki.jit
def unlaunched(a, out):
    lonely(a, out)
"""

# Legacy semantics divide an int32 tile differently from 0.7's (tests/service/test_migration.py): the caller's
# proof fails, and so does the sub-kernel's.
FAILS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def third(x, y, out):
    nl.store(out, value=nl.divide(nl.load(x), 3) + nl.load(y))


# nki-studio: simulate a=int32[128,64] b=float16[128,64]
@nki.jit
def k(a, b):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    third(a, b, out)
    return out
"""


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_sub_kernels_are_proven_through_the_callers_whose_proofs_ran_them(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(textwrap.dedent(CALLED))
    proofs = {p["kernel"]: p for p in result["proofs"]}
    assert proofs["outer"]["equivalent"] and proofs["outer"]["through"] == []
    # the functions whose lines issued instructions or called one that did; wide_only's branch was not taken
    assert proofs["outer"]["ran"] == ["double_tile", "outer", "twice"]
    for name in ("twice", "double_tile"):  # twice has no proof of its own either: followed up to outer
        assert proofs[name]["equivalent"] and proofs[name]["through"] == ["outer"]
        assert proofs[name]["message"] == f"{name}: equivalent through outer on 3 inputs"
    assert "wide_only" not in proofs and "lonely" not in proofs and "unlaunched" not in proofs
    own = [p for p in result["proofs"] if not p["through"]]
    assert unproven_callers(CALLED, own, "wide_only") == "its callers' proofs did not run it: outer"
    assert unproven_callers(CALLED, own, "lonely") == "its callers are not proven: unlaunched"
    assert unproven_callers(CALLED, own, "unlaunched") is None  # nothing calls it: its own inputs are missing


def test_a_failed_caller_proof_fails_its_sub_kernels(tmp_path: Path) -> None:
    result = migrate(str(_file(tmp_path, FAILS)), TRUSTED)
    assert result["status"] == "proof_failed"
    proofs = {p["kernel"]: p for p in result["proofs"]}
    assert not proofs["k"]["equivalent"] and not proofs["third"]["equivalent"]
    assert proofs["third"]["through"] == ["k"]
    assert proofs["third"]["message"].startswith(
        "third: not proven through k, whose proof failed: k: not equivalent"
    )


def _proof(kernel: str, equivalent: bool, executed: list[str]) -> KernelProof:
    message = f"{kernel}: equivalent on 3 inputs" if equivalent else f"{kernel}: not equivalent"
    return {
        "kernel": kernel, "inputs": 3, "equivalent": equivalent, "exact": True, "message": message,
        "ran": executed, "through": [],
    }  # fmt: skip


def test_every_caller_must_have_run_it() -> None:
    text = "def a():\n    leaf()\n\n\ndef b():\n    leaf()\n\n\ndef leaf():\n    pass\n"
    both = [_proof("a", True, ["leaf"]), _proof("b", True, ["leaf"])]
    assert [p["message"] for p in through_callers(text, both, ["leaf"])] == [
        "leaf: equivalent through a, b on 3 inputs"
    ]
    one = [_proof("a", True, ["leaf"]), _proof("b", True, [])]
    assert through_callers(text, one, ["leaf"]) == []
    assert unproven_callers(text, one, "leaf") == "its callers' proofs did not run it: b"
    assert through_callers(text, both[:1], ["leaf"]) == []  # b is not proven
    assert unproven_callers(text, both[:1], "leaf") == "its callers are not proven: b"


def test_ran_reads_the_lines_of_the_file_only() -> None:
    text = "def a():\n    b()\n\n\ndef b():\n    x = 1\n"
    assert ran(text, "/k.py", [("/k.py", 6), ("/other.py", 2)]) == {"b"}
    assert ran(text, "/k.py", [("/k.py", 2)]) == {"a"}
