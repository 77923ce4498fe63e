"""``nl.if_else`` under a runtime condition: the untaken callback is traced (Python side effects, instruction
checks) but not executed (no writes, no trace events, no DMA, no register changes)."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest
from nki_studio.model.targets import NkiVersion, Target
from nki_studio.sim import api, context
from nki_studio.sim import language as nl
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.scalars import NkiScalar, VirtualRegister

V07 = Target(nki_version=NkiVersion(0, 7))

KERNEL = """
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def kernel(flag, data):
    flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=flag_sb, src=flag)
    condition = nisa.scalar_load(flag_sb) > 0
    result = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=result, src=data)
    out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=result)

    def then_branch():
        print("traced then")
        nisa.tensor_scalar(result, result, op0=nl.add, operand0=10.0)
        nisa.dma_copy(dst=out, src=result)

    def else_branch():
        print("traced else")
        nisa.tensor_scalar(result, result, op0=nl.subtract, operand0=10.0)
        nisa.dma_copy(dst=out, src=result)

    nl.if_else(condition, then_branch, else_branch)
    return out
"""


def _run(tmp_path: pathlib.Path, source: str, flag: int, **options: object) -> api.SimResult:
    path = tmp_path / "k.py"
    path.write_text(source)
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    return api.simulate(str(path), np.array([[flag]], np.int32), data, **options)  # type: ignore[arg-type]


def test_both_callbacks_run_their_python_side_effects_but_only_the_taken_one_executes(tmp_path, capsys):
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    for flag, expect in ((3, data + 10), (0, data - 10)):
        result = _run(tmp_path, KERNEL, flag, trace=True)
        np.testing.assert_array_equal(result.output, expect)  # the untaken branch neither computes nor DMAs
        # both prints, in tracing order, whichever branch is taken
        assert capsys.readouterr().out.split("\n")[:2] == ["traced then", "traced else"]
        ops = [event.op for event in result.report.trace]
        # 4 before the branch (dma, scalar_load, dma, dma) + the taken branch's 2: the untaken branch adds no
        # trace event and no instruction to the count the estimate reads
        assert ops.count("nisa.tensor_scalar") == 1 and ops.count("nisa.dma_copy") == 4
        assert result.report.instructions == 6 == len(ops)


def test_an_invalid_instruction_in_the_untaken_branch_is_reported_at_its_line(tmp_path):
    bad = KERNEL.replace(
        "nisa.tensor_scalar(result, result, op0=nl.subtract, operand0=10.0)",
        "nisa.tensor_scalar(result, result[0:1, :], op0=nl.subtract, operand0=10.0)",
    )
    line = (
        bad.splitlines().index(
            "        nisa.tensor_scalar(result, result[0:1, :], op0=nl.subtract, operand0=10.0)"
        )
        + 1
    )
    with pytest.raises(HardwareLimitError) as err:
        _run(tmp_path, bad, 5)  # then is taken: the bad instruction is in the untaken else branch
    assert err.value.line == line and err.value.file == str(tmp_path / "k.py")
    assert "untaken branch of nl.if_else" in str(err.value) and "partitions" in str(err.value)
    with pytest.raises(HardwareLimitError, match="partitions") as taken:
        _run(tmp_path, bad, 0)  # the same instruction, taken: the plain error
    assert "untaken" not in str(taken.value)


def test_run_time_checks_do_not_fire_in_the_untaken_branch(tmp_path):
    # An on-device offset past the tensor fails when accessed (and strict mode refuses a never-written read);
    # neither access happens on the untaken path.
    source = KERNEL.replace(
        '        print("traced else")\n',
        '        print("traced else")\n'
        "        never = nl.ndarray((2, 4), dtype=nl.float32, buffer=nl.sbuf)\n"
        "        nisa.tensor_copy(dst=result, src=never)\n"
        "        far = nisa.scalar_load(flag_sb) + 100\n"
        "        nisa.dma_copy(dst=result[0:1, :], src=data.ap([[4, 1], [1, 4]], scalar_offset=far))\n",
    )
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    result = _run(tmp_path, source, 1, strict=True)
    np.testing.assert_array_equal(result.output, data + 10)
    with pytest.raises(SimulationError):
        _run(tmp_path, source, 0, strict=True)  # taken, the same code fails


def test_untaken_loops_registers_and_prints_are_traced_not_run():
    with context.session(target=V07) as ctx:
        reg = VirtualRegister(7)
        bodies: list[int] = []

        def untaken_body() -> None:
            nl.fori_loop(0, 5, lambda i: bodies.append(i.value))  # traced once
            nl.while_loop(VirtualRegister(1), lambda r: (bodies.append(-1), VirtualRegister(0))[1])  # once
            from nki_studio.sim import isa as nisa

            nisa.register_move(reg, 99)
            nl.device_print("never", reg)
            loaded = nisa.register_alloc()
            nisa.register_load(loaded, nl.zeros((1, 1), dtype=nl.int32, buffer=nl.sbuf))  # traced, not run
            nl.fori_loop(0, loaded, lambda i: bodies.append(100))  # its unset bound is no error here

        nl.if_else(NkiScalar(0) > 0, untaken_body)
        assert bodies == [0, -1, 100] and reg.value == 7
        assert "device_print" not in ctx.shared and ctx.instructions == 0
        nl.if_else(NkiScalar(1), untaken_body)  # taken: everything runs
        assert bodies[3:] == [0, 1, 2, 3, 4, -1] and reg.value == 99  # the loaded bound is 0: no iteration


def test_nested_and_static_conditions():
    with context.session(target=V07):
        seen: list[str] = []

        def outer_untaken() -> None:
            # inside an untaken branch both callbacks of a runtime if_else are traced, and a static one
            # still calls only the selected callback (resolved at compile time)
            nl.if_else(NkiScalar(1), lambda: seen.append("inner-then"), lambda: seen.append("inner-else"))
            nl.if_else(False, lambda: seen.append("static-then"), lambda: seen.append("static-else"))

        nl.if_else(NkiScalar(1), lambda: seen.append("outer-then"), outer_untaken)
        assert seen == ["outer-then", "inner-then", "inner-else", "static-else"]
        assert context.current_core().untaken == 0


def test_an_instruction_without_an_untaken_entry_is_an_internal_error_not_a_silent_skip():
    with context.session(target=V07):

        def undeclared() -> None:
            context.issue("nisa.fake", "vector")

        with pytest.raises(SimulationError, match=r"internal: nisa\.fake"):
            nl.if_else(NkiScalar(0), undeclared)


_SIM = pathlib.Path(__file__).resolve().parents[2] / "server" / "sim"
_DECORATORS = {"instruction", "tile_instruction", "effect_instruction"}
# Functions that call issue and handle the untaken branch themselves, each with its reason.
_EXPLICIT = {"scalar_load": "returns an NkiScalar of unknown value before issue"}


def _issues(fn: ast.FunctionDef, issuers: set[str]) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "issue" and getattr(f.value, "id", "") == "context":
                return True
            if isinstance(f, ast.Name) and f.id in issuers:
                return True
    return False


def test_every_function_that_issues_an_instruction_declares_its_untaken_result():
    """A new instruction without a ``sim.untaken`` decorator would stop the untaken callback; this finds it
    before a kernel does. Private helpers may go undecorated when every caller in their module is."""
    missing = []
    for path in _SIM.rglob("*.py"):
        tree = ast.parse(path.read_text())
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        decorated = {
            fn.name
            for fn in functions
            for d in fn.decorator_list
            if isinstance(d, ast.Attribute)
            and d.attr in _DECORATORS
            and getattr(d.value, "id", "") == "untaken"
        }
        issuers: set[str] = set()  # reach issue directly or through an undecorated helper of the module
        changed = True
        while changed:
            changed = False
            for fn in functions:
                if fn.name not in issuers and _issues(fn, issuers - decorated):
                    issuers.add(fn.name)
                    changed = True
        for fn in functions:
            if fn.name not in issuers or fn.name in _EXPLICIT:
                continue
            callers = [f for f in functions if f is not fn and _issues(f, {fn.name})]
            covered = fn.name.startswith("_") and callers
            if fn.name not in decorated and not covered:
                missing.append(f"{path.relative_to(_SIM)}:{fn.name}")
    assert missing == []
