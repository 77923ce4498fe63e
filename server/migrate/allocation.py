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
Directive decorators of the same family (``enable_stack_allocator``, ``force_auto_alloc``) steer the legacy
allocator only and are dropped.
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source

_ALLOCATORS = frozenset({"mod_alloc", "alloc", "auto_alloc"})
_REGIONS = frozenset({"sbuf", "psum"})
_DIRECTIVES = frozenset({"nki.compiler.enable_stack_allocator", "nki.compiler.force_auto_alloc"})


def run(src: Source) -> PassResult:
    """Replace every direct allocation given as ``buffer=`` by its memory region; drop allocator directives."""
    out = PassResult()
    nl = src.alias_of(LANGUAGE, "nl")
    for call, region in _buffers(src):
        out.change(
            src.replace(call, f"{nl}.{region}"),
            call.lineno,
            call_name(src, call),
            f"{nl}.{region}, placed by the compiler (the legacy fixed address is dropped)",
        )
    for decorator in _directives(src):
        line = decorator.end_lineno or decorator.lineno
        edit = TextEdit(Span(decorator.lineno, 1, line + 1, 1), "")
        out.change(edit, decorator.lineno, call_name(src, decorator), "dropped (legacy allocator directive)")
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The ``nki.compiler`` calls of ``src`` this pass rewrites (``manual.py`` lists the others)."""
    return {id(call) for call, _ in _buffers(src)} | {id(d) for d in _directives(src)}


def call_name(src: Source, node: ast.expr) -> str:
    """``mod_alloc``, ``enable_stack_allocator`` ...: the construct a change or a manual step names."""
    func = node.func if isinstance(node, ast.Call) else node
    return (src.canonical(func) or "").rpartition(".")[2]


def _buffers(src: Source) -> list[tuple[ast.Call, str]]:
    """Each ``buffer=<direct allocation>`` call with its region (``sbuf`` / ``psum``)."""
    found = []
    for node in ast.walk(src.tree):
        if not isinstance(node, ast.keyword) or node.arg != "buffer" or not isinstance(node.value, ast.Call):
            continue
        parts = (src.canonical(node.value.func) or "").split(".")
        if (
            parts[:2] == ["nki", "compiler"]
            and len(parts) == 4
            and parts[2] in _REGIONS
            and parts[3] in _ALLOCATORS
        ):
            found.append((node.value, parts[2]))
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
                if src.canonical(func) in _DIRECTIVES and alone:
                    found.append(d)
    return found
