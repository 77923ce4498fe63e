"""The declarations of the NKI API agree with each other, for every public name.

* the shipped stubs (``server/stubs/nki/**/__init__.pyi``; ``ast``) are the source;
* ``nki_studio.model.nki_api`` is generated from them (``tests/intelligence/test_nki_api_generated.py``), and the
  value interpreter (``nki_semantics``, ``kinds``, the ``nki.language`` lists of ``api_signatures``) and the
  simulator's element-wise and reduction registrations read their names and parameter lists from it;
* the embedded simulator's functions (``nki_studio.sim.nki_module``, ``.isa``, ``.language``, ``.collectives``,
  ``.nki_compiler``; ``inspect``) are compared with the stubs here;
* the value interpreter's hand-kept ``nki.isa`` parameter lists (``nki_studio.model.api_signatures``) too, and every
  ``nki.language`` function is either interpreted or listed below with the reason it is not.

For every public function of ``nki``, ``nki.isa``, ``nki.language``, ``nki.collectives`` and ``nki.compiler``: parameter names (not
those of ``*args``/``**kwargs``), order, kinds (positional, keyword-only, ``*args``, ``**kwargs``), which are
required, and the default where both sides state one (the stubs write ``...`` for enum defaults).
``api_signatures`` lists only the leading parameters the interpreter binds, so each of its lists must be the start
of the function's positional parameters. Every difference the sides may have is listed below with its reason: a
name or parameter added on one side only fails this test.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from nki_studio.model import api_signatures as sigs
from nki_studio.model import nki_api, nki_semantics
from nki_studio.sim import collectives as sim_collectives
from nki_studio.sim import isa as sim_isa
from nki_studio.sim import language as sim_language
from nki_studio.sim import nki_compiler as sim_compiler
from nki_studio.sim import nki_module as sim_nki

STUBS = Path(__file__).resolve().parents[2] / "server" / "stubs" / "nki"
SIMULATED: dict[str, ModuleType] = {
    "nki": sim_nki,
    "isa": sim_isa,
    "language": sim_language,
    "collectives": sim_collectives,
    "compiler": sim_compiler,
}
STUB_ONLY_MODULES: dict[str, str] = {}
UNSTATED = object()  # a default the stub leaves as ``...`` or writes as a non-literal expression

# ---- the known, justified differences -----------------------------------------------------------------------
STUB_ONLY_NAMES: dict[str, dict[str, str]] = {
    "nki": {
        "_F": "typing variable of the stubs",
        "dtype": "a type alias in the stubs (real kernels annotate `dtype: nki.dtype`); in the simulator the lazily "
        "imported module of dtypes (`import nki.dtype as nt`)",
    },
    "isa": {"Op": "typing alias of the stubs"},
    "collectives": {"Op": "typing alias of the stubs"},
    "language": {
        "DType": "typing-only class of the stubs (the simulator's dtypes are ml_dtypes/NumPy objects)",
        "Shape": "typing alias of the stubs",
        "DTypeLike": "typing alias of the stubs: what a dtype= parameter accepts (nl, NumPy scalar type or dtype)",
        "_TileSize": "typing-only class of the stubs' tile_size constant",
        "_Grid": "typing variable of the stubs (grid indexing keeps the grid's type)",
    },
}
SIM_ONLY_NAMES: dict[str, dict[str, str]] = {
    "nki": {
        "JitKernel": "what @nki.jit returns; the stubs type jit as returning the function",
        "LaunchedKernel": "what kernel[lnc] returns; not a name kernels use",
        "simulate_kernel": "legacy entry point, removed from nki (deprecations.md); kept so old kernels run",
    },
    "language": {"DynSlice": "the class nl.ds returns; the stubs type nl.ds as returning a slice"},
}
# Public names that are callables in the simulator but values in the stubs.
STUB_VALUES: dict[str, dict[str, str]] = {
    "language": {
        name: "operator constant (language.md §8): passed as op=, never called by a kernel"
        for name in ("average", "bypass", "prelu")
    },
}
# Optional parameters the simulator accepts beyond the reference's signature. Kept: removing one would turn a
# kernel that simulates today into an error, and the reference does not say whether the real API rejects it.
SIM_EXTRA_PARAMS: dict[tuple[str, str], dict[str, str]] = {
    ("language", "ds"): {"step": "DynSlice supports strides; language.md documents ds(start, size)"},
    ("language", "shared_constant"): {
        "dtype": "casts the constant; language.md documents shared_constant(constant)"
    },
    ("language", "all"): {
        "keepdims": "all shares the reducers' signature; language.md documents all(x, axis, dtype)"
    },
}
# Keyword-only parameters of a stub that the simulator's ``**kwargs`` takes (and keeps) without naming them.
STUB_KEYWORDS_IN_SIM_KWARGS: dict[tuple[str, str], dict[str, str]] = {}
# Simulator functions that take ``*args, **kwargs`` and forward them to another one (whose signature counts).
FORWARDERS: dict[tuple[str, str], str] = {
    ("collectives", "all_to_all_v_prepare"): "all_to_all_v",  # the collective runs at the trigger
    ("collectives", "all_gather_v_prepare"): "all_gather_v",
}
# nki.isa functions without an ``ISA_PARAMS`` entry: they have no tensor operands the linter checks.
ISA_NOT_BOUND: dict[str, str] = {
    "get_nc_version": "target query, no operands",
    "get_nc_sub_version": "target query, no operands",
    "register_alloc": "register operands only",
    "register_move": "register operands only",
    "scalar_load": "NKI 0.7 scalar, not interpreted by the value model",
    "scalar_store": "NKI 0.7 scalar, not interpreted by the value model",
    "set_rng_seed": "RNG state, no data operands",
    "rand_set_state": "RNG state, no data operands",
    "rand_get_state": "RNG state, no data operands",
}

# nki.language functions the value interpreter gives no value (its result stays unknown to the rules).
_GRID = "0.7 tile/block grid: kinds.py knows the result is a grid; the interpreter does not model grids"
_UNSHAPED = "a tensor result the interpreter does not shape (kinds.py still knows it is a tensor)"
_NO_VALUE = "no value a rule checks"
LANGUAGE_NOT_INTERPRETED: dict[str, str] = {
    **{name: _GRID for name in ("tiles", "blocks", "alloc_tiles", "alloc_blocks")},
    **{name: _UNSHAPED for name in ("broadcast_to", "expand_dims", "gather_flattened", "shared_constant")},
    **{name: _NO_VALUE for name in ("device_print", "no_reorder", "random_seed", "if_else")},
    **{
        name: "a runtime query, unknown at compile time"
        for name in ("program_id", "num_programs", "program_ndim")
    },
    **{
        name: "a buffer query; the rules read buffers from allocations"
        for name in ("is_hbm", "is_on_chip", "is_psum", "is_sbuf")
    },
    "dynamic_range": "a runtime loop: kinds.py makes its variable a register; the interpreter does not unroll it",
}
# Names the interpreter resolves that the stubs do not declare (legacy or Python's own).
LANGUAGE_INTERPRETED_UNSTUBBED: dict[str, str] = {
    "par_dim": "legacy partition-dim marker (removed from nki.language; old kernels still use it)",
    "range": "Python's range under an nl alias in legacy code",
}


@dataclass(frozen=True)
class Param:
    """One parameter as both sides can describe it."""

    name: str
    kind: str  # "positional" | "keyword" | "*args" | "**kwargs"
    required: bool
    default: Any = UNSTATED

    def shape(self) -> tuple[str, str, bool]:
        """What callers depend on: the name (not of ``*args``/``**kwargs``), the kind and required-ness."""
        return "" if self.kind in ("*args", "**kwargs") else self.name, self.kind, self.required


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return UNSTATED
    try:
        value = ast.literal_eval(node)
    except ValueError:  # e.g. ``engine.unknown``
        return UNSTATED
    return UNSTATED if value is Ellipsis else value


def stub_params(node: ast.FunctionDef) -> list[Param]:
    """The parameters of a stub function."""
    a = node.args
    positional = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [
        Param(p.arg, "positional", d is None, _literal(d)) for p, d in zip(positional, defaults, strict=True)
    ]
    if a.vararg:
        out.append(Param(a.vararg.arg, "*args", False))
    out += [
        Param(p.arg, "keyword", d is None, _literal(d))
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
    ]
    if a.kwarg:
        out.append(Param(a.kwarg.arg, "**kwargs", False))
    return out


_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword",
    inspect.Parameter.VAR_POSITIONAL: "*args",
    inspect.Parameter.VAR_KEYWORD: "**kwargs",
}


def sim_params(fn: Any) -> list[Param]:
    """The parameters of a simulator function; a ``**_`` catch-all (keywords the simulator ignores) is internal."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_KEYWORD and p.name == "_":
            continue
        kind = _KINDS[p.kind]
        has_default = p.default is not p.empty or kind in ("*args", "**kwargs")
        out.append(Param(p.name, kind, not has_default, UNSTATED if p.default is p.empty else p.default))
    return out


@dataclass
class StubModule:
    """The top-level names and functions of one stub module."""

    names: set[str]
    functions: dict[str, list[Param]]


def stub_path(module: str) -> Path:
    return STUBS / "__init__.pyi" if module == "nki" else STUBS / module / "__init__.pyi"


def stub_module(module: str) -> StubModule:
    tree = ast.parse(stub_path(module).read_text())
    names: set[str] = set()
    functions: dict[str, list[Param]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = stub_params(node)
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            # A lower-case class is an API function in class form (``nl.ndarray(shape, dtype)``: a class in the
            # stubs so it also works as an annotation): its constructor's parameters, without ``self``.
            init = next(
                (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
            )
            if init is not None and node.name.islower():
                functions[node.name] = stub_params(init)[1:]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return StubModule(names, functions)


def sim_functions(module: ModuleType) -> dict[str, Any]:
    return {
        name: getattr(module, name)
        for name in module.__all__
        if callable(getattr(module, name)) and not inspect.isclass(getattr(module, name))
    }


def compare(module: str, name: str, stub: list[Param], sim: list[Param]) -> list[str]:
    """Differences between a stub's and the simulator's parameters, minus the listed simulator extras."""
    extra = SIM_EXTRA_PARAMS.get((module, name), {})
    sim = [p for p in sim if p.name not in extra]
    absorbed = STUB_KEYWORDS_IN_SIM_KWARGS.get((module, name), {})
    stub = [p for p in stub if p.name not in absorbed]
    problems = []
    if [p.shape() for p in stub] != [p.shape() for p in sim]:
        problems.append(
            f"{module}.{name}: stub {[p.shape() for p in stub]} != simulator {[p.shape() for p in sim]}"
        )
    for s, m in zip(stub, sim, strict=False):
        if s.name == m.name and UNSTATED not in (s.default, m.default) and s.default != m.default:
            problems.append(
                f"{module}.{name}({s.name}=): stub default {s.default!r}, simulator {m.default!r}"
            )
    return problems


def test_every_stub_module_is_compared() -> None:
    stubbed = {p.parent.name for p in STUBS.glob("*/__init__.pyi")} | {"nki"}
    assert sorted(stubbed) == sorted({*SIMULATED, *STUB_ONLY_MODULES})


@pytest.mark.parametrize("module", sorted(SIMULATED))
def test_public_names_agree(module: str) -> None:
    stub = stub_module(module)
    sim = set(SIMULATED[module].__all__)
    assert sorted(stub.names - sim) == sorted(STUB_ONLY_NAMES.get(module, {}))
    assert sorted(sim - stub.names) == sorted(SIM_ONLY_NAMES.get(module, {}))


@pytest.mark.parametrize("module", sorted(SIMULATED))
def test_function_signatures_agree(module: str) -> None:
    stub = stub_module(module)
    sim = sim_functions(SIMULATED[module])
    only_sim = set(SIM_ONLY_NAMES.get(module, {}))
    values = STUB_VALUES.get(module, {})
    assert sorted(set(sim) - set(stub.functions) - only_sim) == sorted(values), (
        "callables that are stub values"
    )
    problems = []
    for name in sorted(set(stub.functions) & set(sim)):
        target = FORWARDERS.get((module, name))
        fn = getattr(SIMULATED[module], target) if target else sim[name]
        problems += compare(module, name, stub.functions[name], sim_params(fn))
    assert problems == []
    for (mod, name), params in SIM_EXTRA_PARAMS.items():
        if mod == module:  # a listed extra that disappeared must leave the list too
            assert set(params) <= {p.name for p in sim_params(sim[name])}, name


@pytest.mark.parametrize(
    ("module", "table"),
    [("isa", sigs.ISA_PARAMS), ("language", sigs.NL_CREATE_PARAMS)],
    ids=["isa", "language"],
)
def test_api_signatures_are_leading_parameters(module: str, table: dict[str, tuple[str, ...]]) -> None:
    """Each interpreter list is the start of the stub's (hence the simulator's) positional parameters."""
    functions = stub_module(module).functions
    problems = []
    for name, listed in table.items():
        positional = [p.name for p in functions.get(name, []) if p.kind == "positional"]
        if tuple(positional[: len(listed)]) != listed:
            problems.append(f"{module}.{name}: api_signatures {listed}, stub {positional}")
    assert problems == []


def test_every_isa_instruction_is_bound_or_listed() -> None:
    functions = set(stub_module("isa").functions)
    assert sorted(functions - set(sigs.ISA_PARAMS)) == sorted(ISA_NOT_BOUND)


def test_every_language_function_is_interpreted_or_listed() -> None:
    """Each ``nki.language`` function of the stubs has a value in the interpreter (``nki_semantics``) or a
    reason here; what the interpreter knows beyond the stubs is listed too."""
    interpreted = {
        *sigs.NL_CREATE_PARAMS,
        *nki_semantics._RANGE_APIS,
        *nki_semantics._LANG_PARAMS,
        *nki_semantics._ELEMENTWISE_RESULT,
        *nki_api.LANGUAGE_REDUCTIONS,
        "ds",
        "par_dim",
        "fori_loop",
        "while_loop",
    }
    stubbed = set(nki_api.LANGUAGE_PARAMS)
    assert sorted(stubbed - interpreted) == sorted(LANGUAGE_NOT_INTERPRETED)
    assert sorted(interpreted - stubbed) == sorted(LANGUAGE_INTERPRETED_UNSTUBBED)


def test_operand_roles_are_parameters() -> None:
    """The role tables of ``api_signatures`` name parameters of their instruction's list."""
    tables = {
        "SAME_SHAPE_OPERANDS": sigs.SAME_SHAPE_OPERANDS,
        "SAME_PARTITION_OPERANDS": sigs.SAME_PARTITION_OPERANDS,
        "ONE_PSUM_INPUT": sigs.ONE_PSUM_INPUT,
    }
    problems = [
        f"{table}[{name!r}]: {role}"
        for table, rows in tables.items()
        for name, roles in rows.items()
        for role in roles
        if role not in sigs.ISA_PARAMS.get(name, ())
    ]
    problems += [f"GPSIMD_ONLY: {name}" for name in sigs.GPSIMD_ONLY if name not in sigs.ISA_PARAMS]
    outputs = {p for params in sigs.ISA_PARAMS.values() for p in params}
    problems += [f"ISA_OUTPUTS: {role}" for role in sigs.ISA_OUTPUTS - outputs]
    assert problems == []


def test_comparison_reports_a_difference() -> None:
    """The comparison can fail: a swapped order, a different default and a required/optional change are reported."""
    stub = [Param("dst", "positional", True), Param("src", "positional", False, 1)]
    assert compare("isa", "f", stub, [Param("src", "positional", False, 1), Param("dst", "positional", True)])
    assert compare("isa", "f", stub, [Param("dst", "positional", True), Param("src", "positional", False, 2)])
    assert compare("isa", "f", stub, [Param("dst", "positional", True), Param("src", "positional", True)])
    assert not compare(
        "isa", "f", stub, [Param("dst", "positional", True), Param("src", "positional", False)]
    )
