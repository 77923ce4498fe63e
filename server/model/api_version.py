"""Which NKI API a file and each of its functions is written for, read from its imports: the legacy
``neuronxcc.nki`` API (NKI 0.1, "Beta 1", Neuron 2.20-2.26) or the ``nki`` namespace (NKI 0.2 and later).

The version map and the legacy spellings are stated in deprecations.md (header, §D): ``import neuronxcc.nki as
nki``, ``neuronxcc.nki.language as nl``, ``from neuronxcc import nki`` and torch-neuronx's ``nki_jit`` are the
legacy API. Names reached through the ``nki`` namespace mean the current API even when they are legacy-only
(``nki.trace``, ``nl.arange``): in an ``nki`` file they are removed APIs, which NKI209 reports with their
replacement (our choice: such a file cannot run on the SDK the legacy API belongs to either, inferred).

A file whose imports are all legacy is legacy code; a file importing both namespaces decides per function:
a kernel by its decorator (``@nki.jit`` from ``neuronxcc``, ``nki_jit`` from ``torch_neuronx``), a helper by
the kernels that reach it (legacy when only legacy kernels do).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.model.imports import ImportAliases, is_legacy
from nki_studio.model.kernels import KernelDiscovery
from nki_studio.model.targets import LEGACY, NkiVersion

# torch-neuronx's legacy kernel wrapper (deprecations.md §D): ``from torch_neuronx import nki_jit`` and the
# older ``torch_neuronx.xla_impl.ops.nki_jit`` spelling.
_TORCH_PREFIX = "torch_neuronx"
_TORCH_NKI_JIT = "nki_jit"


def is_legacy_binding(target: str) -> bool:
    """True when an import target is legacy API: ``neuronxcc.nki...`` or torch-neuronx's ``nki_jit``."""
    if is_legacy(target):
        return True
    return target.split(".")[0] == _TORCH_PREFIX and target.rsplit(".", 1)[-1] == _TORCH_NKI_JIT


def _is_current_binding(target: str) -> bool:
    return target == "nki" or target.startswith("nki.")


@dataclass(frozen=True)
class ApiEvidence:
    """The import that says which API the code is written for: its text and 1-based line."""

    version: NkiVersion
    statement: str  # the import statement as written, e.g. ``from neuronxcc import nki``
    line: int


def _statement_text(lines: list[str], node: ast.stmt) -> str:
    first = lines[node.lineno - 1].strip() if 0 < node.lineno <= len(lines) else ""
    return first if node.end_lineno == node.lineno else first + " ..."


def legacy_evidence(aliases: ImportAliases, source: str) -> ApiEvidence | None:
    """The first import binding legacy API (None when the file imports none)."""
    found = [r.node for r in aliases.records if is_legacy_binding(r.target)]
    if not found:
        return None
    first = min(found, key=lambda n: (n.lineno, n.col_offset))
    return ApiEvidence(LEGACY, _statement_text(source.splitlines(), first), first.lineno)


def imports_current(aliases: ImportAliases) -> bool:
    """True when the file imports from the ``nki`` namespace (the current API)."""
    return any(_is_current_binding(r.target) for r in aliases.records)


@dataclass(frozen=True)
class FileApi:
    """The API of one file: ``legacy`` is the evidence of legacy code (None: current API only); ``mixed``
    when the file imports both namespaces (then ``legacy_functions`` says which functions are legacy)."""

    legacy: ApiEvidence | None
    mixed: bool
    legacy_functions: frozenset[int]  # id() of the FunctionInfo.node of legacy functions (mixed files)

    @property
    def all_legacy(self) -> bool:
        """Every function of the file is legacy code (a file whose NKI imports are all legacy)."""
        return self.legacy is not None and not self.mixed

    def is_legacy(self, node: ast.AST) -> bool:
        """Whether a function (its ``def`` node) is legacy code."""
        return self.all_legacy or id(node) in self.legacy_functions


def file_api(discovery: KernelDiscovery) -> FileApi:
    """Which API the analysed file and each of its reachable functions is written for."""
    module = discovery.module
    evidence = legacy_evidence(module.aliases, module.source)
    if evidence is None:
        return FileApi(None, False, frozenset())
    if not imports_current(module.aliases):
        return FileApi(evidence, False, frozenset())
    return FileApi(evidence, True, frozenset(_legacy_functions(discovery)))


def _legacy_functions(discovery: KernelDiscovery) -> set[int]:
    """Legacy kernels, the helpers that only legacy kernels reach, and the functions no kernel reaches whose
    NKI names all come from legacy imports."""
    callees: dict[int, list[ast.AST]] = {}
    for site in discovery.call_sites:
        callees.setdefault(id(site.caller.node), []).append(site.callee.node)
    reached_by: dict[int, set[bool]] = {}
    for kernel in discovery.kernels:
        legacy = kernel.kernel_legacy
        pending: list[ast.AST] = [kernel.node]
        seen: set[int] = set()
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            reached_by.setdefault(id(node), set()).add(legacy)
            pending.extend(callees.get(id(node), ()))
    out = {key for key, kinds in reached_by.items() if kinds == {True}}
    bindings = discovery.module.aliases.bindings
    own = discovery.module.own_nodes
    for func in discovery.reachable:
        if id(func.node) in reached_by:
            continue
        targets = {
            bindings[n.id] for n in own.get(id(func.node), ()) if isinstance(n, ast.Name) and n.id in bindings
        }
        if any(is_legacy_binding(t) for t in targets) and not any(_is_current_binding(t) for t in targets):
            out.add(id(func.node))
    return out
