"""Lint sizes allocations with the shapes and dtypes of the kernel's simulate spec (issue 29 item 3): a buffer
declared with ``dtype=x.dtype`` is known under the spec, so NKI401/NKI402 fire on it — in the editor's lint (with
its incremental re-check when only the spec changes), the CLI/MCP lint of a text and of files."""

from __future__ import annotations

from pathlib import Path

from nki_studio.core.findings import Finding
from nki_studio.model.targets import parse_generation
from nki_studio.nkilint.incremental import IncrementalLinter
from nki_studio.service.lint import document_config, lint_document, lint_files, lint_text
from nki_studio.service.settings import Settings

# Two SBUF tiles of x's shape and dtype, both live at the tensor_copy: 2 * 4 B * 30000 = 240,000 B per partition,
# 104.6 % of trn2's 224 KiB in float32; half of that in bfloat16.
KERNEL = """\
import nki
import nki.language as nl
import nki.isa as nisa

# nki-studio: simulate x={dtype}[128,30000]
@nki.jit
def double_buffer(x):
    n = x.shape[1]
    a = nl.ndarray((128, n), dtype=x.dtype, buffer=nl.sbuf)
    b = nl.ndarray((128, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=x)
    nisa.tensor_copy(dst=b, src=a)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=b)
    return out
"""

TRN2 = Settings(target=parse_generation("trn2"))


def _sbuf(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.code == "NKI401"]


def test_spec_dtype_makes_an_over_capacity_allocation_an_nki401(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    _, findings = lint_text(KERNEL.format(dtype="float32"), str(path), TRN2)
    (f,) = _sbuf(findings)
    assert "234.4 KiB" in f.message and "(128, 30000) float32" in f.message
    # the share of the capacity, worded as the allocation hover words it (model.capacity.capacity_share)
    assert "(104.6% of SBUF per partition)" in f.message


def test_spec_dtype_that_fits_gives_no_nki401(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    _, findings = lint_text(KERNEL.format(dtype="bfloat16"), str(path), TRN2)
    assert not _sbuf(findings)


def test_without_a_spec_the_dtype_stays_unknown(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    text = KERNEL.format(dtype="float32").replace("# nki-studio: simulate x=float32[128,30000]\n", "")
    _, findings = lint_text(text, str(path), TRN2)
    assert not _sbuf(findings)


def test_editor_lint_rechecks_the_kernel_when_only_its_spec_changes(tmp_path: Path) -> None:
    path = str(tmp_path / "kernel.py")
    linter = IncrementalLinter(path)
    for dtype, expected in (("bfloat16", 0), ("float32", 1), ("bfloat16", 0)):
        text = KERNEL.format(dtype=dtype)
        config, problem = document_config(path, TRN2, text)
        assert len(_sbuf(lint_document(linter, text, config, problem))) == expected, dtype


def test_lint_of_files_reads_each_files_spec(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text(KERNEL.format(dtype="float32"))
    (tmp_path / "small.py").write_text(KERNEL.format(dtype="bfloat16"))
    found = _sbuf(lint_files([str(tmp_path)], TRN2))
    assert [Path(f.path).name for f in found] == ["big.py"]
