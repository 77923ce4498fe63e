"""Column loads (``nl.load(s[c0:c1, j])``, kept ``(P, 1)`` by the legacy load) on our own legacy kernels: where
the rewrite keeps the dim and where it leaves the access alone (source in, source out; the proof of the rewritten
case is in tests/service/test_migration_column_loads.py)."""

from __future__ import annotations

import textwrap

from nki_studio.migrate.rewrite import migrate_source

LEGACY = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n"


def _loads(body: str) -> list[str]:
    """The migrated kernel's ``nl.load`` lines, stripped."""
    text = migrate_source(LEGACY + textwrap.dedent(body)).text
    return [line.strip() for line in text.splitlines() if "nl.load(" in line]


def test_the_last_integer_after_the_slice_becomes_a_one_element_slice() -> None:
    assert _loads(
        """\
        @nki.jit
        def k(a, w):
            _, n = a.shape
            b, _, m = w.shape
            x = nl.load(a[0:128, n - 1])
            y = nl.load(a[nl.ds(0, 128), n // 2])
            z = nl.load(w[b - 1, 0:128, 2])
            return x, y, z
        """
    ) == [
        "x = nl.load(a[0:128, n - 1:(n - 1) + 1])",
        "y = nl.load(a[nl.ds(0, 128), n // 2:(n // 2) + 1])",
        "z = nl.load(w[b - 1, 0:128, 2:3])",
    ]


def test_accesses_the_legacy_load_did_not_reshape_or_of_unknown_rank_are_left_alone() -> None:
    kept = [
        "u = nl.load(a[0:128, 0])",  # rank of `a` unknown
        "v = nl.load(w[0:128, 1])",  # `w` is 3-D: its last dim is kept whole, a 2-D load
        "x = nl.load(s[1, 0:128])",  # no integer after the slice: a row, which a column slice would transpose
        "y = nl.load(s[0:128, -1])",  # counts from the end: `-1:0` would be empty
        "z = nl.load(s[0:128, 0:4])",  # already 2-D
        "r = nl.load(t[0:128, 0])",  # `t` rebound: its rank at the load is not the unpacked one
    ]
    body = (
        "@nki.jit\ndef k(a, s, w, t):\n    _, _, _ = w.shape\n    _, _ = s.shape\n    _, _ = t.shape\n"
        "    t = t.reshape((128, 2, 2))\n"
        + "".join(f"    {line}\n" for line in kept)
        + "    return u, v, x, y, z, r\n"
    )
    assert _loads(body) == kept
