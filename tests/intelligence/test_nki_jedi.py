"""The jedi wrapper in-process: which files count, excerpts, import aliases, per-target hover notes."""

from __future__ import annotations

import pytest
from nki_studio.lsp.features.nki_jedi import (
    NkiJedi,
    _dotted_at,
    _excerpt,
    _nki_bound_names,
    imports_nki,
    target_notes,
)
from nki_studio.model.targets import Generation, NkiVersion, Target


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import nki\n", True),
        ("import nki.language as nl\n", True),
        ("from nki import isa as nisa\n", True),
        ("from neuronxcc import nki\n", True),
        ("import neuronxcc.nki.language as nl\n", True),
        ("def f():\n    import nki\n", True),
        ("import numpy as np\n# import nki\n", False),
        ("import nkix\nimport neuronxcc_tools\n", False),
        ('s = "import nki"\n', False),
    ],
)
def test_which_files_are_nki_files(text: str, expected: bool) -> None:
    assert imports_nki(text) is expected


def test_excerpt_keeps_imports_and_the_open_statement() -> None:
    text = (
        "import nki\nimport nki.isa as nisa\nfrom nki.language import (\n    ndarray,\n    sbuf,\n)\n\n"
        "def k(a):\n    x = f(1, 2)\n    nisa.tensor_scalar(dst=a,\n        data=a, op"
    )
    lines = text.split("\n")
    source, line, column = _excerpt(text, len(lines), len(lines[-1])) or ("", 0, 0)
    rows = source.split("\n")
    assert rows[:6] == lines[:6]  # every import, the parenthesised one whole
    assert rows[6:] == ["nisa.tensor_scalar(dst=a,", "        data=a, op"]  # not the balanced line before
    assert (line, column) == (len(rows), len("        data=a, op"))


def test_nki_bound_names() -> None:
    lines = [
        "import nki",
        "import nki.isa as nisa",
        "import nki.language",
        "from nki import language as nl, isa",
        "from neuronxcc.nki.typing import tensor",
        "import numpy as np",
    ]
    assert _nki_bound_names(lines) == {"nki", "nisa", "nl", "isa", "tensor"}


def test_completion_through_from_import_alias_and_nothing_for_numpy() -> None:
    jedi = NkiJedi()
    text = "from nki import language as L\nimport numpy as np\nL.psu\nnp.zer\n"
    assert [c.name for c in jedi.complete(text, None, 3, 5)] == ["psum"]
    assert jedi.complete(text, None, 4, 6) == []
    top = [c.name for c in jedi.complete("import nki\nnki.\n", None, 2, 4)]
    assert {"jit", "simulate", "language", "isa", "collectives", "compiler"} <= set(top)
    assert not [n for n in top if n.startswith("__")]


@pytest.mark.parametrize(
    ("doc", "target", "warning"),
    [
        ("Quantise ... trn3 only.", Target(Generation.GEN3), "Not available on trn2 (needs trn3 only)."),
        ("Quantise ... trn3 only.", Target(Generation.GEN4), None),
        ("Barrier ... trn2+.", Target(Generation.GEN2), "Not available on trn1 (needs trn2+)."),
        ("Barrier ... trn2+.", Target(Generation.GEN4), None),
        (
            "0.7 only: view a tensor",
            Target(nki_version=NkiVersion(0, 6)),
            "Needs NKI 0.7; the target is NKI 0.6.",
        ),
        (
            "Deprecated in 0.6.0, **removed in 0.7**",
            Target(nki_version=NkiVersion(0, 7)),
            "Removed in NKI 0.7 (target NKI 0.7).",
        ),
        ("Deprecated in 0.6.0, **removed in 0.7**", Target(nki_version=NkiVersion(0, 6)), None),
    ],
)
def test_target_notes_warn_per_generation_and_version(doc: str, target: Target, warning: str | None) -> None:
    warnings = [n.text for n in target_notes("x", doc, target) if n.warning]
    assert warnings == ([warning] if warning else [])


def test_matmul_limits_follow_the_generation() -> None:
    trn2 = [n.text for n in target_notes("nc_matmul", "", Target(Generation.GEN3))]
    trn3 = [n.text for n in target_notes("nc_matmul", "", Target(Generation.GEN4))]
    assert (
        trn2 == [t for t in trn2 if t.startswith("trn2: K <= 128, M <= 128, N <= 512 (FP32 PSUM dst)")]
        and trn2
    )
    assert any("N <= 4096 (FP32 PSUM dst), N <= 8192 (BF16 dst)" in t for t in trn3)


_HOVERED = "import nki.language as nl\nimport numpy as np\n\nx = nl.ndarray((2, 2), dtype=nl.float32)\ny = np.zeros(2)\n"


def test_dotted_at_only_for_names_an_nki_import_binds() -> None:
    """Hover on ``nl.ndarray`` needs only the imports; ``np.zeros`` and bare names go through the whole module."""
    imports = "import nki.language as nl\nimport numpy as np"
    assert _dotted_at(_HOVERED, 4, len("x = nl.nd")) == (imports, "nl.ndarray")
    assert _dotted_at(_HOVERED, 4, len("x = nl.ndarray((2, 2), dtype=nl.fl")) == (imports, "nl.float32")
    assert _dotted_at(_HOVERED, 4, len("x = n")) is None  # on the alias itself
    assert _dotted_at(_HOVERED, 5, len("y = np.ze")) is None  # not an NKI import
    assert _dotted_at(_HOVERED, 4, 0) is None  # a plain variable


def test_api_name_from_the_imports_matches_the_whole_module() -> None:
    """The short path (imports + expression) finds the same API name jedi finds in the whole module."""
    jedi = NkiJedi()
    column = len("x = nl.nd")
    quick = jedi.api_names(_HOVERED, None, 4, column)
    full = jedi._api_names_of(_HOVERED, None, 4, column)
    assert [n.full_name for n in quick] == [n.full_name for n in full] == ["nki.language.ndarray"]
    assert jedi.api_names(_HOVERED, None, 5, len("y = np.ze")) == []  # numpy is no API name
