"""Legacy direct allocation -> the compiler's allocation (deprecations.md §E: ``nki.compiler.sbuf.mod_alloc`` /
``auto_alloc`` / ``psum...`` -> ``nl.ndarray(..., address=(partition_offset, byte_offset))``, or let the compiler
allocate).

``buffer=ncc.sbuf.mod_alloc(base_addr=..., num_free_tiles=...)`` (and ``alloc``/``auto_alloc``, on ``sbuf`` or
``psum``) becomes ``buffer=nl.sbuf`` / ``buffer=nl.psum``: the tensor is allocated in the same memory, at an
address the compiler picks. Why not ``address=``: 0.7's ``address=`` places one tile, it cannot express a modular
allocation's rotation (``num_free_tiles=(n,)`` put block ``b`` on physical tile ``b % n``; v2.26.1
nki.compiler.sbuf.mod_alloc), and an allocation function (``ncc.psum.alloc(fn)``) has no 0.7 form at all. An
address changes where data lives, not what the kernel computes, unless the kernel reads a block through a rotated
alias of another (block ``b + n`` seeing block ``b``'s data), which the legacy simulator honours and the proof
therefore catches. The placement (and its performance) is the compiler's after this; the change says so.
Directive decorators that steer the legacy compiler only (``enable_stack_allocator``, ``force_auto_alloc``,
``skip_middle_end_transformations``) are dropped. A module-level alias of an allocator (``sb_mod = nki.compiler.sbuf.mod_alloc``,
nki-samples' attention tutorial) has its calls replaced the same way wherever they are (``return sb_mod(...)`` in
an allocator class too), and goes once nothing else reads it: 0.7 has no ``nki.compiler.sbuf``, so the line alone
would stop the migrated module from importing.
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source

_ALLOCATORS = frozenset({"mod_alloc", "alloc", "auto_alloc"})
_REGIONS = frozenset({"sbuf", "psum"})
# Decorators that steer only the legacy compiler (its allocator; skip_middle_end_transformations: its middle-end
# passes), not what the kernel computes (inferred from the v2.26.1 pages, which describe no semantic effect).
DIRECTIVES = frozenset(
    {
        "nki.compiler.enable_stack_allocator",
        "nki.compiler.force_auto_alloc",
        "nki.compiler.skip_middle_end_transformations",
    }
)


def run(src: Source) -> PassResult:
    """Replace every direct allocation given as ``buffer=`` (or through a module-level alias) by its memory region;
    drop allocator directives and the aliases no longer read."""
    out = PassResult()
    nl = src.alias_of(LANGUAGE, "nl")
    for call, region in [*_buffers(src), *_alias_calls(src)]:
        out.change(
            src.replace(call, f"{nl}.{region}"),
            call.lineno,
            call_name(src, call),
            f"{nl}.{region}, placed by the compiler (the legacy fixed address is dropped)",
        )
    for alias in _unused_aliases(src):
        edit = TextEdit(Span(alias.lineno, 1, (alias.end_lineno or alias.lineno) + 1, 1), "")
        out.change(
            edit, alias.lineno, call_name(src, alias.value), "dropped (allocator alias, calls replaced)"
        )
    for decorator in _directives(src):
        line = decorator.end_lineno or decorator.lineno
        edit = TextEdit(Span(decorator.lineno, 1, line + 1, 1), "")
        out.change(edit, decorator.lineno, call_name(src, decorator), "dropped (legacy compiler directive)")
    # nl.full(..., lazy_initialization=False) chose when the legacy compiler filled the tile, not its values
    # (inferred, as the legacy simulator takes it; nki-samples' flash attention): 0.7's nl.full has no such parameter
    for call, _ in src.calls_to(LANGUAGE):
        for keyword in call.keywords:
            cut = src.keyword_cut(call, keyword) if keyword.arg == "lazy_initialization" else None
            if cut is not None:
                edit = TextEdit(Span(*src.position(cut[0]), *src.position(cut[1])), "")
                out.change(
                    edit,
                    call.lineno,
                    "lazy_initialization=",
                    "dropped (when the legacy compiler filled the tile)",
                )
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The ``nki.compiler`` calls of ``src`` this pass rewrites (``manual.py`` lists the others)."""
    calls = [*_buffers(src), *_alias_calls(src)]
    return {id(call) for call, _ in calls} | {id(d) for d in _directives(src)}


def call_name(src: Source, node: ast.expr) -> str:
    """``mod_alloc``, ``enable_stack_allocator`` ...: the construct a change or a manual step names."""
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Name) and func.id in _aliases(src):
        func = _aliases(src)[func.id][0].value
    return (src.canonical(func) or "").rpartition(".")[2]


def allocator(src: Source, func: ast.expr) -> tuple[str, str] | None:
    """(region, allocator), e.g. ``("psum", "mod_alloc")``, when ``func`` names a direct allocator, itself or
    through a module-level alias (``psum_mod = nki.compiler.psum.mod_alloc``)."""
    if isinstance(func, ast.Name) and func.id in _aliases(src):
        func = _aliases(src)[func.id][0].value
    region = _region(src, func)
    return None if region is None else (region, (src.canonical(func) or "").rpartition(".")[2])


def _region(src: Source, func: ast.expr) -> str | None:
    """``sbuf`` / ``psum`` when ``func`` names a direct allocator (``nki.compiler.sbuf.mod_alloc`` ...)."""
    parts = (src.canonical(func) or "").split(".")
    if (
        parts[:2] == ["nki", "compiler"]
        and len(parts) == 4
        and parts[2] in _REGIONS
        and parts[3] in _ALLOCATORS
    ):
        return parts[2]
    return None


def _aliases(src: Source) -> dict[str, tuple[ast.Assign, str]]:
    """Module-level ``name = <direct allocator>`` assignments: name -> (the assignment, its region)."""
    found = {}
    for node in src.tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            region = _region(src, node.value)
            if region is not None:
                found[node.targets[0].id] = (node, region)
    return found


def _alias_calls(src: Source) -> list[tuple[ast.Call, str]]:
    """Each call of a module-level allocator alias, with its region."""
    aliases = _aliases(src)
    return [
        (node, aliases[node.func.id][1])
        for node in ast.walk(src.tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in aliases
    ]


def _unused_aliases(src: Source) -> list[ast.Assign]:
    """The alias assignments nothing reads any more (every call of them already replaced)."""
    read = {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return [node for name, (node, _) in _aliases(src).items() if name not in read]


def _buffers(src: Source) -> list[tuple[ast.Call, str]]:
    """Each ``buffer=<direct allocation>`` call with its region (``sbuf`` / ``psum``)."""
    found = []
    for node in ast.walk(src.tree):
        if not isinstance(node, ast.keyword) or node.arg != "buffer" or not isinstance(node.value, ast.Call):
            continue
        region = _region(src, node.value.func)
        if region is not None:
            found.append((node.value, region))
    return found


def _directives(src: Source) -> list[ast.expr]:
    """Allocator directive decorators (bare or called) alone on their lines (``@`` and the decorator only)."""
    found: list[ast.expr] = []
    for node in ast.walk(src.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                func = d.func if isinstance(d, ast.Call) else d
                lines = src.lines[d.lineno - 1 : d.end_lineno]
                alone = (
                    lines[0].strip().startswith("@")
                    and src.text_of(d).strip() == "\n".join(lines).strip()[1:]
                )
                if src.canonical(func) in DIRECTIVES and alone:
                    found.append(d)
    return found
