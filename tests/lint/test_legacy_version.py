"""The NKI API a file is written for, read from its imports (``model.api_version``): legacy ``neuronxcc.nki``
code is linted with the legacy meaning when no setting names the version, and every finding says so."""

from __future__ import annotations

from dataclasses import replace

from nki_studio.core.findings import Severity
from nki_studio.model.targets import NEWEST_VERSION, Target
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.incremental import IncrementalLinter
from nkilint_testutil import codes, lint

LEGACY_FILE = """from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    for j in nl.affine_range(2):
        t = nl.load(a[i, j])
        nl.store(out[i, j], t)
    return out


def launch(a):
    return kernel[2, 2](a)
"""

CURRENT_LAUNCH = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out


def launch(a):
    return kernel[2, 2](a)
"""

MIXED = """import nki
import nki.isa as nisa
import nki.language as nl
import neuronxcc.nki as legacy
import neuronxcc.nki.language as lnl


@legacy.jit
def old_kernel(a):
    out = lnl.ndarray(a.shape, dtype=a.dtype, buffer=lnl.shared_hbm)
    lnl.store(out, lnl.load(a))
    return out


@nki.jit
def new_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = lnl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


def launch(a):
    return old_kernel[2, 2](a)
"""


def test_legacy_file_is_linted_as_legacy_code_without_errors() -> None:
    found = lint(LEGACY_FILE)
    assert not [f for f in found if f.severity is Severity.ERROR], found
    # the namespace is a warning with the migration hint, and no 0.7 meaning of the SPMD bracket
    assert set(codes(found)) == {"NKI208"}
    assert [f.span.line for f in found] == [1, 2]
    assert all("migrate it to NKI 0.7" in f.message for f in found)
    assert all(
        "legacy neuronxcc.nki assumed from `from neuronxcc import nki` on line 1" in f.message for f in found
    )


def test_named_version_keeps_the_current_meaning() -> None:
    found = lint(LEGACY_FILE, "0.7")
    errors = {f.code for f in found if f.severity is Severity.ERROR}
    assert "NKI208" in errors and "NKI513" in errors, found
    assert "NKI211" in codes(found)
    assert not any("assumed" in f.message for f in found)


def test_version_named_legacy_reports_nothing_about_the_namespace() -> None:
    assert "NKI208" not in codes(lint(LEGACY_FILE, "legacy"))


def test_installed_toolchain_does_not_override_legacy_imports() -> None:
    config = LintConfig(
        target=Target(nki_version=NEWEST_VERSION), nki_version_set=True, nki_version_detected=True
    )
    found = lint_source(LEGACY_FILE, "/nonexistent/kernel.py", config)
    assert not [f for f in found if f.severity is Severity.ERROR], found
    flagged = replace(config, nki_version_detected=False)  # a pyproject key or flag named it
    assert "NKI513" in codes(lint_source(LEGACY_FILE, "/nonexistent/kernel.py", flagged))


def test_spmd_bracket_of_current_code_still_reported() -> None:
    found = lint(CURRENT_LAUNCH)
    assert {"NKI211", "NKI513"} <= set(codes(found))


def test_mixed_file_decides_per_kernel() -> None:
    found = lint(MIXED)
    errors = [f for f in found if f.severity is Severity.ERROR]
    # the current kernel's legacy name is the compile error; the legacy kernel's names and launch grid are not
    assert [(f.code, f.span.line) for f in errors] == [("NKI208", 18)], found
    assert "NKI211" not in codes(found) and "NKI513" not in codes(found)
    assert not any("assumed" in f.message for f in found)  # the file's version is the current one


def test_incremental_lint_infers_the_same_version() -> None:
    config = LintConfig(target=Target(nki_version=NEWEST_VERSION))
    linter = IncrementalLinter("/nonexistent/kernel.py")
    assert linter.lint(LEGACY_FILE, config) == lint_source(LEGACY_FILE, "/nonexistent/kernel.py", config)
    assert linter.lint(LEGACY_FILE, config)[0].message.endswith("(no setting names the NKI version)")


LEGACY_HEADER = (
    "import neuronxcc.nki as nki\nimport neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl\n"
)


def _legacy_kernel(body: str) -> list[str]:
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return codes(lint(LEGACY_HEADER + "\n\n@nki.jit\ndef kernel(a):\n" + lines + "    return a\n"))


def test_one_d_arange_index_only_where_the_index_stays_1d() -> None:
    assert "NKI302" in _legacy_kernel("t = nl.load(a[nl.arange(64), 0])")
    assert "NKI302" not in _legacy_kernel("i = nl.arange(64)\ni = i[:, None]\nt = nl.load(a[i, 0])")
    assert "NKI302" not in _legacy_kernel("i = nl.arange(64)\nt = nl.load(a[i[:, None], 0])")


def test_discarded_legacy_result_is_reported_in_legacy_code_only() -> None:
    assert "NKI514" in _legacy_kernel("t = nl.load(a)\nnisa.nc_matmul(t, t)")
    assert "NKI514" not in _legacy_kernel("t = nl.load(a)\nr = nisa.nc_matmul(t, t)")
    current = "import nki\nimport nki.isa as nisa\n\n\n@nki.jit\ndef kernel(a, b):\n    nisa.activation(b, op=None, data=a)\n"
    assert "NKI514" not in codes(lint(current))


def test_legacy_only_rules_follow_the_kernel_in_a_mixed_file() -> None:
    mixed = MIXED.replace(
        "    lnl.store(out, lnl.load(a))\n",
        "    lnl.store(out, lnl.load(a))\n    lnisa.activation(op=lnl.exp, data=a)\n",
    ).replace(
        "import neuronxcc.nki.language as lnl\n",
        "import neuronxcc.nki.language as lnl\nimport neuronxcc.nki.isa as lnisa\n",
    )
    found = [(f.code, f.span.line) for f in lint(mixed) if f.code == "NKI514"]
    assert found == [("NKI514", 13)]  # in the legacy kernel; named 0.7, the file is current code
    note = "this function: legacy neuronxcc.nki assumed from `import neuronxcc.nki as legacy` on line 4"
    assert all(note in f.message for f in lint(mixed) if f.code == "NKI514")
    assert "NKI514" not in codes(lint(mixed, "0.7"))
