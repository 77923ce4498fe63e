"""nki-studio remote profiling harness: compile and run one ``@nki.jit`` kernel so its NEFF is kept.

Uploaded to the Trn2 host next to ``spec.json`` and run as ``python3 harness.py spec.json`` with
``NKI_ARTIFACTS_DIR`` set (the compiled NEFF lands in ``$NKI_ARTIFACTS_DIR/kernel.neff``, profile-formats
README §4), ``NEURON_FRAMEWORK_DEBUG=1`` and ``NKI_DEBUG_INFO=True`` (source locations in the NEFF).
Self-contained on purpose: it needs only the standard library, NumPy, ml_dtypes for bfloat16/FP8 and the
host's ``nki``. All names (kernel file, kernel) are data read from ``spec.json``, never code.

Inputs are drawn like nki-studio's simulator does (``nki_studio.verify.inputs``: one seeded generator,
arguments in order, normal floats rounded once, small integers), so a profile runs the same data a
simulation did.
"""

import importlib.util
import json
import os
import sys
from typing import Any

import numpy as np

NEFF_MARKER = "NKI_STUDIO_NEFF "
_ML = ("bfloat16", "float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu")


def _dtype(name: str) -> Any:
    if name in _ML:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype("float32" if name == "tfloat32" else name)


def _tensor(dtype_name: str, shape: tuple, rng: Any) -> Any:
    dtype = _dtype(dtype_name)
    if dtype_name == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -8, 8, size=shape).astype(dtype)
    values = rng.standard_normal(size=shape, dtype=np.float64 if dtype_name == "float64" else np.float32)
    if dtype_name == "float8_e8m0fnu":
        values = np.exp2(np.round(values * 2))
    return values.astype(dtype)


def make_args(spec: dict) -> list:
    """Arguments in call order from ``spec["args"]`` (``{"dtype", "shape"}`` tensors or plain scalars)."""
    rng = np.random.default_rng(spec.get("seed", 0))
    out = []
    for _name, value in spec["args"]:
        out.append(_tensor(value["dtype"], tuple(value["shape"]), rng) if isinstance(value, dict) else value)
    return out


def main(argv: list) -> int:
    with open(argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    artifacts = os.environ.get("NKI_ARTIFACTS_DIR")
    if not artifacts:
        print("nki-studio harness: NKI_ARTIFACTS_DIR is not set", file=sys.stderr)
        return 2
    os.makedirs(artifacts, exist_ok=True)
    path = os.path.abspath(spec["kernel_file"])
    sys.path.insert(0, os.path.dirname(path))  # the kernel's own imports of sibling files
    loader_spec = importlib.util.spec_from_file_location("nki_studio_remote_kernel", path)
    if loader_spec is None or loader_spec.loader is None:
        print(f"nki-studio harness: cannot import {path}", file=sys.stderr)
        return 2
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[loader_spec.name] = module
    loader_spec.loader.exec_module(module)
    kernel = getattr(module, spec["kernel"])
    if spec.get("lnc", 1) > 1:
        kernel = kernel[spec["lnc"]]
    kernel(*make_args(spec))  # compiles (NEFF kept in NKI_ARTIFACTS_DIR) and runs once
    neff = os.path.join(artifacts, "kernel.neff")
    if not os.path.isfile(neff):
        print(
            f"nki-studio harness: the kernel ran but no NEFF was written to {neff}; is this nki version "
            "honouring NKI_ARTIFACTS_DIR?",
            file=sys.stderr,
        )
        return 3
    print(NEFF_MARKER + neff, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
