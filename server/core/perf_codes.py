"""The NKI7xx family: line-level performance investigations of a profile (``nki_studio.profile.investigations``,
profile-formats/bounds.md §3), source ``nki-perf``, for measured and estimated profiles alike.

Declared here, in the core, so ``# noqa``, ``severity``/``ignore`` and the docs generator know them without
importing the profile layer. All are Information: each explains a gap of the bounds, not an error.
"""

from __future__ import annotations

from nki_studio.core.codes import Page, declare
from nki_studio.core.findings import Severity

_SCOPE = (
    "every NKI version and generation; reported after a profile is loaded (`nki-studio profile analyze`, "
    "`nki-studio.loadProfile`) or for the estimated profile of a simulation (`nki-studio simulate --analyze`, "
    "the `estimate` section of `--json`, simulate-on-save)"
)

DMA_SMALL_DESCRIPTORS = declare(
    "NKI701",
    "dma-small-descriptors",
    Severity.INFO,
    "A `dma_copy` line whose transfers move less than about 4 KiB per partition row.",
    page=Page(
        scope=_SCOPE,
        what="The transfers issued by this line move, on average, fewer than 4 KiB per SBUF partition row "
        "(descriptor size = transfer bytes / partitions). The diagnostic gives the transfers, bytes, share of the "
        "kernel's DMA bytes and partitions per transfer.",
        why="DMA descriptors under about 4 KiB per partition row are markedly less efficient; beyond 4 KiB the "
        "gains are marginal and can cost pipelining. This is the gap between `memory_bound` and "
        "`memory_bound_ideal`.",
        bad=(
            """for j in range(n // 512):   # 512 bf16 = 1 KiB per partition row
    nisa.dma_copy(dst=bt[:, j * 512:(j + 1) * 512], src=b[:, j * 512:(j + 1) * 512])""",
        ),
        good=("""nisa.dma_copy(dst=bt, src=b)   # [128, 2048] bf16: 4 KiB per partition row""",),
    ),
)

DMA_TRANSPOSE = declare(
    "NKI702",
    "dma-transpose",
    Severity.INFO,
    "A line issuing transposing DMA transfers, which run well below the DMA peak.",
    page=Page(
        scope=_SCOPE,
        what="This line issues DMA transfers in transpose mode (`is_transpose_mode` in a measured profile; "
        "`nisa.dma_transpose` / `nl.load_transpose2d` in an estimate).",
        why="Transposed DMA is less efficient than a plain copy (part of the `memory_bound` → "
        "`memory_bound_ideal` gap).",
        bad=("""nisa.dma_transpose(dst=at, src=a)""",),
        good=("""nisa.dma_copy(dst=a_t_tile, src=a_t)   # take the operand pre-transposed""",),
    ),
)

DMA_INPUT_RELOAD = declare(
    "NKI703",
    "dma-input-reload",
    Severity.INFO,
    "A line that loads kernel-input bytes the kernel already loaded.",
    page=Page(
        scope=_SCOPE,
        what="The line loads part of a kernel input again. In an estimated profile the simulator knows every "
        "byte range, so it reports exact reloads of the same HBM bytes (and broadcast loads reading the same "
        "bytes many times in one transfer); in a measured profile, the lines loading an input whose transferred "
        "bytes exceed its `TensorInfo` size.",
        why="Excess HBM traffic is the gap between `memory_bound_ideal` and `memory_bound_ideal_no_reloads`: "
        "each input moved once is the floor.",
        bad=(
            """for mi in range(m // 128):
    nisa.dma_copy(dst=bt, src=b)     # the same b on every iteration
    ...""",
        ),
        good=(
            """nisa.dma_copy(dst=bt, src=b)         # once, reused from SBUF
for mi in range(m // 128):
    ...""",
        ),
    ),
)

DMA_SPILL = declare(
    "NKI704",
    "dma-compiler-spill",
    Severity.INFO,
    "The compiler spilled this operation's output to HBM and reloaded it (measured profiles).",
    page=Page(
        scope=_SCOPE,
        what="DMA transfers whose source or destination is a compiler `VIRTUAL` buffer, attributed to the line "
        "of the NKI operation whose output was spilled. Cost = 2 × the reload bytes (save-direction Flow links "
        "are partly missing in profiles).",
        why="Spills are excess HBM traffic the source does not show: they have no `dma_copy` of their own.",
        bad=("""big = nl.ndarray((128, 65536), dtype=nl.float32, buffer=nl.sbuf)   # too much live data""",),
        good=(
            """tile = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)   # process in smaller tiles""",
        ),
    ),
)

TE_UNDERSIZED = declare(
    "NKI705",
    "matmul-undersized-tiles",
    Severity.INFO,
    "An `nc_matmul` line whose K or M is below the Tensor engine's 128.",
    page=Page(
        scope=_SCOPE,
        what="The matmuls of this line contract over K < 128 partitions or use a stationary free size "
        "M < 128 (maxima K/M/N = 128/128/512). The diagnostic gives K, M, N (the largest of the line), the "
        "count, the share of the Tensor-engine FLOPs, and busy time against the time the FLOPs need at peak.",
        why="Undersized K or M cuts the FLOPs an instruction delivers without shortening it much (N matters "
        "least): this is the gap between `compute_bound` and `compute_bound_ideal_flops`.",
        bad=("""nisa.nc_matmul(dst=acc, stationary=a[0:32, :], moving=b[0:32, :])   # K = 32""",),
        good=("""nisa.nc_matmul(dst=acc, stationary=a[0:128, :], moving=b[0:128, :])   # K = 128""",),
    ),
)

TE_TRANSPOSE = declare(
    "NKI706",
    "tensor-engine-transpose",
    Severity.INFO,
    "A line spending Tensor-engine time on transposes (identity matmuls).",
    page=Page(
        scope=_SCOPE,
        what="Tensor-engine transposes issued by this line (`nc_transpose`, `nc_matmul(is_transpose=True)`): "
        "count, transpose FLOPs, their time at the Tensor-engine peak and their share of all transpose overhead.",
        why="A transpose is an identity matmul: Tensor-engine time that computes nothing (the gap between "
        "`compute_bound_ideal_flops` and `compute_bound_ideal_useful_flops`). A kernel that takes the operand "
        "pre-transposed removes them.",
        bad=(
            """nisa.nc_transpose(dst=tp, data=lhs)   # before every matmul
nisa.tensor_copy(dst=lt, src=tp)
nisa.nc_matmul(dst=acc, stationary=lt, moving=rhs)""",
        ),
        good=("""nisa.nc_matmul(dst=acc, stationary=lhs_t, moving=rhs)   # lhs given transposed""",),
    ),
)
