"""The legacy ``neuronxcc.nki`` stubs against the simulator's legacy modules and the linter's legacy table: every
legacy name the simulator accepts has a stub and every stub name is simulated, except the documented exceptions
below; the value-returning ISA calls are the same set in both, with parameters the simulator binds."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from nki_studio.model.legacy_isa import LEGACY_VALUE_CALLS
from nki_studio.sim import isa as current_isa
from nki_studio.sim.legacy import compiler, entry, isa, language

LEGACY_STUBS = Path(__file__).resolve().parents[2] / "server" / "stubs" / "neuronxcc" / "nki"

# Names the simulator serves only because its legacy modules reuse the current ones (``sim.legacy.language``
# starts from the current ``nl``): not in the v2.26.1 API lists, so not in the legacy stubs.
CURRENT_ONLY = {
    "language": {
        "DynSlice",  # the simulator's type of nl.ds(...), not an API name
        *(
            "NkiGrid",
            "NkiTileGrid",
            "NkiBlockGrid",
            "tiles",
            "blocks",
            "alloc_tiles",
            "alloc_blocks",
        ),  # 0.7 grids
        *("fori_loop", "while_loop", "dynamic_range", "if_else", "no_reorder"),  # 0.4-0.7 control flow
        *("abs_max", "abs_min", "shared_identity_matrix"),  # later additions (trn3, 0.3+)
        *(
            "int64",
            "float8_e8m0fnu",
            "float8_e5m2_x4",
            "float8_e4m3fn_x4",
            "float4_e2m1fn_x4",
        ),  # 2.27+ dtypes
        *("prelu", "bypass", "average"),  # operator constants of the current nl (not on the 2.26 pages)
    },
    "isa": {
        *("NkiInstruction", "NkiScalar", "NkiValidationError", "VirtualRegister"),  # 0.2+ handles and scalars
        *("dma_engine", "matmul_perf_mode", "get_nc_sub_version"),
        *("activate2", "exponential", "nc_matmul_mx", "quantize_mx", "nc_n_gather", "dma_compute", "topk"),
        *(
            "register_alloc",
            "register_load",
            "register_move",
            "register_store",
            "scalar_load",
            "scalar_store",
        ),
        *("core_barrier", "sendrecv", "rng", "rand2", "rand_get_state", "rand_set_state", "set_rng_seed"),
        *("nonzero_with_count", "tensor_scalar_cumulative"),
    },
    "compiler": set(),
    # ``neuronxcc.nki.typing`` (``nt.tensor`` annotations) is simulated as the current ``nki.typing``, which has
    # no stub either.
    "": {"typing"},
}
# Stub names the simulator has no value for: types for annotations only.
STUB_ONLY = {"language": {"DType", "DTypeLike", "IndexTile"}, "isa": set(), "compiler": set(), "": set()}
SIMULATED = {
    "language": set(language.__all__),
    "isa": set(isa.__all__),
    "compiler": set(compiler.__all__),
    "": {*entry.__all__, *entry._SUBMODULES},
}


def _tree(module: str) -> ast.Module:
    return ast.parse((LEGACY_STUBS / module / "__init__.pyi").read_text(encoding="utf-8"))


def _stub_names(module: str) -> set[str]:
    """Public names a stub module declares: functions, classes, annotated names and re-exports (``import x as
    x``); type aliases (``Mask = Any``) are not API names."""
    names: set[str] = set()
    for node in _tree(module).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names |= {a.name for a in node.names if a.asname == a.name}
    return {n for n in names if not n.startswith("_")}


@pytest.mark.parametrize("module", ["language", "isa", "compiler", ""])
def test_every_simulated_legacy_name_has_a_stub_and_back(module: str) -> None:
    stubs = _stub_names(module)
    assert SIMULATED[module] - stubs == CURRENT_ONLY[module], "simulated without a legacy stub"
    assert stubs - SIMULATED[module] == STUB_ONLY[module], "stubbed but not simulated"


def _value_returning() -> dict[str, ast.FunctionDef]:
    """The ISA functions the legacy stub declares itself (the rest are re-exported in their ``dst=`` form)."""
    return {n.name: n for n in _tree("isa").body if isinstance(n, ast.FunctionDef)}


def test_the_value_returning_isa_calls_are_the_simulators_and_cover_the_linters() -> None:
    assert set(_value_returning()) == set(isa._RESULTS) | set(isa._LEGACY_FORMS)
    assert LEGACY_VALUE_CALLS <= set(_value_returning())


@pytest.mark.parametrize("name", sorted(_value_returning()))
def test_the_simulator_binds_every_parameter_of_a_value_returning_stub(name: str) -> None:
    stub = _value_returning()[name].args
    if name in isa._LEGACY_FORMS:
        parameters = list(inspect.signature(isa._LEGACY_FORMS[name]).parameters.values())
    else:  # the legacy form is the current instruction without its dst (sim.legacy.isa._value_returning)
        parameters = list(inspect.signature(getattr(current_isa, name)).parameters.values())[1:]
    simulated = {p.name for p in parameters if p.kind is not p.VAR_KEYWORD}
    positional = {a.arg for a in [*stub.posonlyargs, *stub.args]}
    assert positional <= simulated, sorted(positional - simulated)
    if not any(p.kind is p.VAR_KEYWORD for p in parameters):  # mask= and dtype= are every legacy call's
        keywords = {a.arg for a in stub.kwonlyargs} - {"mask", "dtype"}
        assert keywords <= simulated, sorted(keywords - simulated)
