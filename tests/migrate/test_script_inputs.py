"""``benchmarks/script_inputs.py``: proof inputs read from a PyTorch/JAX script without running it, and the
migration proof run on them (``benchmarks/migrate_corpus.py`` with the static reader and its siblings rule)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from migrate_corpus import _file_verdicts, _script_inputs  # noqa: E402
from nki_studio.service.settings import Settings  # noqa: E402
from script_inputs import launches  # noqa: E402

# A legacy kernel family (own code): affine_range loops and a psum-free elementwise body the migration rewrites
# (nl.affine_range -> range), two kernels with the same parameters and one with others.
KERNELS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scale_v1(x, s, factor):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        tile = nl.load(x[i * 128:(i + 1) * 128, :])
        col = nl.load(s[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], nl.multiply(nl.multiply(tile, col), factor))
    return out


@nki.jit
def scale_v2(x, s, factor):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        rows = nl.ds(i * 128, 128)
        nl.store(out[rows, :], nl.multiply(nl.load(x[rows, :]), nl.multiply(nl.load(s[rows, :]), factor)))
    return out


@nki.jit
def other(x):
    return x
"""

# Cannot run here (torch_xla, a device): only its text is read.
SCRIPT = """\
import argparse
import torch
import torch_xla.core.xla_model as xm
from kernels import scale_v1, other


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default=2 * 128, type=int)
    parser.add_argument("--version", default="v1")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    device = xm.xla_device()
    cols = 64
    dtype = torch.float16
    x = torch.rand((args.rows, cols), dtype=torch.float32).to(device=device)
    s = -torch.ones(args.rows, 1, dtype=torch.float32, device=device)
    versions = {"v1": scale_v1}
    out = versions[args.version](x, s, 0.5)
    reference = torch.rand(3, 3) @ x  # not read: arithmetic on arrays
    other(reference)

    def check(kernel, rows):
        kernel(torch.zeros((rows, 2), dtype=dtype))

    check(other, 4)
    other(torch.arange(6, dtype=dtype).reshape((2, 3)).T)
"""


def _line(text: str) -> int:
    return next(i for i, line in enumerate(SCRIPT.splitlines(), 1) if text in line)


def _tree(tmp_path: Path) -> Path:
    folder = tmp_path / "src" / "nki_samples" / "tutorials" / "scale"
    folder.mkdir(parents=True)
    (folder / "kernels.py").write_text(KERNELS, encoding="utf-8")
    (folder / "scale_torch.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    return folder


def test_a_scripts_kernel_calls_are_read_without_running_it(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    parameters = {"scale_v1": ("x", "s", "factor"), "scale_v2": ("x", "s", "factor"), "other": ("x",)}
    found = launches(folder / "scale_torch.py", parameters)
    assert [(x.kernel, x.spec, x.origin) for x in found] == [
        ("scale_v1", "x=float32[256,64] s=float32[256,1] factor=0.5", f"scale_torch.py:{_line('versions[')}"),
        ("other", "x=float16[4,2]", f"scale_torch.py:{_line('kernel(torch.zeros')}"),  # in check(other, 4)
        ("other", "x=float16[3,2]", f"scale_torch.py:{_line('arange')}"),  # reference: not read
    ]


def test_statically_read_inputs_prove_the_kernel_and_its_siblings(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    scripted = _script_inputs(tmp_path)
    rel = "src/nki_samples/tutorials/scale/kernels.py"
    assert scripted[f"{rel}::scale_v2"] == (
        "x=float32[256,64] s=float32[256,1] factor=0.5",
        f"scale_torch.py:{_line('versions[')}, the call of its sibling scale_v1",
        (),
    )
    verdicts = _file_verdicts(folder / "kernels.py", rel, Settings(trusted_workspace=True), {}, scripted)
    by_kernel = {v.kernel.split("::")[1]: v for v in verdicts}
    for kernel in ("scale_v1", "scale_v2"):
        assert by_kernel[kernel].status == "proven", by_kernel[kernel].detail
        assert f"inputs: shapes from scale_torch.py:{_line('versions[')}" in by_kernel[kernel].detail


# A legacy kernel on a two-axis launch grid (own code, the shape of nki-samples' rotary tutorial): its cosine and
# sine tables are computed by the script from an arange, not constructed.
GRID_KERNELS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def rotate(q, cos, sin):
    b = nl.program_id(axis=0)
    h = nl.program_id(axis=1)
    out = nl.ndarray(q.shape, dtype=q.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:q.shape[-1]]
    t = nl.load(q[b, h, i_p, i_f])
    c = nl.load(cos[b, i_p, i_f])
    s = nl.load(sin[b, i_p, i_f])
    nl.store(out[b, h, i_p, i_f], value=nl.add(nl.multiply(t, c), nl.multiply(t, s)))
    return out
"""

GRID_SCRIPT = """\
import argparse
import torch
from rotate_kernels import rotate


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--heads", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--dim", type=int, default=64)
    return parser.parse_args()


def tables(dim, positions, base=10000):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))
    grown = inv[None, :, None].float().expand(positions.shape[0], -1, 1)
    freqs = (grown @ positions[:, None, :].float()).transpose(1, 2)
    both = torch.cat((freqs, freqs), dim=-1)
    return both.cos(), both.sin()


def run(bs, nh, dim):
    positions = torch.stack([torch.arange(128) for _ in range(bs)])
    q = torch.randn(bs, nh, 128, dim)
    cos, sin = tables(dim, positions)
    return rotate[bs, nh](q, cos, sin)


def main():
    args = parse_args()
    for bs in args.batch_sizes:
        for nh in args.heads:
            try:
                run(bs, nh, dim=args.dim)
            except Exception:
                pass


if __name__ == "__main__":
    main()
"""


def test_computed_tables_and_a_launch_grid_are_read_and_proven(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "nki_samples" / "tutorials" / "rotate"
    folder.mkdir(parents=True)
    (folder / "rotate_kernels.py").write_text(GRID_KERNELS, encoding="utf-8")
    (folder / "rotate_torch.py").write_text(GRID_SCRIPT, encoding="utf-8")
    found = launches(folder / "rotate_torch.py", {"rotate": ("q", "cos", "sin")})
    line = next(i for i, text in enumerate(GRID_SCRIPT.splitlines(), 1) if "rotate[bs, nh]" in text)
    spec = "q=float32[2,2,128,64] cos=float32[2,128,64] sin=float32[2,128,64]"
    # the first item of each loop, the parameter's default and keyword, the tables' shapes, the grid
    assert [(x.kernel, x.spec, x.origin, x.grid) for x in found] == [
        ("rotate", spec, f"rotate_torch.py:{line}", (2, 2))
    ]
    rel = "src/nki_samples/tutorials/rotate/rotate_kernels.py"
    scripted = _script_inputs(tmp_path)
    verdicts = _file_verdicts(
        folder / "rotate_kernels.py", rel, Settings(trusted_workspace=True), {}, scripted
    )
    assert [(v.status, f"inputs: shapes from rotate_torch.py:{line}" in v.detail) for v in verdicts] == [
        ("proven", True)
    ], verdicts
