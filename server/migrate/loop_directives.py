"""Legacy loop directives: ``for i in nl.sequential_range(n, directives=nki.compiler.no_reorder()):`` -> ``with
nl.no_reorder():`` around ``for i in range(n):``.

The legacy directive kept the loop's instructions in program order [v2.26.1 nki.language.sequential_range,
nki.compiler.no_reorder]; 0.7 says the same with the context manager ``nl.no_reorder()``, which allows static loops
inside it (language.md §10, nki-0.7.md; ``range`` is the static loop that replaced ``sequential_range``). Neither
changes the values computed (a scheduling constraint; the proof checks it).

``directives=nki.compiler.multi_buffer(factor)`` asked for a multi-buffered allocation of the loop's tensors, with
``factor`` buffers [aws-neuron-sdk nki/compiler: "Create a MultiBufferDirective to enable multi-buffered
allocation"]; 0.7 has no loop directive and its compiler chooses the buffers, so the loop becomes ``for i in
range(n):`` with the directive dropped (inferred: how many buffers hold a tensor changes where it lives, not the
values a kernel computes; the proof checks it). Other ``directives=`` values and other iterator options stay
manual steps (``iterators``).
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source

_ITERATORS = frozenset({"affine_range", "sequential_range", "static_range"})
_NO_REORDER = "nki.compiler.no_reorder"
_MULTI_BUFFER = "nki.compiler.multi_buffer"


def run(src: Source) -> PassResult:
    """Wrap each loop whose iterator carries ``directives=no_reorder()`` in ``with nl.no_reorder():``; make one
    carrying ``directives=multi_buffer(...)`` a ``range`` loop."""
    out = PassResult()
    language = src.alias_of(LANGUAGE, "nl")
    for call in _buffered(src):
        operands = ", ".join(src.text_of(a) for a in call.args)
        leaf = (src.canonical(call.func) or "").rpartition(".")[2]
        out.change(
            src.replace(call, f"range({operands})"),
            call.lineno,
            f"nl.{leaf} directives=multi_buffer()",
            "range(...): 0.7's compiler chooses the buffers",
        )
    for loop, call in _loops(src):
        first, last = loop.lineno, loop.end_lineno or loop.lineno
        indent = src.lines[first - 1][: src.span(loop).column - 1]
        unit = _unit(src, loop, indent)
        span = src.span(call)
        lines = list(src.lines[first - 1 : last])
        operands = ", ".join(src.text_of(a) for a in call.args)
        line = lines[call.lineno - first]
        lines[call.lineno - first] = (
            line[: span.column - 1] + f"range({operands})" + line[span.end_column - 1 :]
        )
        body = [unit + text if text.strip() else text for text in lines]
        new = "\n".join([f"{indent}with {language}.no_reorder():", *body]) + "\n"
        out.change(
            TextEdit(Span(first, 1, last + 1, 1), new),
            loop.lineno,
            f"nl.{(src.canonical(call.func) or '').rpartition('.')[2]} directives=no_reorder()",
            f"with {language}.no_reorder(): around for ... in range(...)",
        )
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The iterator calls and their ``no_reorder()`` or ``multi_buffer()`` directives (by ``id``) this pass rewrites."""
    found: set[int] = set()
    for _, call in _loops(src):
        found.add(id(call))
        found.update(id(k.value) for k in call.keywords)
    for call in _buffered(src):
        found.add(id(call))
        found.update(id(k.value) for k in call.keywords)
    return found


def _directed(src: Source) -> list[tuple[ast.For, ast.Call, ast.Call, str]]:
    """The ``for`` loops whose static iterator's only keyword is ``directives=`` a call: the loop, the iterator,
    the directive and its canonical name."""
    found = []
    for node in src.nodes:
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            call = node.iter
            module, _, leaf = (src.canonical(call.func) or "").rpartition(".")
            directive = call.keywords[0].value if [k.arg for k in call.keywords] == ["directives"] else None
            if module == LANGUAGE and leaf in _ITERATORS and isinstance(directive, ast.Call):
                found.append((node, call, directive, src.canonical(directive.func) or ""))
    return found


def _loops(src: Source) -> list[tuple[ast.For, ast.Call]]:
    """The ``for`` loops whose static iterator has positional operands and exactly ``directives=no_reorder()``,
    on lines of their own (re-indented) with no multi-line string inside."""
    return [
        (node, call)
        for node, call, directive, name in _directed(src)
        if name == _NO_REORDER
        and not directive.args
        and not directive.keywords
        and call.lineno == call.end_lineno
        and not src.lines[node.lineno - 1][: src.span(node).column - 1].strip()
        and not any(
            isinstance(n, ast.Constant) and isinstance(n.value, str) and n.lineno != n.end_lineno
            for n in ast.walk(node)
        )
    ]


def _buffered(src: Source) -> list[ast.Call]:
    """The iterators of ``for`` loops with positional operands and exactly ``directives=multi_buffer(...)``."""
    return [call for _, call, _, name in _directed(src) if name == _MULTI_BUFFER]


def _unit(src: Source, loop: ast.For, indent: str) -> str:
    """One indentation level as the loop's body writes it."""
    body = src.lines[loop.body[0].lineno - 1]
    inner = body[: len(body) - len(body.lstrip())]
    return inner[len(indent) :] if inner.startswith(indent) and len(inner) > len(indent) else "    "
