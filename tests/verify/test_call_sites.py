"""What a test file calls a kernel with (``verify.call_sites``): NumPy arrays built from literals, passed
directly or through a variable, in the call forms kernels are run with."""

from __future__ import annotations

import ast
import textwrap

from nki_studio.verify.call_sites import array_spec, call_site_fields
from nki_studio.verify.spec import TensorSpec

PARAMS = ("a", "b", "scale")


def _spec(expr: str) -> TensorSpec | None:
    return array_spec(ast.parse(expr, mode="eval").body)


def test_numpy_constructors_from_literals() -> None:
    assert _spec("np.zeros((128, 512), np.float32)") == TensorSpec("float32", (128, 512))
    assert _spec("numpy.ones(shape=(4, 8), dtype='float16')") == TensorSpec("float16", (4, 8))
    assert _spec("np.full((2, 3), 1.5, np.int32)") == TensorSpec("int32", (2, 3))
    assert _spec("np.empty(64)") == TensorSpec("float64", (64,))  # NumPy's default dtype
    assert _spec("np.random.rand(128, 512).astype(nl.bfloat16)") == TensorSpec("bfloat16", (128, 512))
    assert _spec("rng.standard_normal((16, 32), dtype=np.float32)") == TensorSpec("float32", (16, 32))
    assert _spec("np.random.uniform(-1, 1, size=(8, 8)).astype(np.float16)") == TensorSpec("float16", (8, 8))
    assert _spec("np.zeros(shape)") is None  # not a literal
    assert _spec("np.zeros((128, 512), weird)") is None  # not a dtype
    assert _spec("make_input()") is None


def test_calls_of_the_kernel_give_its_parameters() -> None:
    source = textwrap.dedent("""\
        import numpy as np
        from kernels import add


        def test_direct():
            add(np.zeros((128, 512), np.float32), b=np.ones((128, 512), dtype=np.bfloat16), scale=2.0)


        def test_through_variables():
            a = np.zeros((1, 1), np.float32)
            a = np.random.rand(64, 32).astype(np.float16)
            nki.simulate_kernel(add, a, other)
        """)
    assert call_site_fields(source, "add", PARAMS) == {
        "a": TensorSpec("float32", (128, 512)),  # the first call in the file wins
        "b": TensorSpec("bfloat16", (128, 512)),
    }
    later = source.replace("def test_direct():\n    add(", "def test_direct():\n    other_kernel(")
    assert call_site_fields(later, "add", PARAMS) == {
        "a": TensorSpec("float16", (64, 32))
    }  # the last assignment


def test_grid_and_simulate_call_forms() -> None:
    grid = "kernels.add[2, 2](np.zeros((4, 4), np.int8), np.zeros((4, 4), np.int8))"
    assert call_site_fields(grid, "add", PARAMS)["b"] == TensorSpec("int8", (4, 4))
    sim = "nki.simulate(add)(np.ones((2, 2), np.float32), x)"
    assert call_site_fields(sim, "add", PARAMS) == {"a": TensorSpec("float32", (2, 2))}
    assert call_site_fields("add(", "add", PARAMS) == {}


def test_torch_constructors_and_conversions() -> None:
    assert _spec("torch.randn(128, 512, dtype=torch.bfloat16)") == TensorSpec("bfloat16", (128, 512))
    assert _spec("torch.zeros((64, 32))") == TensorSpec("float32", (64, 32))  # PyTorch's default dtype
    assert _spec("torch.ones(size=[8, 8], dtype=torch.float16)") == TensorSpec("float16", (8, 8))
    assert _spec("torch.rand(16)") == TensorSpec("float32", (16,))
    assert _spec("torch.full((4, 4), 7)") == TensorSpec("int64", (4, 4))  # dtype from the fill value
    assert _spec("torch.full((4, 4), 0.5)") == TensorSpec("float32", (4, 4))
    assert _spec("torch.randn(4, 4).to(torch.bfloat16)") == TensorSpec("bfloat16", (4, 4))
    assert _spec("torch.randn(4, 4).to(dtype=torch.float16)") == TensorSpec("float16", (4, 4))
    assert _spec("torch.randn(4, 4).half().contiguous()") == TensorSpec("float16", (4, 4))
    assert _spec("torch.randn(4, 4, dtype=torch.bfloat16).float().numpy()") == TensorSpec("float32", (4, 4))
    assert _spec("torch.randn(4, 4).to('cpu')") == TensorSpec("float32", (4, 4))  # a device keeps the dtype
    assert _spec("torch.randn(4, 4).to(other.dtype)") is None  # not a literal
    assert _spec("torch.randn(4, n)") is None  # n is bound to nothing literal
    assert _spec("torch.randint(0, 10, (4, 4))") is None  # not read


def test_dimensions_named_by_int_literals() -> None:
    source = textwrap.dedent("""\
        import torch
        P = 128


        def test_it():
            a, b = P, 512
            d = 64
            add(torch.zeros((P, d)), np.ones((d, 32), np.float32))
        """)
    assert call_site_fields(source, "add", PARAMS) == {
        "a": TensorSpec("float32", (128, 64)),
        "b": TensorSpec("float32", (64, 32)),
    }


def test_pytest_fixtures_the_test_takes() -> None:
    source = textwrap.dedent("""\
        import pytest
        import torch

        N = 256


        @pytest.fixture
        def x():
            return torch.randn(N, 512, dtype=torch.bfloat16)


        @pytest.fixture(scope="module")
        def y():
            t = np.zeros((N, 4), np.float16)
            yield t


        def helper():
            return torch.zeros((9, 9))


        def test_add(x, y, scale):
            add(x, y, scale)


        def test_not_a_fixture(x):
            add(helper(), x)
        """)
    assert call_site_fields(source, "add", PARAMS) == {
        "a": TensorSpec("bfloat16", (256, 512)),
        "b": TensorSpec("float16", (256, 4)),
    }
    # a fixture of a conftest.py: the file's own fixture of the same name takes precedence
    conftest = {"scale": TensorSpec("float32", (1,)), "x": TensorSpec("int8", (2, 2))}
    assert call_site_fields(source, "add", PARAMS, conftest)["scale"] == TensorSpec("float32", (1,))
    assert call_site_fields(source, "add", PARAMS, conftest)["a"] == TensorSpec("bfloat16", (256, 512))
    # a name the test function neither assigns nor takes is not a fixture
    assert call_site_fields("def test_k():\n    add(x)\n", "add", PARAMS, conftest) == {}
