"""``nki_studio.model.nki_api`` is what ``python -m nki_studio.model.nki_api_generate`` renders from the stubs.

The interpreter (``api_signatures``, ``kinds``, ``nki_semantics``) and the simulator's element-wise and reduction
registrations read their names from it, so the stubs stay the one declaration of the NKI API.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from nki_studio.model import nki_api, nki_api_generate


def test_generated_module_is_current() -> None:
    """Regenerate with ``bash scripts/generate.sh`` after changing the stubs."""
    assert nki_api_generate.OUT.read_text(encoding="utf-8") == nki_api_generate.render()


def test_rendering_follows_the_stubs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A function added under a stub section lands in that section's table, and a lost heading is an error."""
    stubs = tmp_path / "nki"
    for module in ("language", "isa"):
        (stubs / module).mkdir(parents=True)
        text = (nki_api_generate.STUBS / module / "__init__.pyi").read_text(encoding="utf-8")
        if module == "language":
            text = text.replace("def relu(", "def brand_new(x: NkiTensor) -> ndarray: ...\n\ndef relu(", 1)
        (stubs / module / "__init__.pyi").write_text(text, encoding="utf-8")
    monkeypatch.setattr(nki_api_generate, "STUBS", stubs)
    rendered: dict[str, Any] = {}
    exec(compile(ast.parse(nki_api_generate.render()), "nki_api", "exec"), rendered)
    assert rendered["LANGUAGE_ACTIVATIONS"] == ("brand_new", *nki_api.LANGUAGE_ACTIVATIONS)
    assert "brand_new" in rendered["LANGUAGE_TENSOR_RESULTS"]
    assert rendered["LANGUAGE_PARAMS"]["brand_new"] == ("x",)
    path = stubs / "language" / "__init__.pyi"
    path.write_text(path.read_text(encoding="utf-8").replace(" activations\n", " activation functions\n"))
    with pytest.raises(SystemExit, match="activations"):
        nki_api_generate.render()
