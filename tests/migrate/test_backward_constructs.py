"""The rewrite of the flash-attention backward core's constructs where it stops: what is left listed (source in,
source out; the proof is in tests/service/test_migration_backward.py)."""

from __future__ import annotations

from test_rewrite import body_of, migrate


def test_a_loop_reduce_bound_to_a_name_or_masked_per_element_stays_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            for i in nl.affine_range(4):
                t = nl.load(a[i])
                b = nl.loop_reduce(t, op=np.add, loop_indices=[i])
                acc[:, :] = nl.loop_reduce(t, op=np.add, loop_indices=[i], mask=(t > 0))
                acc[:, :] = nl.loop_reduce(t, op=np.max, loop_indices=[i], mask=(i < 3))
            return acc
        """
    )
    body = body_of(m).splitlines()
    # a name's destination is the call's own previous result; a tile-valued mask selects elements
    assert body[5] == "        b = nl.loop_reduce(t, op=np.add, loop_indices=[i])"
    assert (
        body[6]
        == "        acc[:, :] = nl.loop_reduce(t, op=np.add, loop_indices=[i], mask=(nl.greater(t, 0)))"
    )
    assert body[7] == (
        "        if i < 3: nisa.tensor_copy(dst=acc[:, :], src=t) if i == 0 else "
        "nisa.tensor_tensor(dst=acc[:, :], data1=acc[:, :], data2=t, op=np.max)"
    )
    assert [(s.line, s.construct) for s in m.manual] == [
        (11, "nl.loop_reduce"),
        (12, "nl.loop_reduce"),
        (12, "mask="),
    ]


def test_a_multi_line_loop_reduce_keeps_its_lines() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            for i in nl.affine_range(4):
                acc[:, :] = nl.loop_reduce(
                    nl.load(a[i]), op=np.add,
                    loop_indices=[i])
            return acc
        """
    )
    body = body_of(m).splitlines()
    assert body[4:7] == [
        "        nisa.tensor_copy(dst=acc[:, :], src=nl.load(a[i])) if i == 0 else nisa.tensor_tensor(dst=acc[:, :],",
        "            data1=acc[:, :],",
        "            data2=nl.load(a[i]), op=np.add)",
    ]
    assert body[7] == "    return acc" and not m.manual


def test_a_named_result_under_a_mask_without_a_tile_operand_stays_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            for i in nl.affine_range(4):
                x = nl.load(a[i], mask=(i < 3))
                y = nl.full((128, 1), i, dtype=nl.float32, mask=(i < 3))
            return x, y
        """
    )
    body = body_of(m).splitlines()
    assert body[3] == (
        "        x = nl.load(a[i]) if i < 3 else nl.ndarray(a[i].shape, dtype=a[i].dtype, buffer=nl.sbuf)"
    )
    assert [(s.line, s.construct) for s in m.manual] == [(10, "mask=")]
