"""Legacy tile operators and value-returning ``nisa`` calls, vs NumPy; operators refused under NKI 0.7."""

from __future__ import annotations

import textwrap

import ml_dtypes
import numpy as np
import pytest
from nki_studio.sim import simulate
from nki_studio.sim.errors import SimulationError


def test_tile_operators(legacy):
    source = """
    @nki.jit
    def combine(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        y = nl.load(b)
        z = x * y + -x - 2.0 * y
        z += x / 4.0
        nl.store(out, value=z)
        return out
    """
    rng = np.random.default_rng(3)
    a, b = rng.random((64, 32), np.float32), rng.random((64, 32), np.float32) + 0.5
    expected = a * b + -a - 2.0 * b + a / 4.0
    np.testing.assert_allclose(legacy(source, a, b).outputs[0], expected, rtol=1e-6)


def test_value_returning_activation_reduce_and_affine_select(legacy):
    # exp(x), its row sums, and a causal mask (keep x[p, f] where p >= f, else -1e4), as in legacy attention code.
    source = """
    @nki.jit
    def pieces(x):
        e_out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        s_out = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
        m_out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        e = nisa.activation(op=nl.exp, data=t)
        s = nisa.tensor_reduce(np.add, e, axis=(1,))
        i_p, i_f = nl.mgrid[0:x.shape[0], 0:x.shape[1]]
        m = nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=t, on_false_value=-1e4)
        nl.store(e_out, value=e)
        nl.store(s_out, value=s)
        nl.store(m_out, value=m)
        return e_out, s_out, m_out
    """
    x = np.random.default_rng(5).random((32, 32), np.float32)
    e, s, m = legacy(source, x).outputs
    np.testing.assert_allclose(e, np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(s[:, 0], np.exp(x).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(m, np.where(np.tril(np.ones((32, 32), bool)), x, np.float32(-1e4)))


def test_value_returning_bn_stats_and_bn_aggr(legacy):
    # mean and variance of each row from two bn_stats of 64 columns (one with dtype=) aggregated by bn_aggr
    source = """
    @nki.jit
    def moments(x):
        out = nl.ndarray((x.shape[0], 2), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        stats = nl.ndarray((x.shape[0], 12), dtype=nl.float32, buffer=nl.sbuf)
        stats[:, 0:6] = nisa.bn_stats(t[:, 0:64], dtype=nl.float32)
        stats[:, 6:12] = nisa.bn_stats(t[:, 64:128])
        nl.store(out, value=nisa.bn_aggr(stats))
        return out
    """
    x = np.random.default_rng(7).random((32, 128), np.float32)
    got = legacy(source, x).outputs[0]
    np.testing.assert_allclose(got[:, 0], x.mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(got[:, 1], x.var(axis=1), rtol=1e-4)


def test_legacy_double_row_perf_mode_string(legacy):
    # perf_mode="double_row_gen3" (a 2.x test's string) runs as matmul_perf_mode.double_row: both contract K and
    # the size-2 first free dim
    source = """
    @nki.jit
    def double_row(s, m):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        again = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(s)
        y = nl.load(m)
        nl.store(out, value=nisa.nc_matmul(x, y, perf_mode="double_row_gen3"))
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=x, moving=y, perf_mode=nisa.matmul_perf_mode.double_row)
        nl.store(again, value=nl.copy(acc))
        return out, again
    """
    rng = np.random.default_rng(11)
    s = rng.integers(-2, 3, (128, 2, 128)).astype(ml_dtypes.float8_e4m3)
    m = rng.integers(-2, 3, (128, 2, 512)).astype(ml_dtypes.float8_e4m3)
    out, again = legacy(source, s, m).outputs
    expected = np.einsum("kim,kin->mn", s.astype(np.float32), m.astype(np.float32))
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(again, expected)


def test_iota_and_static_cast(legacy):
    source = """
    @nki.jit
    def ramp(x):
        out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:16, 0:8]
        idx = nisa.iota(i_p * 8 + i_f, dtype=nl.int32)
        nl.store(out, value=nl.static_cast(idx, nl.float32))
        return out
    """
    np.testing.assert_array_equal(
        legacy(source, np.zeros(1, np.float32)).outputs[0], np.arange(128, dtype=np.float32).reshape(16, 8)
    )


def test_tile_operator_under_nki_07_names_its_replacement(tmp_path):
    path = tmp_path / "current.py"
    path.write_text(
        textwrap.dedent(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def add(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(a) + nl.load(b))
                return out
            """
        )
    )
    x = np.ones((8, 8), np.float32)
    with pytest.raises(SimulationError, match=r"tile operator \+ is legacy .* nl\.add\(a, b\)"):
        simulate(str(path), x, x)


def test_psum_operands_of_high_level_calls_move_to_sbuf(legacy):
    # out = x @ y.T.T with y transposed by nl.transpose (PSUM) and the nl.matmul result (PSUM) stored directly.
    source = """
    @nki.jit
    def attention_like(x, y):
        out = nl.ndarray((x.shape[0], y.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
        y_t = nl.transpose(nl.load(y))
        nl.store(out, value=nl.matmul(nl.load(x), y_t, transpose_x=False))
        return out
    """
    rng = np.random.default_rng(12)
    x, y = rng.random((64, 32), np.float32), rng.random((48, 32), np.float32)
    np.testing.assert_allclose(legacy(source, x, y).outputs[0], x @ y.T, rtol=1e-4)


def test_legacy_tensor_tensor_does_not_broadcast_a_column(legacy):
    # The legacy nki.isa.tensor_tensor page (neuronxcc.nki, signature with mask=): "The two tiles must have the
    # same partition axis size and the same number of elements per partition" -- a [128, 1] data2 against
    # [128, 1024] is refused, as in nki-samples' double_row_matmul (its per-row scale takes nisa.tensor_scalar).
    source = """
    @nki.jit
    def scaled(x, s):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nisa.tensor_tensor(nl.load(x), nl.load(s), nl.multiply)
        nl.store(out, value=t)
        return out
    """
    x, s = np.ones((128, 1024), np.float32), np.ones((128, 1), np.float32)
    with pytest.raises(SimulationError, match="same elements per partition: dst=1024, data1=1024, data2=1"):
        legacy(source, x, s)
