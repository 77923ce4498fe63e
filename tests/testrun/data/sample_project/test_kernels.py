"""The user's tests: plain pytest, NumPy inputs, `import nki` through the kernels module."""

import numpy as np

from kernels import add, add_wrong, too_tall


def _inputs(shape=(128, 64)):
    rng = np.random.default_rng(0)
    return rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)


def test_add_matches_numpy():
    a, b = _inputs()
    np.testing.assert_allclose(add(a, b), a + b, rtol=1e-6)


def test_wrong_kernel_is_caught():
    a, b = _inputs()
    np.testing.assert_allclose(add_wrong(a, b), a + b, rtol=1e-6)


def test_kernel_the_simulator_refuses():
    (a, _) = _inputs((256, 64))
    np.testing.assert_allclose(too_tall(a), a)
