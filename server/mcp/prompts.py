"""The prompt that describes the verify → estimate → optimise loop with this server's tools."""

from __future__ import annotations

NAME = "optimise_kernel"
DESCRIPTION = (
    "Write or optimise an NKI kernel without Trainium: verify with simulate, estimate, optimise, repeat."
)
ARGUMENTS = (
    ("file", "the kernel file to work on", True),
    ("kernel", "the @nki.jit function (default: the first with a spec)", False),
)


def loop_text(file: str, kernel: str | None = None, remote: bool = False) -> str:
    """The loop, for ``file`` (and ``kernel``)."""
    k = f", kernel {kernel}" if kernel else ""
    target = f"{file}{k}"
    remote_step = (
        "\n7. When the estimate says a change helps, confirm it on the device: `profile_remote`, then "
        "`compare` the measured profile with the estimate."
        if remote
        else ""
    )
    return f"""Work on the NKI kernel {target} with the nki-studio tools, in this loop:

1. `lint` the file. Fix every error-level finding first; apply the fixes the findings carry. Use `explain`
   on a rule code (NKI301) or an API name (nisa.nc_matmul) when the message is not enough.
2. `simulate` it. The kernel must pass the oracle against its NumPy reference (the `# nki-studio: simulate`
   comment above the kernel names the inputs and the reference). When it fails, read `failedMetrics` (which
   output, which metric, value and threshold) and `findings` (the kernel line), fix the kernel, and simulate
   again. Never change the reference to make the kernel pass.
3. `estimate` the passing kernel: the estimated latency, the busiest engine, the DMA/compute overlap and the
   hottest lines. These numbers are ESTIMATED by a cost model, not measured; say so when you report them.
4. Optimise one thing at a time where the estimate points: fuse instructions on the hottest lines, overlap
   DMA with compute, use larger tiles, keep SBUF/PSUM peaks below capacity (simulate reports them).
5. After each change: `simulate` again (it must still pass), then `compare` the old and new version
   ({{"a": {{"file": old}}, "b": {{"file": new}}}}) and keep the change only if it is faster.
6. Stop when the estimate no longer improves; report the final verdict and the estimated speed-up.{remote_step}
"""
