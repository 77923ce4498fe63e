"""Keyword-argument completions from the stubs' table (no jedi) give what jedi gives, and defer to jedi for
anything they do not resolve."""

from __future__ import annotations

import pytest
from nki_studio.lsp.features import stub_keywords
from nki_studio.lsp.features.nki_jedi import NkiJedi
from nki_studio.lsp.features.stub_keywords import keyword_completions


def _names(items: list[stub_keywords.StubParameter] | None) -> list[str] | None:
    return None if items is None else [p.name_with_symbols for p in items]


def _at_end(text: str) -> tuple[str, int, int]:
    lines = text.split("\n")
    return text, len(lines), len(lines[-1])


def test_every_stub_function_and_class_completes_as_jedi_does() -> None:
    jedi = NkiJedi(None)
    compared = 0
    for module, names in stub_keywords._table().items():
        for name in names:
            for head in ("", "dst=x, "):  # a bare call, and one argument already given
                text, line, column = _at_end(f"import {module} as m\n\ndef k(x):\n    m.{name}({head}")
                theirs = [c.name_with_symbols for c in jedi.complete(text, None, line, column)]
                assert _names(keyword_completions(text, line, column)) == theirs, (module, name, head)
                compared += 1
    assert compared > 300  # nki.isa, nki.language and the rest: every function and class of the stubs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "import nki.isa as nisa\nnisa.tensor_scalar(dst=a, data=a, op",
            ["op0=", "op1=", "operand0=", "operand1="],
        ),
        ("from nki.isa import tensor_copy\ntensor_copy(d", ["dst="]),
        ("from nki import isa\nisa.tensor_copy(src=a, ", ["dst=", "engine=", "name="]),
        ("import nki\nnki.language.ndarray((4, 4), d", ["dtype="]),
        ("import nki.isa as nisa\nnisa.tensor_copy(\n    dst=a,\n    s", ["src="]),
    ],
)
def test_resolves_the_callee_through_the_modules_imports(text: str, expected: list[str]) -> None:
    assert _names(keyword_completions(*_at_end(text))) == expected


@pytest.mark.parametrize(
    "text",
    [
        "import numpy as np\nnp.zeros(sh",  # not an NKI call
        "import nki.isa as nisa\nnisa.tensor_",  # an attribute, not a keyword
        "import nki.language as nl\nx = nl.ndarray((1, 2))\nx.reshape(",  # a method: jedi infers x
        "import nki.isa as nisa\nnisa.no_such_instruction(",
        "import neuronxcc.nki.isa as nisa\nnisa.tensor_copy(",  # the legacy namespace: jedi knows it
    ],
)
def test_anything_unresolved_goes_to_jedi(text: str) -> None:
    assert keyword_completions(*_at_end(text)) is None


def test_an_installed_sdk_leaves_everything_to_jedi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stub_keywords, "_sdk_installed", lambda: True)
    assert keyword_completions(*_at_end("import nki.isa as nisa\nnisa.tensor_copy(")) is None
