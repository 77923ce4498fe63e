"""``service.migration`` proving legacy kernels it could not run before: a file importing modules not installed
here (nki-samples' softmax kernel imports torch_xla, its SD attention tutorial scipy, for code outside the kernel:
the proof binds stand-ins when the kernel does not use them, says so, and still fails a kernel that does), a kernel
taking a shape tuple (nki-samples' transpose2d: ``name=(a,b)`` in the spec), and PSUM block tiles beyond PSUM
(nki-samples' attention tutorial v3 keeps 256: the legacy compiler allocated each block apart, the migrated
kernel keeps a list of tiles)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest
from nki_studio.protocol.migration import MigrationResult
from nki_studio.service.absent_imports import stand_in
from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings

TRUSTED = Settings(trusted_workspace=True)


def proven_on_seeds(result: MigrationResult) -> MigrationResult:
    """``result`` (a proven migration) proven on its three seeded input sets (its one kernel)."""
    (proof,) = result["proofs"]
    assert proof["equivalent"] and proof["inputs"] == 3
    return result


ABSENT = "nki_studio_absent_module_for_tests"  # installed nowhere

KERNEL = f"""\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import {ABSENT}.core.model as xm
from {ABSENT}.special import (
    softmax,
)


# nki-studio: simulate x=float32[128,64]
@nki.jit
def row_softmax(x):
    # out = softmax(x) over each row, with the legacy index tiles
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(x[i_p, i_f])
    e = nl.exp(nl.subtract(t, nl.max(t, axis=[1], keepdims=True)))
    nl.store(out[i_p, i_f], value=nl.divide(e, nl.sum(e, axis=[1], keepdims=True)))
    return out


def reference(x):
    return softmax(x, axis=-1)
"""


def test_the_absent_module_is_really_absent() -> None:
    assert importlib.util.find_spec(ABSENT) is None


def test_imports_the_kernel_does_not_use_become_stand_ins_and_the_kernel_is_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = proven_on_seeds(prove_migration(KERNEL))
    message = result["proofs"][0]["message"]
    assert f"stand-ins for {ABSENT}: not installed here, unused by the kernel" in message
    # the written migration keeps the imports as they were: only the proof's copies stand in
    assert f"import {ABSENT}.core.model as xm" in result["migrated"]


def test_stand_ins_keep_line_numbers_and_present_imports() -> None:
    text, absent = stand_in(KERNEL, "kernel.py", "row_softmax")
    assert absent == (ABSENT,)
    assert len(text.splitlines()) == len(KERNEL.splitlines())
    lines = text.splitlines()
    assert lines[0] == "import numpy as np" and lines[1] == "import neuronxcc.nki as nki"
    assert lines[3].endswith(f"xm = _nki_studio_absent.Absent('{ABSENT}.core.model')")
    assert lines[4].endswith(f"softmax = _nki_studio_absent.Absent('{ABSENT}.special.softmax')")


def test_a_kernel_using_an_absent_module_keeps_its_import(tmp_path: Path) -> None:
    uses = KERNEL.replace("    return out\n", "    xm.mark_step()\n    return out\n", 1)
    assert stand_in(uses, "kernel.py", "row_softmax") == (uses, ())
    path = tmp_path / "kernel.py"
    path.write_text(uses, encoding="utf-8")
    result = migrate(str(path), TRUSTED)
    (proof,) = result["proofs"]
    assert not proof["equivalent"]
    assert f"No module named '{ABSENT}'" in proof["message"]


def test_a_stand_in_used_anyway_fails_naming_the_module() -> None:
    from nki_studio.sim.absent import Absent
    from nki_studio.sim.errors import SimulationError

    with pytest.raises(SimulationError, match=f"{ABSENT} is not installed here"):
        Absent(f"{ABSENT}.special").softmax([1.0])


# Each row of x holds a (rows, cols) matrix flattened row-major; out holds each one's transpose, scaled by 2.
SHAPE_TUPLE = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate x=float32[8,24] dims=(4,6)
@nki.jit
def flip_blocks(x, dims):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, cols = dims
    parts = x.shape[0]
    t = nl.load(x)
    i_p = nl.arange(parts)[:, None, None]
    i_r = nl.arange(rows)[None, :, None]
    i_c = nl.arange(cols)[None, None, :]
    flipped = nl.ndarray((parts, rows * cols), dtype=x.dtype)
    flipped[i_p, i_c * rows + i_r] = nl.multiply(t[i_p, i_r * cols + i_c], 2.0)
    nl.store(out, value=flipped)
    return out
"""


def test_a_kernel_taking_a_shape_tuple_is_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    assert proven_on_seeds(prove_migration(SHAPE_TUPLE))["proofs"][0]["kernel"] == "flip_blocks"


# nki-samples' flash attention tests launch flash_fwd(q, k, v, seed=None, config=FlashConfig(...)): none and an
# instance of the file's dataclass are spec values; the asserts fail the run if either did not arrive as given
SEED_AND_CONFIG = """\
from dataclasses import dataclass

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@dataclass(frozen=True)
class ScaleConfig:
    scale: float = 1.0
    training: bool = True


# nki-studio: simulate x=float32[128,64] seed=none config=ScaleConfig(scale=3.0,training=false)
@nki.jit
def scaled(x, seed, config=None):
    assert seed is None and config is not None and not config.training
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    nl.store(out[i_p, i_f], value=nl.multiply(nl.load(x[i_p, i_f]), config.scale))
    return out
"""


def test_a_kernel_taking_none_and_a_config_instance_is_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    assert proven_on_seeds(prove_migration(SEED_AND_CONFIG))["proofs"][0]["kernel"] == "scaled"


def test_a_config_instance_the_file_does_not_define_stops_the_original(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(SEED_AND_CONFIG.replace("config=ScaleConfig(", "config=OtherConfig("), encoding="utf-8")
    (proof,) = migrate(str(path), TRUSTED)["proofs"]
    assert not proof["equivalent"] and "defines no class 'OtherConfig'" in proof["message"]


# 16 tiles of 2 KiB per partition (32 KiB of 16): out[i] = row max of (i + 1) * a.T @ b, the products all made
# before any is read
PSUM_BLOCKS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,128] b=float32[128,512]
@nki.jit
def row_maxima(a, b):
    out = nl.ndarray((16, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    products = nl.ndarray((16, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    sa = nl.load(a)
    sb = nl.load(b)
    for i in nl.affine_range(16):
        products[i, :, :] = nisa.nc_matmul(nl.multiply(sa, i + 1.0), sb)
    for i in nl.affine_range(16):
        nl.store(out[i], value=nisa.tensor_reduce(op=nl.max, data=products[i], axis=1, keepdims=True))
    return out
"""


def test_psum_blocks_beyond_psum_migrate_to_a_list_of_tiles_and_are_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = proven_on_seeds(prove_migration(PSUM_BLOCKS))
    allocation = "products = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(16)]"
    assert allocation in result["migrated"]
