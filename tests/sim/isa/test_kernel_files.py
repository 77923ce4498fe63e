"""Unmodified kernel files through ``simulate``: ISA errors name the kernel file and line; the trace
attributes every instruction to its line; not-implemented APIs say so with file:line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from nki_studio.sim import simulate
from nki_studio.sim.errors import HardwareLimitError, NotImplementedInSimulator

KERNEL = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def scale_rows(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    s = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=t, op=nl.square, data=t, reduce_op=nl.add, reduce_res=s,
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s, engine=nisa.vector_engine)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def bad_shapes(x):
    a = nl.ndarray((64, 8), dtype=nl.float32, buffer=nl.sbuf)
    b = nl.ndarray((64, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=b, value=0.0)
    nisa.memset(dst=a, value=1.0)
    nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.add)
    return x


@nki.jit
def uses_missing(x):
    st = nl.ndarray((128, 6), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.rand_get_state(dst=st)
    return x
"""


@pytest.fixture
def kernel_file(tmp_path: Path) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(textwrap.dedent(KERNEL))
    return path


def _line(path: Path, needle: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if needle in text)


def test_kernel_runs_and_trace_names_lines(kernel_file):
    x = np.random.default_rng(0).standard_normal((128, 16)).astype(np.float32)
    result = simulate(kernel_file, x, kernel_name="scale_rows", trace=True)
    np.testing.assert_allclose(result.output, x * x * (x * x).sum(axis=1, keepdims=True), rtol=1e-5)
    events = result.report.trace
    ops = [(e.op, e.engine, e.line) for e in events if e.op.startswith("nisa.")]
    assert ops[1] == ("nisa.activation", "scalar", _line(kernel_file, "nisa.activation("))
    assert ops[2] == ("nisa.tensor_scalar", "vector", _line(kernel_file, "nisa.tensor_scalar("))
    assert all(e.file == str(kernel_file) for e in events if e.op.startswith("nisa."))


def test_limit_violation_names_the_kernel_line(kernel_file):
    with pytest.raises(HardwareLimitError, match="same elements per partition") as err:
        simulate(kernel_file, np.zeros((2, 2), np.float32), kernel_name="bad_shapes")
    assert (err.value.file, err.value.line) == (str(kernel_file), _line(kernel_file, "nisa.tensor_tensor("))


def test_not_implemented_names_api_and_line(kernel_file):
    with pytest.raises(NotImplementedInSimulator) as err:
        simulate(kernel_file, np.zeros((2, 2), np.float32), kernel_name="uses_missing")
    line = _line(kernel_file, "nisa.rand_get_state(")
    assert str(err.value).startswith(
        f"not implemented in the embedded simulator: nisa.rand_get_state ({kernel_file}:{line})"
    )
