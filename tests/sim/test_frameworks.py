"""Framework tensors at the kernel boundary (``sim.frameworks``), and the ``torch_xla`` stand-in (``sim.xla``).

torch and jax are not dependencies: the boundary is checked with a framework of this file's own (its tensors keep
their values as raw bytes with a dtype name and a device, as torch's do, so nothing NumPy-shaped leaks through),
and with the real torch/jax where installed (those tests skip otherwise; the corpus benchmark runs nki-samples'
PyTorch and JAX scripts with them).
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from nki_studio.sim import dropin, frameworks
from nki_studio.sim.errors import MissingName

KERNELS = """
import numpy as np
import nki
import nki.language as nl
import nki.isa as nisa
from neuronxcc import nki as legacy_nki
import neuronxcc.nki.language as lnl


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    y = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=y, src=b)
    z = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
    nisa.dma_copy(dst=out, src=z)
    return out


@nki.jit
def double_into(a, out):
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    y = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=x, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=y)


@legacy_nki.jit
def legacy_add(a, b):
    out = lnl.ndarray(a.shape, dtype=a.dtype, buffer=lnl.shared_hbm)
    i_p = lnl.program_id(0) * 32 + lnl.arange(32)[:, None]
    i_f = lnl.arange(a.shape[1])[None, :]
    lnl.store(out[i_p, i_f], value=lnl.load(a[i_p, i_f]) + lnl.load(b[i_p, i_f]))
    return out


def legacy_grid(a, b):
    return legacy_add[a.shape[0] // 32](a, b)
"""


@pytest.fixture
def kernels(tmp_path: Path) -> Any:
    path = tmp_path / "framework_kernels.py"
    path.write_text(KERNELS)
    return dropin.load_module(str(path))


@dataclass
class HostTensor:
    """A framework tensor: raw bytes, a dtype name (``bfloat16`` as such, not a NumPy type) and a device."""

    data: bytes
    dtype: str
    shape: tuple[int, ...]
    device: str


@dataclass(frozen=True)
class HostDtype:
    """Something else of the framework's module that kernels may be given (a dtype object): not a tensor."""

    name: str


class HostBridge:
    """``frameworks.Bridge`` for ``HostTensor``."""

    def accepts(self, value: object) -> bool:
        return isinstance(value, HostTensor)

    def to_numpy(self, value: Any) -> np.ndarray:
        dtype = np.dtype(getattr(ml_dtypes, value.dtype, None) or value.dtype)
        return np.frombuffer(value.data, dtype).reshape(value.shape)

    def from_numpy(self, array: np.ndarray, like: Any) -> Any:
        return HostTensor(np.ascontiguousarray(array).tobytes(), array.dtype.name, array.shape, like.device)

    def write_back(self, target: Any, array: np.ndarray) -> None:
        target.data = self.from_numpy(array.reshape(target.shape), target).data


def host(array: np.ndarray, device: str = "neuron:0") -> HostTensor:
    return HostTensor(array.tobytes(), array.dtype.name, array.shape, device)


@pytest.fixture
def host_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(frameworks.BRIDGES, HostTensor.__module__.split(".")[0], HostBridge())


def values(tensor: HostTensor) -> np.ndarray:
    return HostBridge().to_numpy(tensor)


@pytest.mark.usefixtures("host_framework")
def test_a_framework_kernel_result_comes_back_as_its_tensor_with_dtype_and_device(kernels: Any) -> None:
    rng = np.random.default_rng(1)
    a, b = (rng.random((128, 64)).astype(ml_dtypes.bfloat16) for _ in range(2))
    with dropin.installed():
        out = kernels.add(host(a, "neuron:3"), host(b))
    assert isinstance(out, HostTensor)
    assert (out.dtype, out.shape, out.device) == (
        "bfloat16",
        (128, 64),
        "neuron:3",
    )  # the first tensor's device
    np.testing.assert_array_equal(values(out), (a.astype(np.float32) + b.astype(np.float32)).astype(a.dtype))


@pytest.mark.usefixtures("host_framework")
def test_a_kernel_write_to_a_framework_argument_reaches_it(kernels: Any) -> None:
    a = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
    out = host(np.zeros_like(a))
    with dropin.installed():
        kernels.double_into(host(a), out)
    np.testing.assert_array_equal(values(out), 2 * a)


@pytest.mark.usefixtures("host_framework")
def test_legacy_grid_launch_takes_framework_tensors(kernels: Any) -> None:
    a = np.arange(96 * 16, dtype=np.float16).reshape(96, 16)
    with dropin.installed():
        out = kernels.legacy_grid(host(a), host(a))
    assert isinstance(out, HostTensor) and out.dtype == "float16"
    np.testing.assert_array_equal(values(out), a + a)


@pytest.mark.usefixtures("host_framework")
def test_other_values_of_the_framework_and_numpy_arrays_pass_as_they_are() -> None:
    assert frameworks.converted(HostDtype("bfloat16")) is None
    assert frameworks.converted(np.zeros(3)) is None
    converted = frameworks.converted(host(np.ones((2, 2), np.float32)))
    assert converted is not None and converted.array.dtype == np.float32


def test_torch_xla_stands_in_as_the_host_while_the_drop_in_is_installed() -> None:
    if importlib.util.find_spec("torch_xla") is not None:
        pytest.skip("a real torch_xla is installed: the drop-in leaves it alone")
    with dropin.installed():
        from torch_xla.core import xla_model as xm

        xm.mark_step()
        with pytest.raises(MissingName, match=r"torch_xla\.get_rng_state"):
            xm.get_rng_state()
    assert "torch_xla" not in sys.modules  # the device is the host's (test below, with torch)


TORCH_SCRIPT = """
import torch
import torch_neuronx
from torch_xla.core import xla_model as xm
from torch_neuronx import nki_jit
import neuronxcc.nki.language as nl


@nki_jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:a.shape[0], 0:a.shape[1]]
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]) + nl.load(b[i_p, i_f]))
    return out


device = xm.xla_device()
a = torch.rand((128, 256), dtype=torch.bfloat16).to(device=device)
b = torch.rand((256, 128), dtype=torch.bfloat16).to(device=device).T  # not contiguous
xm.mark_step()
out = add(a, b)
reference = torch_neuronx.trace(torch.add, (a, b))(a, b)
"""


def test_torch_script_on_the_xla_device(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    script = tmp_path / "add_torch.py"
    script.write_text(textwrap.dedent(TORCH_SCRIPT))
    with dropin.installed():
        scope = runpy.run_path(str(script))
    out, a, b = scope["out"], scope["a"], scope["b"]
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16 and out.device.type == "cpu"
    assert torch.equal(out, a + b) and torch.equal(scope["reference"], out)


def test_torch_kernel_write_to_a_non_contiguous_argument_reaches_it(kernels: Any) -> None:
    torch = pytest.importorskip("torch")
    a = torch.arange(128 * 8, dtype=torch.float32).reshape(128, 8)
    out = torch.zeros((8, 128), dtype=torch.float32).T
    with dropin.installed():
        kernels.double_into(a, out)
    assert torch.equal(out, 2 * a)


def test_jax_arrays_in_and_out(kernels: Any) -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    a = jax.random.uniform(jax.random.PRNGKey(0), (96, 16), dtype=jnp.bfloat16)
    with dropin.installed():
        out = kernels.legacy_grid(a, a)
    assert isinstance(out, jax.Array) and out.dtype == jnp.bfloat16
    assert bool(jnp.array_equal(out, a + a))
