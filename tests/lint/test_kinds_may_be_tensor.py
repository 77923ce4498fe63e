"""``model.kinds.may_be_tensor``: the expression forms ``FunctionKinds.of`` can never call a tensor, whatever the
names' kinds, which NKI111 skips without classifying a function's names."""

from __future__ import annotations

import ast
import itertools

from nki_studio.model.kinds import FunctionKinds, Kind, may_be_tensor

_NAMES = {"t": Kind.TENSOR, "r": Kind.REGISTER, "g": Kind.GRID}
_ATOMS = ("t", "r", "g", "u", "1", "t[0]", "g[0]", "g.data", "t.reshape((1, 2))", "r.x")
_FORMS = (
    "{a}",
    "-{a}",
    "+{a}",
    "~{a}",
    "not {a}",
    "{a} + {b}",
    "{a} * {b}",
    "{a} == {b}",
    "{a} < {b} <= {b}",
    "{a} is {b}",
    "{a} in {b}",
    "{a} and {b}",
    "{a} if {b} else {a}",
    "({a}, {b})",
    "[{a}]",
    "{a}[{b}]",
    "({a}).data",
    "-({a} + {b})",
    "f({a})",
    "lambda: {a}",
    "{a} @ {b}",
)


def _expressions() -> list[ast.expr]:
    out = []
    for form, a, b in itertools.product(_FORMS, _ATOMS, _ATOMS):
        out.append(ast.parse(form.format(a=a, b=b), mode="eval").body)
    return out


def test_of_calls_only_may_be_tensor_forms_tensors() -> None:
    exprs = _expressions()
    for has_registers in (False, True):
        kinds = FunctionKinds(kinds=dict(_NAMES), has_registers=has_registers)
        tensors = [e for e in exprs if kinds.of(e) is Kind.TENSOR]
        assert tensors  # the check has something to check
        for expr in tensors:
            assert may_be_tensor(expr), ast.unparse(expr)


def test_arithmetic_and_comparisons_are_never_tensors() -> None:
    for text in ("t + t", "t == 1", "not t", "t and t", "1", "t if t else t"):
        assert not may_be_tensor(ast.parse(text, mode="eval").body), text
    assert may_be_tensor(ast.parse("-t", mode="eval").body)
