"""migrate.masked_values: a named result of an element-wise call under a whole-instruction mask becomes the
result or an unwritten tile (source in, source out); what it does not cover stays listed."""

from __future__ import annotations

import pytest
from masked_kernels import BANDED, LEGACY
from nki_studio.migrate.rewrite import migrate_source


def test_a_masked_named_result_becomes_the_result_or_an_unwritten_tile() -> None:
    m = migrate_source(LEGACY + BANDED)
    assert not m.manual
    assert (
        "        s = nl.add(t, bias,\n"
        "                   dtype=nl.float32) if on else "
        "nl.ndarray(np.broadcast_shapes(t.shape, bias.shape), dtype=nl.float32, buffer=nl.sbuf)\n"
    ) in m.text
    assert "        if on: nl.store(out[i], value=s)\n" in m.text
    assert m.text.count("\n") == (LEGACY + BANDED).count("\n")  # line numbers hold


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("s = nl.add(t, bias,", "s = nl.matmul(t, bias,"), "not element-wise"),
        (
            ("s = nl.add(t, bias,", "s = nl.add(nl.exp(t, mask=i >= 1), bias,"),
            "a nested call with its own mask",
        ),
        (("s = nl.add(t, bias,", "s = nl.add(b, 1.0,"), "no tile operand"),
    ],
)
def test_masked_results_it_does_not_cover_stay_listed(change: tuple[str, str], why: str) -> None:
    m = migrate_source(LEGACY + BANDED.replace(*change))
    assert "mask=" in {s.construct for s in m.manual}, why
