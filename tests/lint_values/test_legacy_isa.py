"""Legacy value-returning ISA calls (``model.legacy_isa``): ``res = nisa.nc_matmul(stationary, moving)``
returns a float32 PSUM tile ``(M, N)`` checked by the operand rules like a ``dst=`` call."""

from __future__ import annotations

from nki_studio.core.findings import Finding
from nki_studio.model.targets import LEGACY, Target
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig

HEADER = (
    "import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.isa as nisa\n"
    "import neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef kernel(a, b):\n"
    "    i_k, i_m = nl.mgrid[0:128, 0:{m}]\n    j_k, j_n = nl.mgrid[0:{k}, 0:{n}]\n"
    "    lhs = nl.load(a[i_k, i_m])\n    rhs = nl.load(b[j_k, j_n])\n"
)


def _lint(body: str, m: int = 128, k: int = 128, n: int = 512) -> list[Finding]:
    code = HEADER.format(m=m, k=k, n=n) + "".join(f"    {line}\n" for line in body.splitlines())
    config = LintConfig(
        target=Target(nki_version=LEGACY), nki_version_set=True, select=("NKI3", "NKI4", "NKI5")
    )
    return lint_source(code, "/nonexistent/kernel.py", config)


def test_matmul_result_and_limits() -> None:
    assert _lint("res = nisa.nc_matmul(lhs, rhs)\nreturn res") == []
    wide = _lint("res = nisa.nc_matmul(lhs, rhs)\nreturn res", m=256)
    assert {f.code for f in wide} == {
        "NKI501",
        "NKI301",
    }  # M = 256: the stationary and the result's partitions
    mismatch = _lint("res = nisa.nc_matmul(stationary=lhs, moving=rhs)\nreturn res", k=64)
    assert [f.code for f in mismatch] == ["NKI501"] and "differ" in mismatch[0].message


def test_elementwise_result_has_the_input_shape() -> None:
    assert _lint("r = nisa.activation(op=nl.exp, data=rhs)\nreturn r") == []
    found = _lint("r = nisa.activation(op=nl.exp, data=rhs)\ns = nisa.tensor_copy(r)\nreturn s", k=192)
    # the loads and both results have 192 partitions; each is reported where it is made
    assert [f.span.line for f in found if f.code == "NKI301"] == [12, 13, 14]
