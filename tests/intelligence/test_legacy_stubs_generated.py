"""The legacy ``neuronxcc.nki`` stubs are what ``python -m nki_studio.model.legacy_api_generate`` renders from their
declaration (``nki_studio.model.legacy_api``) and the current stubs, which stay the one declaration of every
signature the two APIs share."""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from nki_studio.model import legacy_api_generate
from nki_studio.model.legacy_api import MODULES, LegacyModule


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.path or "nki")
def test_committed_stub_is_current(module: LegacyModule) -> None:
    """Regenerate with ``bash scripts/generate.sh`` after changing the declaration or a current stub."""
    committed = legacy_api_generate.stub_path(module).read_text(encoding="utf-8")
    assert committed == legacy_api_generate.render(module)


def _signature(path: str, name: str) -> str:
    fn = legacy_api_generate.legacy_function(path, name)
    return ast.unparse(fn.args) + " -> " + ast.unparse(fn.returns or ast.Constant(None))


def test_a_derived_function_is_the_current_one_in_the_legacy_calling_convention() -> None:
    assert (
        _signature("language", "exp")
        == "x: NkiTensor, dtype: DTypeLike | None=None, *, mask: Mask=None, **kwargs: Any -> ndarray"
    )
    # the destination and the profiler label go; the result is a new tile; mask= and dtype= are keyword-only
    assert _signature("isa", "tensor_tensor") == (
        "data1: NkiTensor, data2: NkiTensor, op: Op, engine: engine=..., *, mask: Mask=None,"
        " dtype: DTypeLike | None=None, **kwargs: Any -> ndarray"
    )
    assert _signature("language", "random_seed").endswith("-> None")
    # the v2.26.1 page's keyword-only tail: ``activation(op, data, *, bias=None, ...)``
    activation = legacy_api_generate.legacy_function("isa", "activation", keyword_only_from="bias")
    assert [a.arg for a in activation.args.args] == ["op", "data"]
    assert [a.arg for a in activation.args.kwonlyargs][:2] == ["bias", "scale"]


@pytest.fixture
def current_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A writable copy of the current stubs that the generator reads instead of ``server/stubs/nki``."""
    copy = tmp_path / "nki"
    shutil.copytree(legacy_api_generate.CURRENT, copy)
    monkeypatch.setattr(legacy_api_generate, "CURRENT", copy)
    legacy_api_generate._current_functions.cache_clear()
    yield copy
    legacy_api_generate._current_functions.cache_clear()


def test_a_change_to_a_shared_signature_reaches_the_legacy_stub(current_copy: Path) -> None:
    stub = current_copy / "language" / "__init__.pyi"
    text = stub.read_text(encoding="utf-8")
    stub.write_text(text.replace("def exp(x: NkiTensor,", "def exp(x: NkiTensor, base: float = 2.718,", 1))
    language = next(m for m in MODULES if m.path == "language")
    tree = ast.parse(legacy_api_generate.render(language))
    exp = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "exp")
    assert [a.arg for a in exp.args.args] == ["x", "base", "dtype"]


def test_legacy_only_names_are_the_declared_names_the_current_api_lacks() -> None:
    only = legacy_api_generate.legacy_only()
    assert {"arange", "mgrid", "par_dim", "static_cast", "loop_reduce"} <= set(only["language"])
    assert {"baremetal", "benchmark", "simulate_kernel", "trace"} <= set(only[""])
    assert {"sbuf", "psum", "skip_middle_end_transformations"} <= set(only["compiler"])
    # declared for legacy, but the current API has them too (with another signature): not legacy-only
    assert not {"load", "store", "matmul", "ndarray", "program_id"} & set(only["language"])
    assert "jit" not in only[""] and only["isa"] == ()
