"""nki.language helpers against NumPy oracles (language.md §6-§12)."""

from collections.abc import Callable

import ml_dtypes
import nki_studio.sim.language as nl
import numpy as np
import pytest
from nki_studio.model import nki_api
from nki_studio.model.targets import Generation, NkiVersion, Target
from nki_studio.sim import alu, context
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import HardwareLimitError, NotImplementedInSimulator, SimulationError
from nki_studio.sim.scalars import NkiScalar, VirtualRegister

RNG = np.random.default_rng(3)


@pytest.fixture
def sess():
    with context.session() as ctx:
        yield ctx


def tile(values, dtype=np.float32, buffer=nl.sbuf):
    t = nl.ndarray(values.shape, dtype, buffer=buffer)
    write(t, values)
    return t


def test_binary_ops_with_tiles_scalars_and_partition_vectors(sess):
    x, y = RNG.random((128, 16), np.float32), RNG.random((128, 1), np.float32)
    tx, ty = tile(x), tile(y)
    assert np.allclose(read(nl.add(tx, 2.0)), x + 2)
    assert np.allclose(read(nl.multiply(tx, ty)), x * y)  # (P,1) broadcast (lenient, documented)
    assert np.allclose(read(nl.maximum(tx, tile(x[::-1].copy()))), np.maximum(x, x[::-1]))
    assert np.array_equal(read(nl.greater(tx, 0.5)), (x > 0.5).astype(np.float32))
    assert nl.greater(tx, 0.5).dtype == np.float32
    assert nl.greater(tx, 0.5, dtype=nl.uint8).dtype == np.uint8
    with pytest.raises(HardwareLimitError, match="do not match"):
        nl.add(tx, tile(RNG.random((128, 8), np.float32)))


def test_unary_math_and_activation_functions(sess):
    x = RNG.standard_normal((64, 32)).astype(np.float32)
    t = tile(x)
    assert np.allclose(read(nl.exp(t)), np.exp(x), rtol=1e-6)
    assert np.allclose(read(nl.relu(t)), np.maximum(x, 0))
    assert np.allclose(read(nl.sigmoid(t)), 1 / (1 + np.exp(-x)), rtol=1e-6)
    assert np.allclose(read(nl.cos(t)), np.cos(x), rtol=1e-6)
    assert np.array_equal(read(nl.floor(t)), np.floor(x))
    assert np.allclose(read(nl.rsqrt(tile(np.abs(x) + 1))), 1 / np.sqrt(np.abs(x) + 1), rtol=1e-6)


@pytest.mark.parametrize(
    ("names", "arity"),
    [
        ((*nki_api.LANGUAGE_UNARY_MATH, *nki_api.LANGUAGE_ACTIVATIONS), 1),
        (nki_api.LANGUAGE_BINARY, 2),
        (nki_api.LANGUAGE_REDUCTIONS, 1),
    ],
    ids=["unary", "binary", "reductions"],
)
def test_every_stubbed_elementwise_and_reduction_name_runs(sess, names: tuple[str, ...], arity: int):
    """The simulator registers its element-wise and reduction functions from the stubs' names (``nki_api``):
    each must have maths behind it, not only a name."""
    for name in names:
        op = alu.alu_op(name)
        dtype = np.int32 if op is not None and op.kind == alu.BITVEC else np.float32  # bit ops take integers
        operands = [tile(np.full((4, 8), 2 - i), dtype) for i in range(arity)]
        args = [*operands, 1] if name in nki_api.LANGUAGE_REDUCTIONS else operands
        result = getattr(nl, name)(*args)
        assert result.shape[0] == 4, name


def test_result_dtype_promotion_and_output_rounding(sess):
    a = tile(np.full((2, 2), 1.0, np.float32), nl.bfloat16)
    b = tile(np.full((2, 2), 2**-9, np.float32), nl.bfloat16)
    s = nl.add(a, b)
    assert s.dtype == ml_dtypes.bfloat16 and (read(s) == 1.0).all()
    assert nl.add(a, tile(np.ones((2, 2)), nl.float16)).dtype == np.float32
    assert nl.add(tile(np.ones((2, 2)), nl.int8), tile(np.ones((2, 2)), nl.uint8)).dtype == np.int16
    assert nl.add(a, 1.0, dtype=nl.float32).dtype == np.float32


def test_bitwise_ops_work_on_raw_integers(sess):
    a = tile(np.array([[0x0F0F, 7, -8]]), nl.int32)
    b = tile(np.array([[0x00FF, 2, 1]]), nl.int32)
    assert read(nl.bitwise_and(a, b), raw=True).tolist() == [[0x000F, 2, 0]]
    assert read(nl.left_shift(a, b), raw=True).tolist()[0][1] == 28
    assert read(nl.right_shift(a, b), raw=True).tolist()[0][2] == (2**32 - 8) >> 1  # logical shift


def test_reductions_follow_the_axis_rules(sess):
    x = RNG.random((32, 4, 8), np.float32)
    t = tile(x)
    assert np.allclose(read(nl.sum(t, axis=2)), x.sum(axis=2))
    assert np.allclose(read(nl.max(t, axis=(1, 2), keepdims=True)), x.max(axis=(1, 2), keepdims=True))
    assert nl.sum(t, axis=(1, 2)).shape == (32, 1)
    assert np.allclose(read(nl.mean(t, axis=[1, 2])).reshape(-1), x.mean(axis=(1, 2)))
    assert np.allclose(read(nl.var(t, axis=2)), x.var(axis=2, keepdims=True))
    assert np.array_equal(
        read(nl.all(tile(np.array([[1, 1], [1, 0]], np.float32)), axis=1)).reshape(-1), [1, 0]
    )
    with pytest.raises(HardwareLimitError, match="trailing"):
        nl.sum(t, axis=1)
    with pytest.raises(HardwareLimitError, match="free dims"):
        nl.sum(t, axis=0)


def test_softmax_and_rms_norm(sess):
    x = (RNG.standard_normal((128, 64)) * 10).astype(np.float32)
    t = tile(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert np.allclose(read(nl.softmax(t, axis=1)), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    w = RNG.random((1, 64), np.float32)
    expect = x / np.sqrt((x * x).sum(axis=1, keepdims=True) / 64 + 1e-6) * w
    assert np.allclose(read(nl.rms_norm(t, tile(w), axis=1, n=64)), expect, rtol=1e-5)


def test_load_store_copy_and_transpose_paths(sess):
    h = tile(RNG.random((128, 64), np.float32), buffer=nl.shared_hbm)
    s = nl.load(h, dtype=nl.bfloat16)
    assert s.buffer is nl.sbuf and s.dtype == ml_dtypes.bfloat16
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nl.copy(s, dtype=nl.float32))
    assert np.array_equal(read(out), read(h).astype(ml_dtypes.bfloat16).astype(np.float32))
    tp = nl.transpose(nl.load(h[:, 0:32]))
    assert tp.buffer is nl.psum and np.array_equal(read(tp), read(h)[:, 0:32].T)
    assert np.array_equal(read(nl.load_transpose2d(h[0:64, :])), read(h)[0:64].T)
    with pytest.raises(HardwareLimitError, match="PSUM"):
        nl.store(out[:, 0:32], tp)
    with pytest.raises(HardwareLimitError, match="HBM"):
        nl.load(s)


def test_matmul_both_layouts_and_limits(sess):
    a, b = RNG.random((128, 64), np.float32), RNG.random((128, 512), np.float32)
    r = nl.matmul(tile(a), tile(b), transpose_x=True)
    assert r.buffer is nl.psum and r.shape == (64, 512) and np.allclose(read(r), a.T @ b, rtol=1e-5)
    c = RNG.random((32, 128), np.float32)
    assert np.allclose(read(nl.matmul(tile(c), tile(b))), c @ b, rtol=1e-5)
    with pytest.raises(HardwareLimitError, match="exceeds"):
        nl.matmul(tile(a), tile(RNG.random((128, 1024), np.float32)), transpose_x=True)


def test_broadcast_where_gather(sess):
    col = RNG.random((128, 1), np.float32)
    assert np.array_equal(read(nl.broadcast_to(tile(col), (128, 8))), np.repeat(col, 8, axis=1))
    row = RNG.random((1, 8), np.float32)
    assert np.array_equal(read(nl.broadcast_to(tile(row), (4, 8))), np.repeat(row, 4, axis=0))
    cond = tile(np.array([[1, 0], [0, 1]], np.float32))
    assert read(nl.where(cond, tile(np.full((2, 2), 5.0)), -1.0)).tolist() == [[5, -1], [-1, 5]]
    data = tile(np.arange(12, dtype=np.float32).reshape(2, 6))
    idx = tile(np.array([[5, 0], [1, 1]]), nl.int32)
    assert read(nl.gather_flattened(data, idx)).tolist() == [[5, 0], [7, 7]]


def test_creation_helpers(sess):
    assert (read(nl.zeros((4, 4), nl.float32)) == 0).all()
    assert (read(nl.full((4, 4), 3, nl.int32), raw=True) == 3).all()
    z = nl.zeros_like(nl.ones((4, 2), nl.bfloat16))
    assert z.dtype == ml_dtypes.bfloat16 and z.buffer is nl.sbuf
    e = nl.empty_like(nl.ndarray((2, 3), nl.float32, buffer=nl.shared_hbm))
    assert e.buffer is nl.shared_hbm and np.isnan(read(e)).all()
    ident = nl.shared_identity_matrix(4, dtype=nl.float32)
    assert np.array_equal(read(ident), np.eye(4))
    r = read(nl.rand((8, 8), nl.float32))
    assert ((r >= 0) & (r < 1)).all()
    with pytest.raises(SimulationError, match="string buffer"):
        nl.ndarray((2, 2), nl.float32, buffer="sbuf")
    with pytest.raises(HardwareLimitError, match="bank boundary"):
        nl.ndarray((2, 2), nl.float32, buffer=nl.psum, address=(0, 100))


def test_fori_loop_variable_kind_depends_on_version():
    seen = []
    with context.session(target=Target(nki_version=NkiVersion(0, 7))):
        nl.fori_loop(1, 7, lambda i: seen.append(i), step=2)
        assert [type(i) for i in seen] == [NkiScalar] * 3 and [i.value for i in seen] == [1, 3, 5]
        with pytest.raises(SimulationError, match="must return None"):
            nl.fori_loop(0, 1, lambda i: 1)
        with pytest.raises(SimulationError, match=r"removed in NKI 0\.7"):
            list(nl.dynamic_range(3))
    with context.session(target=Target(nki_version=NkiVersion(0, 6))) as ctx:
        regs = []
        nl.fori_loop(0, 2, lambda i: regs.append(i))
        assert all(isinstance(r, VirtualRegister) and r.frozen for r in regs)
        assert [r.value for r in nl.dynamic_range(2)] == [0, 1]
        assert any("dynamic_range is deprecated" in w for w in ctx.warnings)
        with nl.no_reorder(), pytest.raises(SimulationError, match="no_reorder"):
            nl.fori_loop(0, 1, lambda i: None)


def test_fori_loop_unroll_runs_the_same_iterations_but_needs_compile_time_bounds():
    with context.session(target=Target(nki_version=NkiVersion(0, 7))):
        seen = []
        nl.fori_loop(0, 6, lambda i: seen.append(i.value), step=2, unroll=True)
        assert seen == [0, 2, 4]
        with pytest.raises(SimulationError, match="known at compile time"):
            nl.fori_loop(0, NkiScalar(3, "int32"), lambda i: None, unroll=True)
        nl.fori_loop(0, NkiScalar(2, "int32"), lambda i: seen.append(i.value))  # a compiled loop takes it
        assert seen[-2:] == [0, 1]


def test_if_else_runs_the_branch_its_condition_selects():
    with context.session(target=Target(nki_version=NkiVersion(0, 7))) as ctx:
        taken = []

        def branch(label: str) -> Callable[[], None]:
            # a callback's Python code runs for both branches of a runtime condition (tracing calls both);
            # only the selected one executes, which the untaken flag tells apart
            return lambda: taken.append(label if not context.untaken() else f"({label})")

        nl.if_else(NkiScalar(-3) > 0, branch("then"), branch("else"))
        nl.if_else(NkiScalar(-3), branch("then"))  # any nonzero value, negative included
        nl.if_else(NkiScalar(0) * 5, branch("then"))  # zero, no else_fn: nothing executes
        nl.if_else(True, branch("py-then"), branch("py-else"))  # compile time: only the selected is called
        nl.if_else(0, branch("py-then"), branch("py-else"))
        assert taken == ["(then)", "else", "then", "(then)", "py-then", "py-else"]
        with pytest.raises(SimulationError, match="32-bit NkiScalar"):
            nl.if_else(NkiScalar(1, "int64"), lambda: None)
        with pytest.raises(SimulationError, match="bool/int or a 32-bit"):
            nl.if_else(1.5, lambda: None)
        assert not ctx.warnings
        nl.if_else(VirtualRegister(1), lambda: 7)  # undocumented forms: accepted with a warning each
        assert len(ctx.warnings) == 2 and "VirtualRegister" in ctx.warnings[0]


def test_while_loop_runs_until_zero_and_caps_runaway_loops():
    with context.session(while_loop_cap=100):
        count = []

        def body(r):
            count.append(1)
            return VirtualRegister(r.value - 1)

        nl.while_loop(VirtualRegister(5), body)
        assert len(count) == 5
        with pytest.raises(SimulationError, match="did not terminate"):
            nl.while_loop(VirtualRegister(1), lambda r: r)


def test_nki_scalar_wraps_and_refuses_python_control_flow():
    big = NkiScalar(100000) * 100000
    assert big.value == 1410065408
    assert (NkiScalar(2**31 - 1) + 1).value == -(2**31)
    with pytest.raises(TypeError):
        bool(NkiScalar(1) < 2)
    with pytest.raises(TypeError):
        range(NkiScalar(3))
    with pytest.raises(TypeError):
        assert NkiScalar(1, "int64") < 2


def test_program_queries_and_tile_size(sess):
    assert nl.program_id(0) == 0 and nl.num_programs() == 1 and nl.program_ndim() == 0
    assert nl.tile_size.pmax == 128 and nl.tile_size.psum_bank_fmax == 512
    assert nl.tile_size.sbuf_fmax_bytes == 224 * 1024
    with context.session(target=Target(Generation.GEN4)):
        assert nl.tile_size.sbuf_size_bytes == 256 * 1024 * 128


def test_unknown_and_legacy_names_are_not_implemented_errors():
    from nki_studio.sim.language import par_dim  # a legacy name imports ...

    with pytest.raises(NotImplementedInSimulator, match=r"nl\.par_dim.*drop nl.par_dim"):
        par_dim(128)  # ... and fails where it is used
    with pytest.raises(AttributeError, match=r"nl\.no_such_name"):
        nl.no_such_name  # noqa: B018
    assert "not implemented" in repr(nl.mgrid)
    assert nl.add.__name__ == "add" and nl.sum.__name__ == "sum"


def test_nki_object_subclasses_construct_by_keyword_even_as_dataclasses():
    from dataclasses import dataclass

    @dataclass
    class Section(nl.NKIObject):
        idx = None  # unannotated, as nki-library writes them
        offset = None

    @dataclass
    class Dims(nl.NKIObject):
        p: int
        f: int = 512

        def __post_init__(self):
            self.total = self.p * self.f

    @dataclass(frozen=True)
    class Frozen(nl.NKIObject):
        shape: tuple = ()

    assert Frozen(shape=(1, 2)).shape == (1, 2)
    s = Section(idx=1, offset=128)
    assert (s.idx, s.offset) == (1, 128)
    d = Dims(128)
    assert (d.p, d.f, d.total) == (128, 512, 65536) and Dims(1, 2) == Dims(1, 2)


IF_ELSE_KERNEL = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def if_else_kernel(flag, data):
    flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=flag_sb, src=flag)
    condition = nisa.scalar_load(flag_sb) > 0
    result = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=result, src=data)

    def then_branch():
        nisa.tensor_scalar(result, result, op0=nl.add, operand0=10.0)

    def else_branch():
        nisa.tensor_scalar(result, result, op0=nl.subtract, operand0=10.0)

    nl.if_else(condition, then_branch, else_branch)
    out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=result)
    return out
"""


def test_the_if_else_page_example_runs_each_branch(tmp_path):
    from nki_studio.sim import api

    path = tmp_path / "k.py"
    path.write_text(IF_ELSE_KERNEL)
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    for flag, expect in ((3, data + 10), (0, data - 10), (-1, data - 10)):
        result = api.simulate(str(path), np.array([[flag]], np.int32), data)
        np.testing.assert_array_equal(result.output, expect)
        assert result.report.nki_version == "0.7"
