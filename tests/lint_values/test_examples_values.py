"""The project's example kernels are analysed for real (not vacuously clean): their tiles get sizes."""

from __future__ import annotations

import pathlib

from nki_studio.model.analysis import describe_allocations, interpret_source
from nki_studio.model.targets import Target

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_tiled_matmul_tiles_are_sized() -> None:
    path = EXAMPLES / "tiled_matmul.py"
    allocs = describe_allocations(path.read_text(encoding="utf-8"), str(path), Target())
    psum = [a for a in allocs if a.buffer == "psum"]
    assert psum and all(a.shape == (128, 512) and a.bytes_per_partition == 2048 for a in psum)


def test_every_example_kernel_is_interpreted_to_the_end() -> None:
    kernels = 0
    for path in sorted(EXAMPLES.glob("*.py")):
        facts = interpret_source(path.read_text(encoding="utf-8"), str(path), Target())
        assert facts is not None, path
        for root in facts.roots:
            assert root.complete, (path, root.name)
            kernels += root.is_kernel
    assert kernels >= 10
