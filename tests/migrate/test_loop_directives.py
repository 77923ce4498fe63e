"""migrate.loop_directives: a loop whose iterator carries ``directives=no_reorder()`` runs under
``nl.no_reorder()`` (source in, source out); other iterator options stay listed."""

from __future__ import annotations

import textwrap

from nki_studio.migrate.rewrite import migrate_source

LEGACY = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n"
CURRENT = "import nki\nimport nki.language as nl\n\n\n"


def test_a_no_reorder_directive_becomes_the_context_manager_around_a_range_loop() -> None:
    m = migrate_source(
        LEGACY
        + textwrap.dedent(
            """\
            @nki.jit
            def k(a, out):
                for i in nl.sequential_range(2, directives=nki.compiler.no_reorder()):  # in order
                    t = nl.load(a[i])
                    nl.store(out[i], value=t)
                return out
            """
        )
    )
    assert not m.manual
    assert m.text == CURRENT + textwrap.dedent(
        """\
        @nki.jit
        def k(a, out):
            with nl.no_reorder():
                for i in range(2):  # in order
                    t = nl.load(a[i])
                    nl.store(out[i], value=t)
            return out
        """
    )
    assert [c.construct for c in m.changes if "directives" in c.construct] == [
        "nl.sequential_range directives=no_reorder()"
    ]


def test_other_iterator_options_stay_listed() -> None:
    m = migrate_source(
        LEGACY
        + "@nki.jit\ndef k(a):\n    for i in nl.sequential_range(2, directives=nki.compiler.other()):\n        pass\n"
    )
    assert "nl.sequential_range options" in {s.construct for s in m.manual}
    assert "no_reorder" not in m.text


def test_a_multi_buffer_directive_is_dropped_for_a_range_loop() -> None:
    m = migrate_source(
        "import neuronxcc.nki as nki\nimport neuronxcc.nki.compiler as ncc\nimport neuronxcc.nki.language as nl\n\n\n"
        + textwrap.dedent(
            """\
            @nki.jit
            def k(a, out, banks):
                for i in nl.sequential_range(
                    2, directives=ncc.multi_buffer(banks)
                ):
                    nl.store(out[i], value=nl.load(a[i]))
            """
        )
    )
    assert not m.manual
    assert "    for i in range(2):\n" in m.text and "multi_buffer" not in m.text
    assert [c.construct for c in m.changes if "directives" in c.construct] == [
        "nl.sequential_range directives=multi_buffer()"
    ]
