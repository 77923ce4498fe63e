"""Property: the interpreter computes integer expressions exactly like Python, through module constants,
local variables, helper parameters and loops, and NKI301 fires exactly when the result exceeds 128."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from valtest import only, run

_LEAVES = st.one_of(st.integers(min_value=1, max_value=300).map(str), st.sampled_from(["A", "B", "n"]))


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "//", "%"]), children).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    calls = st.tuples(st.sampled_from(["min", "max"]), children, children).map(
        lambda t: f"{t[0]}({t[1]}, {t[2]})"
    )
    return st.one_of(binary, calls)


EXPRS = st.recursive(_LEAVES, _combine, max_leaves=6)


def _python_value(expr: str, a: int, b: int, n: int) -> int | None:
    try:
        value = eval(expr, {"min": min, "max": max}, {"A": a, "B": b, "n": n})  # test oracle only
    except ZeroDivisionError:
        return None
    return value if isinstance(value, int) else None


@settings(max_examples=60, deadline=None)
@given(
    expr=EXPRS, a=st.integers(1, 200), b=st.integers(1, 200), n=st.integers(1, 200), via_loop=st.booleans()
)
def test_partition_dim_matches_python(expr: str, a: int, b: int, n: int, via_loop: bool) -> None:
    expected = _python_value(expr, a, b, n)
    body = f"    t = nl.ndarray(({expr}, 4), dtype=nl.float32)\n"
    if via_loop:  # an unrolled loop around the helper body changes nothing for a loop-invariant dim
        body = "    for _ in range(2):\n    " + body
    code = f"A = {a}\nB = {b}\n\ndef helper(n):\n{body}    return 0\n\n@nki.jit\ndef k(x):\n    helper({n})\n"
    found = only(run(code, select="NKI301"), "NKI301")
    if expected is None or expected <= 128:
        assert found == [], (expr, expected)
    else:
        assert len(found) == 1, (expr, expected)
        assert f"partition dim {expected} " in found[0].message
