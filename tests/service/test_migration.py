"""``service.migration``: the rewrite proven by simulating both versions in real sandboxed workers."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from nki_studio.protocol.migration import MigrationResult
from nki_studio.service.migration import _compare, exit_code, migrate
from nki_studio.service.settings import Settings

TRUSTED = Settings(trusted_workspace=True)

PROVEN = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[256,512] b=float32[256,512]
@nki.jit
def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        ix = i * 128 + nl.arange(128)[:, None]
        iy = nl.arange(512)[None, :]
        x = nl.load(a[ix, iy])
        y = nl.load(b[ix, iy])
        z = x + y * 2
        z += nl.exp(x - y)
        nl.store(out[ix, iy], value=z)
    return out
"""

# Legacy semantics divide an int32 tile differently from 0.7's: the rewrite (an operator to nl.add) is faithful
# but the kernel computes something else under 0.7, which the proof must catch.
FAILS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=int32[128,64] b=float16[128,64]
@nki.jit
def k(a, b):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    nl.store(out, value=nl.divide(x, 3) + y)
    return out
"""


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_proven_migration_is_written(tmp_path: Path) -> None:
    path = _file(tmp_path, PROVEN)
    result = migrate(str(path), TRUSTED, write=True)
    assert result["status"] == "proven", result["message"]
    assert result["message"] == "migrated to NKI 0.7: equivalent on 3 inputs"
    assert [(p["kernel"], p["inputs"], p["equivalent"], p["exact"]) for p in result["proofs"]] == [
        ("add_kernel", 3, True, True)
    ]
    assert result["written"] and path.read_text(encoding="utf-8") == result["migrated"]
    assert "neuronxcc" not in result["migrated"] and exit_code(result) == 0


def test_failed_proof_leaves_the_file_untouched_unless_forced(tmp_path: Path) -> None:
    path = _file(tmp_path, FAILS)
    result = migrate(str(path), TRUSTED, write=True)
    assert result["status"] == "proof_failed" and not result["written"]
    assert result["message"].startswith("k: not equivalent (seed 0): output 0 first differs at [0, 0]")
    assert result["message"].endswith("(returned at line 12 of the original)")
    assert path.read_text(encoding="utf-8") == FAILS and exit_code(result) == 1
    forced = migrate(str(path), TRUSTED, write=True, force=True)
    assert forced["written"] and path.read_text(encoding="utf-8") == forced["migrated"]


MASKED = """\
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[200,64]
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(64)[None, :]
    for i in nl.affine_range(math.ceil(a.shape[0] / 128)):
        x = nl.load(a[i * 128 + ip, jf], mask=(i * 128 + ip < a.shape[0]))
        y = nl.exp(x, mask=(i * 128 + ip < a.shape[0]))
        nl.store(out[i * 128 + ip, jf], value=y, mask=(i * 128 + ip < a.shape[0]))
    return out
"""


def test_masks_become_bounded_slices_and_are_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    result = prove_migration(MASKED)
    assert "x = nl.load(a[i * 128:min(i * 128 + 128, a.shape[0]), 0:64])" in result["migrated"]
    assert "y = nl.exp(x)" in result["migrated"] and "mask" not in result["migrated"]


# A ragged last tile meets a weight broadcast to the full 128 rows (the nki-samples RMSNorm tutorial's pattern).
MASKED_BROADCAST = """\
import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[200,64] g=float32[64]
@nki.jit
def k(a, g):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(64)[None, :]
    g_row = nl.load(g.reshape((1, 64))[nl.arange(1)[:, None], jf])
    for i in nl.affine_range(math.ceil(a.shape[0] / 128)):
        x = nl.load(a[i * 128 + ip, jf], mask=(i * 128 + ip < a.shape[0]))
        g_all = g_row.broadcast_to((128, 64))
        y = nl.multiply(nl.exp(x), g_all, mask=(i * 128 + ip < a.shape[0]))
        nl.store(out[i * 128 + ip, jf], value=y, mask=(i * 128 + ip < a.shape[0]))
    return out
"""


def test_masked_broadcast_operands_are_sliced_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(MASKED_BROADCAST)
    assert "g_all[0:min(i * 128 + 128, a.shape[0]) - (i * 128)]" in result["migrated"]


BLOCKED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[384,64]
@nki.jit
def k(a):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:128, 0:64]
    tiles = nl.ndarray((3, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(3):
        tiles[b, ip, jf] = nl.load(a[b * 128 + ip, jf])
    acc = nl.zeros((nl.par_dim(128), 64), dtype=a.dtype)
    for b in nl.sequential_range(3):
        acc[...] = nl.add(acc, nl.multiply(tiles[b], b + 1))
    nl.store(out[ip, jf], value=acc)
    return out
"""


def test_block_dims_fold_and_are_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    result = prove_migration(BLOCKED)
    assert "tiles = nl.ndarray((128, 3, 64)" in result["migrated"] and "tiles[:, b]" in result["migrated"]


# Four blocks rotating over two physical tiles (mod_alloc), a mask that holds for whole tiles only (i * 128 < limit)
# and one mixing a column bound with a tile condition.
ALLOCATED_MASKED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.compiler as ncc


# nki-studio: simulate a=float32[512,64]
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:128, 0:64]
    limit = a.shape[0] // 2
    bufs = nl.ndarray((4, nl.par_dim(128), 64), dtype=a.dtype,
                      buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
    for i in nl.affine_range(4):
        bufs[i, ip, jf] = nl.load(a[i * 128 + ip, jf])
        bufs[i, ip, jf] = nl.multiply(bufs[i, ip, jf], 2.0, mask=(i * 128 < limit))
        nl.store(out[i * 128 + ip, jf], value=bufs[i, ip, jf])
        neg = nl.negative(bufs[i, ip, jf])
        nl.store(out[i * 128 + ip, jf], value=neg, mask=(jf < 32) & (i < 3))
    return out
"""


def test_direct_allocation_and_whole_tile_masks_are_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(ALLOCATED_MASKED)
    assert "if i * 128 < limit: bufs[0:128, i, 0:64] = nl.multiply(" in result["migrated"]
    assert "buffer=nl.sbuf)" in result["migrated"] and "mod_alloc" not in result["migrated"]


# Block-dim tiles filled by a helper (the nki-samples flash-attention pattern: load_v_tile(cur_v_tile=...)).
BLOCKED_HELPER = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def fill(dst, b, src):
    dst[b, :, :] = nl.load(src[b * 128:(b + 1) * 128, :], dtype=dst.dtype)


# nki-studio: simulate a=float32[384,64]
@nki.jit
def k(a):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = nl.ndarray((3, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(3):
        fill(tiles, b, a)
    acc = nl.zeros((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    for b in nl.sequential_range(3):
        acc[...] = nl.add(acc, nl.multiply(tiles[b, :, :], b + 1))
    nl.store(out, value=acc)
    return out
"""


def test_block_dims_passed_to_a_helper_are_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    result = prove_migration(BLOCKED_HELPER)
    assert "dst[:, b, :] = nl.load(" in result["migrated"]


# Block-dim tiles a nested function fills and reads (the nki-samples attention tutorials' closures).
BLOCKED_CLOSURE = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[384,64]
@nki.jit
def k(a):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = nl.ndarray((3, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)

    def fill(b):
        tiles[b, :, :] = nl.load(a[b * 128:(b + 1) * 128, :])

    def scaled(b):
        return nl.multiply(tiles[b], b + 1)

    for b in nl.affine_range(3):
        fill(b)
    acc = nl.zeros((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    for b in nl.sequential_range(3):
        acc[...] = nl.add(acc, scaled(b))
    nl.store(out, value=acc)
    return out
"""


def test_block_dims_used_in_a_nested_function_are_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(BLOCKED_CLOSURE)
    assert "tiles[:, b, :] = nl.load(" in result["migrated"] and "tiles[:, b]" in result["migrated"]


def test_kernels_without_manual_steps_are_proven_beside_those_with(tmp_path: Path) -> None:
    helper = """

def helper(x):
    return nl.static_cast(x, nl.float32)


# nki-studio: simulate a=float32[128,64]
@nki.jit
def uses_helper(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=helper(nl.load(a)))
    return out
"""
    path = _file(tmp_path, PROVEN + helper)
    result = migrate(str(path), TRUSTED, write=True)
    assert result["status"] == "manual_steps" and not result["written"]
    assert [m["construct"] for m in result["manual"]] == ["nl.static_cast"]
    # add_kernel is migrated completely and proven; uses_helper calls a function with a manual step: no proof
    assert [(p["kernel"], p["equivalent"]) for p in result["proofs"]] == [("add_kernel", True)]
    assert result["message"].endswith("kernels proven on their own: add_kernel")
    assert path.read_text(encoding="utf-8") == PROVEN + helper


VALUES = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,64] b=float32[128,32]
@nki.jit
def k(a, b):
    out = nl.ndarray((64, 32), dtype=a.dtype, buffer=nl.shared_hbm)
    at = nl.load(a)
    bt = nl.load(b)
    prod = nisa.nc_matmul(at, bt)
    act = nisa.activation(nl.exp, prod)
    res = nl.ndarray((64, 32), dtype=a.dtype, buffer=nl.sbuf)
    res[...] = nisa.tensor_copy(act)
    nl.store(out, value=res)
    return out
"""


def test_value_returning_isa_calls_are_rewritten_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(VALUES)
    assert "nisa.nc_matmul(dst=prod, stationary=at, moving=bt)" in result["migrated"]


# dma_transpose, tensor_partition_reduce and memset results, and a tile rebound in the function written with its
# own dtype (the allocation reaching the write decides).
ALLOCATED_VALUES = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,64] b=bfloat16[64,128]
@nki.jit
def k(a, b):
    out = nl.ndarray((129, 194), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    bt = nl.load(b)
    tr = nisa.dma_transpose(bt)
    total = nisa.tensor_partition_reduce(np.add, x)
    ones = nisa.memset((nl.par_dim(128), 2), value=1.5, dtype=nl.float32)
    res = nl.ndarray((128, 194), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        buf = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        buf[:, :] = nisa.tensor_copy(x, dtype=nl.float32)
        res[:, i * 64:(i + 1) * 64] = nl.multiply(buf, i + 1)
    buf = nl.load(a)
    res[:, 128:192] = nl.copy(tr, dtype=nl.float32)
    res[:, 192:194] = nl.copy(ones)
    nl.store(out[0:128, :], value=res)
    nl.store(out[128:129, 0:64], value=total)
    return out
"""


def test_value_returning_transpose_partition_reduce_and_memset_are_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(ALLOCATED_VALUES)
    assert "nisa.dma_transpose(dst=tr, src=bt)" in result["migrated"]
    assert "nisa.memset(dst=ones, value=1.5)" in result["migrated"]
    assert "nisa.tensor_copy(dst=buf[:, :], src=x)" in result["migrated"]


# Three-dim index tiles reading and writing flat free offsets (the nki-samples transpose tutorial's pattern), one
# with a start and an offset, into an HBM tensor.
GRID_TILES = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[128,48]
@nki.jit
def k(a):
    out = nl.ndarray((128, 48), dtype=a.dtype, buffer=nl.shared_hbm)
    half = nl.ndarray((64, 24), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    i_p = nl.arange(128)[:, None, None]
    i_a = nl.arange(6)[None, :, None]
    i_b = nl.arange(8)[None, None, :]
    u = nl.ndarray((128, 48), dtype=a.dtype, buffer=nl.sbuf)
    u[i_p, i_b * 6 + i_a] = nl.copy(t[i_p, i_a * 8 + i_b])
    nl.store(out, value=u)
    j_p = nl.arange(64)[:, None, None] + 32
    j_a = nl.arange(1, 4)[None, :, None]
    j_b = nl.arange(8)[None, None, :]
    nl.store(half[j_p - 32, (j_a - 1) * 8 + j_b], value=nl.exp(u[j_p, 2 * (j_a * 4) + j_b]))
    return out, half
"""


def test_three_dim_index_tiles_become_access_patterns_and_are_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(GRID_TILES)
    assert "u.ap(pattern=[[u.shape[1], 128], [1, 6], [6, 8]])[...] = nl.copy(" in result["migrated"]
    assert "nl.arange" not in result["migrated"]


# Causal masks and an iota written the legacy way: index-tile expressions (offsets from the loop, a scaled free index,
# a name for an offset tile).
AFFINE_SELECTS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[256,64]
@nki.jit
def k(a):
    out = nl.ndarray((256, 192), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    res = nl.ndarray((128, 192), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        t = nl.load(a[i * 128 + i_p, i_f])
        res[i_p, i_f] = nisa.affine_select(pred=(i * 128 + i_p >= 2 * i_f + 10), on_true_tile=t,
                                           on_false_value=-9984.0, dtype=nl.float32)
        low = nisa.affine_select(i_f < i * 16 + 8, t, 0.0)
        res[:, 64:128] = nl.copy(low)
        row = i * 128 + i_p
        res[:, 128:192] = nisa.iota(row * 3 - i_f, dtype=nl.float32)
        nl.store(out[i * 128:(i + 1) * 128, :], value=res)
    return out
"""


def test_affine_select_predicates_and_iota_expressions_are_rewritten_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(AFFINE_SELECTS)
    assert "cmp_op=nl.greater_equal, offset=i * 128 - 10)" in result["migrated"]
    assert (
        "nisa.iota(dst=res[:, 128:192], pattern=[[-1, 64]], offset=i * 128 * 3, channel_multiplier=3)"
        in (result["migrated"])
    )
    assert "nl.arange" not in result["migrated"]


ACCUMULATED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=bfloat16[256,128] b=bfloat16[256,512]
@nki.jit
def k(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(2):
        at = nl.load(a[i * 128:(i + 1) * 128, :])
        bt = nl.load(b[i * 128:(i + 1) * 128, :])
        acc += nl.matmul(at, bt, transpose_x=True)
        acc[...] += nisa.nc_matmul(at, bt)
    nl.store(out, value=nl.copy(acc))
    return out
"""


def test_products_accumulated_into_psum_are_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    result = prove_migration(ACCUMULATED)
    assert "nisa.nc_matmul(dst=acc, stationary=at, moving=bt, accumulate=True)" in result["migrated"]
    assert "tensor_tensor" not in result["migrated"]


# The accumulator is a direct allocation without values (as in a fused RMSNorm-QKV kernel): legacy += opens an
# accumulation group whose first product overwrites; accumulate=True in 0.7 would add to never-written (NaN) PSUM.
FRESH_ACCUMULATOR = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.compiler as ncc


# nki-studio: simulate a=bfloat16[256,128] b=bfloat16[256,512]
@nki.jit
def k(a, b):
    out = nl.ndarray((2, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for r in nl.affine_range(2):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=7, num_bank_tiles=(1,)))
        for i in nl.affine_range(2):
            at = nl.load(a[i * 128:(i + 1) * 128, :])
            bt = nl.load(b[i * 128:(i + 1) * 128, :])
            acc[...] += nisa.nc_matmul(at, bt)
        nl.store(out[r], value=nl.copy(acc))
    return out
"""


# A module-level allocator alias and a compiler directive, as in an allocated attention tutorial: 0.7 has no
# nki.compiler.sbuf, so either left in place would stop the migrated module from importing.
ALIASED_ALLOCATOR = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

sb_mod = nki.compiler.sbuf.mod_alloc


# nki-studio: simulate a=float32[128,256]
@nki.compiler.skip_middle_end_transformations
@nki.jit
def k(a):
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 256), dtype=nl.float32, buffer=sb_mod(base_addr=0, num_free_tiles=(1,)))
    t[...] = nl.load(a)
    nl.store(out, value=nl.exp(t))
    return out
"""


# Legacy value-returning products placed by the compiler: in 0.7 nl.transpose/nl.matmul results are in PSUM, which
# a matmul operand and nl.store cannot read.
PSUM_PRODUCTS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate q=float32[128,128] v=float32[128,128]
@nki.jit
def k(q, v):
    out = nl.ndarray((128, 128), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sbuf = nl.load(q)
    v_sbuf = nl.load(v)
    e = nl.exp(nl.matmul(x=q_sbuf, y=v_sbuf, transpose_x=True))
    v_t = nl.transpose(v_sbuf)
    o = nl.matmul(e, v_t, transpose_x=False)
    nl.store(out, value=o)
    return out
"""


# A tile method in a kernel that also defines a helper function (an allocated SD attention kernel's pattern):
# the nested function must not hide the kernel's own legacy constructs from the rewrite.
NESTED_BROADCAST = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[128,64] s=float32[128,1]
@nki.jit
def k(a, s):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)

    def scale(t):
        return nl.multiply(t, 2.0)

    x = nl.load(a)
    w = nl.load(s)
    nl.store(out, value=nl.multiply(scale(x), w.broadcast_to((128, 64))))
    return out
"""

# A PSUM tensor of 16 blocks on 2 rotating banks (num_bank_tiles=(2,), an attention tutorial's v9 pattern): at full
# size (32 KiB a partition) it would not fit in PSUM; migrated, it keeps the 2 tiles and indexes them modulo 2.
ROTATED_PSUM = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

psum_mod = nki.compiler.psum.mod_alloc


# nki-studio: simulate a=float32[128,8192] b=float32[128,128]
@nki.jit
def k(a, b):
    out = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    acc = nl.ndarray((16, nl.par_dim(128), 512), dtype=nl.float32, buffer=psum_mod(base_bank=0, num_bank_tiles=(2,)))
    res = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(16):
        acc[i] = nisa.nc_matmul(y, x[:, nl.ds(i * 512, 512)])
        res[:, nl.ds(i * 512, 512)] = nisa.tensor_copy(acc[i])
    nl.store(out, value=res)
    return out
"""


@pytest.mark.parametrize(
    ("source", "migrated"),
    [
        # fresh accumulator: the default accumulate=None, first product overwriting, as legacy += did
        (FRESH_ACCUMULATOR, ["nisa.nc_matmul(dst=acc[...], stationary=at, moving=bt)\n", "buffer=nl.psum"]),
        (ALIASED_ALLOCATOR, ["buffer=nl.sbuf"]),
        (PSUM_PRODUCTS, ["v_t = nl.copy(nl.transpose(v_sbuf))"]),
        (NESTED_BROADCAST, ["nl.broadcast_to(w, (128, 64))"]),
        (ROTATED_PSUM, ["nl.ndarray((128, 2, 512)", "dst=acc[:, (i) % 2]", "accumulate=False"]),
    ],
    ids=["fresh-accumulator", "allocator-alias", "psum-products", "nested-broadcast", "rotated-psum"],
)
def test_rewrites_of_the_corpus_proof_failures_are_proven(
    prove_migration: Callable[..., MigrationResult], source: str, migrated: list[str]
) -> None:
    result = prove_migration(source)
    assert all(text in result["migrated"] for text in migrated)
    assert "mod_alloc" not in result["migrated"]  # an alias of it too


REDUCED = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=bfloat16[128,4,32]
@nki.jit
def k(a):
    out = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    res = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.sbuf)
    biggest = nisa.tensor_reduce(np.max, t, axis=(1, 2), dtype=nl.float32)
    rows = nisa.tensor_reduce(nl.add, data=t, axis=2, negate=True)
    kept = nisa.tensor_reduce(nl.add, data=t, axis=(1, 2), keepdims=True)
    res[:, 0:1] = nl.copy(biggest)
    res[:, 1:5] = nl.copy(rows, dtype=nl.float32)
    res[:, 5:6] = nisa.tensor_reduce(nl.min, data=t, axis=(1, 2))
    nl.store(out, value=res)
    nl.store(out[:, 5:6], value=nl.copy(kept[:, :, 0], dtype=nl.float32))
    return out
"""


def test_value_returning_tensor_reduce_is_rewritten_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(REDUCED)
    assert "rows = nl.ndarray((t.shape[0], t.shape[1]), dtype=t.dtype, buffer=nl.sbuf)" in result["migrated"]
    assert "nisa.tensor_reduce(dst=res[:, 5:6], op=nl.min, data=t, axis=(1, 2))" in result["migrated"]


FUSED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,64] b=float32[128,64]
@nki.jit
def k(a, b):
    out = nl.ndarray((128, 258), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    res = nl.ndarray((128, 258), dtype=nl.float32, buffer=nl.sbuf)
    sums = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    scaled = nisa.tensor_scalar_reduce(data=x, op0=nl.multiply, operand0=0.5, reduce_op=nl.add,
                                       reduce_res=sums[:, 0:1])
    exps = nisa.activation_reduce(nl.exp, y, reduce_op=nl.add, reduce_res=sums[:, 1:2])
    mixed = nisa.scalar_tensor_tensor(data=x, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=y)
    res[:, 0:64] = nl.copy(scaled)
    res[:, 64:128] = nl.copy(exps)
    res[:, 128:192] = nl.copy(mixed)
    res[:, 192:256] = nisa.tensor_tensor_scan(x, y, 0.0, nl.multiply, nl.add)
    res[:, 256:258] = nl.copy(sums)
    nl.store(out, value=res)
    return out
"""


def test_fused_value_returning_instructions_are_rewritten_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(FUSED)
    assert (
        "exps = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.sbuf); nisa.activation_reduce(dst=exps, op=nl.exp, "
        "data=y, reduce_op=nl.add, reduce_res=sums[:, 1:2])" in result["migrated"]
    )
    assert "nisa.tensor_tensor_scan(dst=res[:, 192:256], data0=x, data1=y, initial=0.0," in result["migrated"]


def test_a_file_importing_the_typing_module_is_proven(tmp_path: Path) -> None:
    text = PROVEN.replace(
        "import neuronxcc.nki.language as nl\n",
        "import neuronxcc.nki.language as nl\nimport neuronxcc.nki.typing as nt\n",
    )
    result = migrate(str(_file(tmp_path, text)), TRUSTED)
    assert "import nki.typing as nt" in result["migrated"]
    assert result["status"] == "proven", result["message"]


def test_untrusted_workspace_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    path = _file(tmp_path, PROVEN)
    result = migrate(str(path), Settings(trusted_workspace=False), write=True)
    assert result["status"] == "refused" and not result["proofs"] and not result["written"]
    assert path.read_text(encoding="utf-8") == PROVEN


def test_bad_files_are_untouched(tmp_path: Path) -> None:
    for text, kind in (
        ("import neuronxcc.nki as nki\ndef k(:\n", "cannot parse"),
        ("import nki\nimport neuronxcc.nki.language as nl\n", "half migrated"),
    ):
        path = _file(tmp_path, text)
        result = migrate(str(path), TRUSTED, write=True, force=True)
        assert result["status"] == "not_migratable" and kind in result["message"]
        assert path.read_text(encoding="utf-8") == text and exit_code(result) == 2


def test_manual_steps_stop_before_the_proof(tmp_path: Path) -> None:
    text = PROVEN.replace("nl.store(out[ix, iy], value=z)", "nl.store(out[ix, iy], value=z, mask=(iy < 200))")
    text = text.replace("z = x + y * 2", "z = nl.static_cast(x + y * 2, nl.float32)")
    path = _file(tmp_path, text)
    result = migrate(str(path), TRUSTED, write=True)
    assert result["status"] == "manual_steps" and not result["proofs"] and not result["written"]
    assert [m["construct"] for m in result["manual"]] == ["nl.static_cast"]


def test_an_nki_07_file_is_unchanged(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "examples" / "tensor_add.py").read_text(encoding="utf-8")
    result = migrate(str(_file(tmp_path, text)), TRUSTED)
    assert result["status"] == "unchanged" and result["diff"] == "" and exit_code(result) == 0


def test_compare_exact_rounding_and_difference() -> None:
    a = np.linspace(1, 2, 8, dtype=np.float32)
    assert _compare([a], [a.copy()]) is None
    assert _compare([a], [np.nextafter(a, np.float32(3))]) == "rounding"
    b = a.copy()
    b[5] = 7
    assert _compare([a], [b]) == f"output 0 first differs at [5]: {float(a[5])!r} before, 7.0 after"
    assert _compare([a], [a.astype(np.float16)]) == "output 0: float32[8] before, float16[8] after"


def test_a_bfloat16_output_that_differs_is_reported_not_a_crash(tmp_path: Path) -> None:
    # .npz stores ml_dtypes' bfloat16 as raw bytes: the proof reads it back in its dtype before comparing
    path = _file(tmp_path, FAILS.replace("dtype=nl.float32", "dtype=nl.bfloat16"))
    result = migrate(str(path), TRUSTED)
    assert result["status"] == "proof_failed", result["message"]
    assert result["message"].startswith("k: not equivalent (seed 0): output 0 first differs at [0, 0]")


def test_compare_bfloat16_rounding_and_difference() -> None:
    import ml_dtypes

    a = np.linspace(1, 2, 8).astype(ml_dtypes.bfloat16)
    step = (a.astype(np.float32) * np.float32(1 + 2**-7)).astype(
        ml_dtypes.bfloat16
    )  # about one bfloat16 ulp up
    assert not np.array_equal(a, step)
    assert _compare([a], [a.copy()]) is None
    assert _compare([a], [step]) == "rounding"
    b = a.copy()
    b[5] = 7
    assert _compare([a], [b]) == f"output 0 first differs at [5]: {float(a[5])!r} before, 7.0 after"
