"""The NKI6xx family: diagnostics of a simulation (``nki_studio.verify``), source ``nki-sim``.

NKI601 comes from the spec parser (``simulate.spec``), the others from a simulation's result
(``simulate.report``). Declared here, in the core, so the linter (``# noqa`` bookkeeping) and the docs
generator know them without importing the simulator.
"""

from __future__ import annotations

from nki_studio.core.codes import Page, declare
from nki_studio.core.findings import Severity

_AFTER_RUN = "every NKI version and generation; reported only after a simulation (trusted workspaces)"

MALFORMED_SPEC = declare(
    "NKI601",
    "malformed-simulate-spec",
    Severity.ERROR,
    "A `# nki-studio: simulate` comment that cannot be used (bad value, unknown key, misplaced).",
    page=Page(
        scope="every NKI version and generation (it checks a comment, not the kernel)",
        what="""A `# nki-studio: simulate ...` comment that cannot be used: a value that is not `dtype[shape]`, a number,
`true`/`false`, `none`, a tuple of integers or `Class(field=value,...)`; an unknown dtype; a non-positive dimension; `lnc=` other than 1 or 2; a negative `seed=`,
`atol=` or `rtol=`; a key given twice; a name that is not a parameter of the kernel; a kernel parameter
without a value (and no `inputs=`); `ranks=` outside 1-64; or a spec comment that is not directly above a kernel's decorator.
The diagnostic points at the offending `name=value`.""",
        why="""The spec says what to feed the kernel when it is simulated (on save or with the `nki-studio.simulate`
command / `nki-studio simulate`). A spec that cannot be parsed would otherwise silently fall back to
something else, or simulate with inputs the user did not mean.""",
        sections=(
            (
                "Grammar",
                """`# nki-studio: simulate name=dtype[d0,d1,...] name=3 name=0.5 name=true name=none name=(3,4) name=Config(size=2,flag=true) reference=fn inputs=fn seed=7 lnc=2 ranks=4 atol=0.01 rtol=0.01`

* dtypes: `bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 tfloat32
  float8_e4m3 float8_e4m3fn float8_e5m2 float8_e8m0fnu` (aliases `bf16 fp16 fp32 tf32 fp8_e4m3 ...`, prefixes `nl.`/`np.`).
* `name=(3,4)`: a tuple of integers (written without spaces), passed as a Python tuple (a shape argument).
* `name=none`: Python's `None` (an optional tensor or seed left out, as a test passes it).
* `name=Config(size=2,flag=true)`: an instance of the class `Config` that the kernel's module defines (a
  configuration dataclass), called with those keyword fields (numbers, `true`/`false`, `none`; no spaces).
* `reference=` / `inputs=`: a function in the same file, or `module:function` / `module.function`
  importable from the kernel's folder. `reference` gets copies of the inputs and returns the expected output(s);
  `inputs` returns the argument tuple, and is given the kernel's module and the spec's seed when it takes
  parameters named `module` and `seed` (to build an argument of a class the kernel's file defines).
* Reserved keys: `reference inputs seed lnc ranks atol rtol`. `lnc=` is the logical-core degree (1 or 2),
  `ranks=` the number of collective ranks simulated (1-64). A reserved key that is also the name of a kernel
  parameter is passed to the kernel too (e.g. `ranks=4` for a kernel that takes `ranks`); `seed=none` passes
  `None` to a kernel's `seed` parameter (the inputs are then drawn with seed 0).
* Precedence: this comment, then shapes inferred from the kernel's asserts, then
  `[tool.nki-studio.simulate]` in pyproject.toml — applied key by key.""",
            ),
        ),
        bad=(
            """# nki-studio: simulate x=bfloat16[1024,40x96] y=float32[4] lnc=4
@nki.jit
def rmsnorm(x, weight):
    ...""",
        ),
        good=(
            """# nki-studio: simulate x=bfloat16[1024,4096] weight=bfloat16[4096] reference=ref_rmsnorm seed=7
@nki.jit
def rmsnorm(x, weight):
    ...""",
        ),
        appendix="""pyproject.toml alternative:
```toml
[tool.nki-studio.simulate."kernels/rmsnorm.py::rmsnorm"]
x = "bfloat16[1024,4096]"
weight = "bfloat16[4096]"
reference = "ref_rmsnorm"
```""",
    ),
)

SIMULATION_ERROR = declare(
    "NKI610",
    "simulation-error",
    Severity.ERROR,
    "The kernel raised while it was simulated (a checked hardware limit, an unimplemented API, an exception).",
    page=Page(
        scope=_AFTER_RUN,
        what="The kernel raised while it was simulated: a hardware limit the simulator checks (partitions > 128, "
        "tile sizes, buffers, dtypes, SBUF/PSUM capacity), an API the embedded simulator does not implement "
        '("not implemented in the embedded simulator: nisa.xyz"), or an ordinary Python exception. The '
        "diagnostic sits on the failing line when it is in this file, else on the outermost call in this file "
        "that led there; every frame of the helper call chain is attached as related information.",
        why="A kernel that fails in simulation would fail to compile or misbehave on the device; the simulator "
        "names the line the compiler would complain about without a Trainium machine.",
        bad=(
            """# nki-studio: simulate a=float32[256,512]
@nki.jit
def k(a):
    t = nl.load(a)            # 256 partitions > 128: NKI610 here
    ...""",
        ),
        good=(
            """# nki-studio: simulate a=float32[256,512]
@nki.jit
def k(a):
    for i in range(a.shape[0] // 128):
        t = nl.load(a[i * 128:(i + 1) * 128, :])
        ...""",
        ),
    ),
)

SIMULATION_TIMEOUT = declare(
    "NKI611",
    "simulation-timeout",
    Severity.ERROR,
    "The simulation did not finish within the time limit; its worker was killed.",
    page=Page(
        scope=_AFTER_RUN,
        what="The simulation did not finish within the wall-clock limit (setting `nki-studio.simulationTimeout`, "
        "default 60 s; CLI `--timeout`) and its worker process was killed, with everything it started. Reported "
        "on the kernel's `def` line (a killed process cannot say where it was).",
        why="An infinite loop must not hang the editor or the CI job. The server keeps answering while a "
        "simulation runs; the timeout ends the run.",
        bad=(
            """@nki.jit
def k(a):
    i = 0
    while i < 10:      # i never changes
        t = nl.load(a)""",
        ),
        good=(
            """@nki.jit
def k(a):
    for i in range(10):
        t = nl.load(a)""",
        ),
    ),
)

SIMULATION_MEMORY_LIMIT = declare(
    "NKI612",
    "simulation-memory-limit",
    Severity.ERROR,
    "The kernel allocated more memory than the simulation worker may use.",
    page=Page(
        scope=_AFTER_RUN,
        what="The kernel allocated more memory than the worker may use (setting "
        "`nki-studio.simulationMemoryLimitMb`, default 4096; CLI `--memory-mb`). The worker runs under an "
        "address-space limit (RLIMIT_AS; on macOS and Windows, where that does not work, a watch on its "
        "resident memory) and the simulator's allocation budget; the allocation that failed is named when known.",
        why="A kernel that allocates without bound (a growing list of tiles, a shape computed wrongly) must fail "
        "cleanly instead of taking the machine down.",
        bad=(
            """@nki.jit
def k(a):
    tiles = []
    while True:
        tiles.append(nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.hbm))""",
        ),
        good=(
            """@nki.jit
def k(a):
    t = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)""",
        ),
    ),
)

SIMULATION_WORKER_CRASHED = declare(
    "NKI613",
    "simulation-worker-crashed",
    Severity.ERROR,
    "The simulation worker process ended without a result (a signal or a native crash).",
    page=Page(
        scope=_AFTER_RUN,
        what="The simulation worker process ended without a result: killed by a signal (e.g. the system's "
        "out-of-memory killer) or exited from native code. The exit status is in the message.",
        why="Native crashes (a NumPy extension, ctypes) cannot be caught inside the worker; reporting them beats "
        "a silent nothing.",
        bad=(
            """import ctypes
@nki.jit
def k(a):
    ctypes.string_at(0)   # segfault""",
        ),
        good=(
            """@nki.jit
def k(a):
    ...   # no native calls from kernel code""",
        ),
    ),
)

ORACLE_MISMATCH = declare(
    "NKI620",
    "oracle-mismatch",
    Severity.ERROR,
    "An output does not match the spec's reference function, or the kernel modified an input.",
    page=Page(
        scope=_AFTER_RUN,
        what="An output does not match the reference function of the spec, or the kernel modified one of its "
        "inputs. Metrics (those of the published Trn2 RMSNorm walkthrough): shape and dtype; outputs finite; inputs "
        "unchanged; elementwise allclose; max abs error; mean abs error; cosine similarity. The walkthrough's "
        "thresholds are absolute (BF16 atol 2^-7, max abs 2^-5), which fails correct kernels with large values "
        "(one BF16 ULP at 8 is 2^-4); ours are our choice (inferred), from the output dtype's ULP at 1 (u, the "
        "spacing of its values, ml_dtypes finfo eps) and the reference's magnitude: allclose |out - ref| <= "
        "u x rms|ref| + u x |ref| elementwise (one ULP of the element, plus one of a typical value for "
        "elements near zero); max abs error <= 4u x max|ref|; mean abs error <= u/2 x mean|ref| (a correct kernel "
        "differs from the reference only where the two roundings differ); cosine similarity >= 1 - u^2/2. Per "
        "dtype: bfloat16 u = 2^-7; float16 u = 2^-10; float8_e4m3fn u = 2^-3 (float8_e4m3 too); float8_e5m2 "
        "u = 2^-2; float32 u = 2^-15 (its own ULP is 2^-23, but the engines accumulate in FP32 and a reference "
        "summing in another order differs by about sqrt(n) ULPs for n terms: 2^-15 for n up to 2^16; float64 "
        "alike); integers and bool exact. `atol=`/`rtol=` in the spec override the allclose pair with absolute "
        "numbers. The reference is cast to the output's dtype before comparing. The message names every failed "
        "metric with its value and what it needed.",
        why="Running is not the same as computing the right numbers: the oracle catches wrong maths (e.g. an "
        "epsilon added outside the square root) before a hardware run.",
        bad=(
            """def ref(x):  # expected: x / sqrt(mean(x^2) + eps)
    ...
# nki-studio: simulate x=bfloat16[128,512] reference=ref
@nki.jit
def rmsnorm(x):
    ...  # computes x / (sqrt(mean(x^2)) + eps): allclose and mean_abs fail""",
        ),
        good=(
            """# nki-studio: simulate x=bfloat16[128,512] reference=ref
@nki.jit
def rmsnorm(x):
    ...  # x * rsqrt(mean(x^2) + eps)""",
        ),
    ),
)

NEVER_WRITTEN_READ = declare(
    "NKI621",
    "never-written-memory-read",
    Severity.ERROR,
    "An output contains NaN: the kernel read or returned memory it never wrote.",
    page=Page(
        scope=_AFTER_RUN,
        what="An output contains NaN. The simulator (like AWS's) fills newly allocated memory with a sentinel — "
        "NaN for floating-point, 4 for integers — so NaN in an output usually means the kernel read or returned "
        "memory it never wrote. The message counts the NaNs and says where (first index, affected rows). Run "
        "with `--strict` to stop at the first read of never-written memory and get its line.",
        why="On hardware that memory holds garbage from a previous kernel: the bug is real but intermittent "
        "there, deterministic here.",
        bad=(
            """@nki.jit
def k(a):
    out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out[0:128, :], nl.load(a))   # rows 128..255 never written
    return out""",
        ),
        good=(
            """@nki.jit
def k(a):
    out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(2):
        nl.store(out[i * 128:(i + 1) * 128, :], nl.load(a[i * 128:(i + 1) * 128, :]))
    return out""",
        ),
    ),
)

SIMULATION_WARNING = declare(
    "NKI622",
    "simulation-warning",
    Severity.WARNING,
    "A warning the simulator raised at a line of this file (PSUM accumulation, capacity ...).",
    page=Page(
        scope=_AFTER_RUN,
        what="A warning the simulator raised at a line of this file, e.g. `accumulate=True` on uninitialised PSUM "
        "or a PSUM accumulation pattern that is wrong on hardware (the same warnings the official simulator "
        "gives since NKI 0.5/0.6), or an SBUF/PSUM capacity warning.",
        why="These patterns run in simulation but compute something else (or fail) on the device.",
        bad=(
            """acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
nisa.nc_matmul(acc, a, b, accumulate=True)   # acc never initialised""",
        ),
        good=(
            """acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
nisa.nc_matmul(acc, a, b, accumulate=True)""",
        ),
    ),
)

ON_CHIP_PEAK = declare(
    "NKI630",
    "on-chip-memory-peak",
    Severity.INFO,
    "The simulated SBUF/PSUM peak per partition, on the allocation that reached it (information).",
    page=Page(
        scope=_AFTER_RUN,
        what="Informational: the peak SBUF (and PSUM) use per partition measured during the simulation, e.g. "
        '"SBUF peak 201 KiB/224 KiB per partition (simulated): x_tile 8 KiB, ...", placed on the allocation '
        "that reached the peak, with every tile live at that moment as related information. In the editor it is "
        "not a Problems entry: the hover of that line and the kernel panel show it; the CLI and the MCP server "
        "list it with the result's findings. Capacities per "
        "generation: SBUF 192/224/256 KiB, PSUM 16 KiB (hardware.md §1). The capacity model (a tensor is live "
        "from its first access to its last, in program order; a program-order peak over capacity is a warning, "
        "since the compiler reorders and spills) is documented in docs/simulator.md.",
        why="Tiling decisions (tile sizes, double buffering) are about this number; seeing it on the line that "
        "allocates lets the user trade tile size against headroom before the compiler spills.",
        bad=(
            """# (info, not an error) a tile whose size pushes the peak close to capacity
t = nl.ndarray((128, 50000), dtype=nl.float32, buffer=nl.sbuf)   # 195 KiB of 224""",
        ),
        good=("""t = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf)   # 32 KiB, tiled loop""",),
    ),
)
