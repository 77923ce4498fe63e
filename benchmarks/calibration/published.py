"""The measured kernels themselves, run unmodified: fetched at the table's commit, as their benchmark runs them.

AccelOpt's profiler (``samples/nki/profile_ropes.py``, ``profile_mambas.py``: ``_write_temp_kernel``) writes
the legacy ``neuronxcc.nki`` import header in front of a kernel's code and calls its ``kernel`` on
``transform_to_nki_inputs(get_inputs())`` of the NumPy reference module, comparing the output with ``forward``.
This module does the same: the kernel file is the fetched one behind that header (``mamba_optimized.py`` has no
imports of its own), written next to the fetch cache; the simulator infers the legacy NKI version from those
imports. The reference module fixes the shapes, so a published kernel runs at its measured shape only.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
from cases import Case
from fetch import CACHE

# AccelOpt's profiling header, as ``_write_temp_kernel`` writes it
HEADER = (
    "import numpy as np\n"
    "import neuronxcc.nki as nki\n"
    "import neuronxcc.nki.language as nl\n"
    "import neuronxcc.nki.typing as nt\n"
    "import neuronxcc.nki.isa as nisa\n"
    "from neuronxcc.nki import trace\n"
    "from neuronxcc.nki.language import par_dim\n\n"
)
KERNEL_NAME = "kernel"  # the name AccelOpt's profiler calls
TOLERANCE = 1e-4  # max |out - ref| / max |ref| for these FP32 kernels (our old translations' bound)
SEED = 7  # get_inputs draws from NumPy's global generator


def runnable(kernel_id: str, fetched: Path, runs: Path = CACHE / "run") -> Path:
    """The fetched kernel file behind AccelOpt's import header, written to ``runs/KERNEL_ID.py``."""
    runs.mkdir(parents=True, exist_ok=True)
    path = runs / f"{kernel_id}.py"
    path.write_text(HEADER + fetched.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def load_module(name: str, path: Path) -> types.ModuleType:
    """Import a fetched Python file as a module of its own."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def case(reference: types.ModuleType) -> Case:
    """The benchmark's own inputs: ``get_inputs`` (seeded), reshaped by ``transform_to_nki_inputs``."""
    np.random.seed(SEED)
    inputs = list(reference.get_inputs())
    # as given: arrays, and scalars such as add_rmsnorm_matmul's eps (a kernel argument, not an HBM tensor)
    args = tuple(reference.transform_to_nki_inputs(inputs))
    return Case(args, tuple(inputs), reference.forward, TOLERANCE)
