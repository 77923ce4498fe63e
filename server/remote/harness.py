"""Harness generation: the files uploaded to the host for one kernel (script, spec, kernel sources)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nki_studio.verify.spec import SimSpec, TensorSpec

HARNESS_NAME = "harness.py"
SPEC_NAME = "spec.json"
SOURCE_DIR = "src"


def harness_text() -> str:
    """The self-contained script run on the host (``harness_script.py`` of this package, verbatim)."""
    return (Path(__file__).with_name("harness_script.py")).read_text(encoding="utf-8")


def harness_spec(spec: SimSpec, kernel_path: str) -> dict[str, Any]:
    """``spec.json``: kernel file (``kernel_path`` relative to ``src/``), kernel name, arguments, seed, lnc."""
    if not spec.kernel.isidentifier():
        raise ValueError(f"not a kernel name: {spec.kernel!r}")
    args: list[list[Any]] = []
    for name, value in spec.args:
        if isinstance(value, TensorSpec):
            args.append([name, {"dtype": value.dtype, "shape": list(value.shape)}])
        else:
            args.append([name, value])
    return {
        "kernel_file": f"{SOURCE_DIR}/{kernel_path}",
        "kernel": spec.kernel,
        "args": args,
        "seed": spec.seed,
        "lnc": spec.lnc,
    }


def relative_kernel_path(kernel_file: Path, source_root: Path) -> str:
    """The kernel's path under ``src/``: relative to ``source_root`` (e.g. the workspace folder) when inside it,
    else just its name. Mirroring the workspace layout keeps the recorded paths unambiguous when several
    workspace files share the kernel's file name."""
    try:
        return kernel_file.relative_to(source_root).as_posix()
    except ValueError:
        return kernel_file.name


def stage_job(directory: Path, kernel_file: Path, spec: SimSpec, source_root: Path | None = None) -> Path:
    """Write the upload tree into ``directory``: ``harness.py``, ``spec.json``, ``src/<relative path of the kernel
    file>`` plus the ``.py`` files next to it (kernels import their helpers). Returns ``directory``."""
    rel = relative_kernel_path(kernel_file, source_root or kernel_file.parent)
    target = directory / SOURCE_DIR / rel
    target.parent.mkdir(parents=True)
    for sibling in sorted(kernel_file.parent.glob("*.py")):
        if sibling.is_file():
            (target.parent / sibling.name).write_bytes(sibling.read_bytes())
    target.write_bytes(kernel_file.read_bytes())
    (directory / HARNESS_NAME).write_text(harness_text(), encoding="utf-8")
    (directory / SPEC_NAME).write_text(json.dumps(harness_spec(spec, rel), indent=1), encoding="utf-8")
    return directory
