"""jedi over NKI source with our stubs on the path: completion, signatures, docs and definitions of the NKI API.

No LSP types here: results are jedi objects or plain data; ``intelligence`` adapts them. jedi is not thread-safe,
so callers run every method on one thread. The stubs folder is appended to jedi's sys.path, so an installed SDK
(``nki`` importable by the server's interpreter) is found first and wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nki_studio.model.targets import Generation, NkiVersion, Target

if TYPE_CHECKING:  # jedi itself is imported on first use (it costs ~0.5 s CPU at server start-up)
    import jedi
    from jedi.api.classes import BaseName, Completion, Signature

STUBS_DIR = Path(__file__).resolve().parents[2] / "stubs"

# A file is ours when it imports nki (current API) or neuronxcc.nki (legacy); other Python files get nothing.
_NKI_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?:nki|neuronxcc)\b|import[ \t]+(?:nki|neuronxcc\.nki)\b)", re.M
)
_API_MODULES = ("nki", "neuronxcc.nki")


def imports_nki(text: str) -> bool:
    """Whether the source imports ``nki`` or ``neuronxcc.nki`` at any level."""
    return _NKI_IMPORT.search(text) is not None


def is_api_name(name: BaseName) -> bool:
    """Whether a jedi name belongs to the NKI API (our stubs or an installed SDK)."""
    module = name.module_name or ""
    return any(module == m or module.startswith(m + ".") for m in _API_MODULES)


def is_legacy_module(module: str | None) -> bool:
    """Whether a module (a jedi name's ``module_name``) is the legacy ``neuronxcc.nki`` API (its stubs or an
    installed compiler)."""
    return module is not None and (module == "neuronxcc.nki" or module.startswith("neuronxcc.nki."))


def api_module(module: str | None) -> str:
    """An NKI module without its namespace: ``""`` (``nki`` itself), ``"language"``, ``"isa"``, ``"compiler"``
    ... alike for ``nki.isa`` and ``neuronxcc.nki.isa``."""
    return (module or "").removeprefix("neuronxcc.").removeprefix("nki").removeprefix(".")


class NkiJedi:
    """jedi scripts for NKI documents, one project per workspace root."""

    def __init__(self, root: str | None = None) -> None:
        from jedi.api.environment import InterpreterEnvironment
        from nki_studio.lsp.features import parso_cache

        parso_cache.install()  # a server ending mid-write must not leave a cache entry jedi cannot read
        # The server's own interpreter: no subprocess per request; the SDK is visible when installed next to us.
        self.environment = InterpreterEnvironment()
        self.root = Path(root).resolve() if root else None
        self._projects: dict[Path, jedi.Project] = {}
        self._members: dict[tuple[str, str], list[Completion]] = {}
        self._hover_names: dict[
            tuple[str, str, str], list[BaseName]
        ] = {}  # (kind, imports, expression) -> names

    def project(self, path: str | None) -> jedi.Project:
        """The workspace's project for files inside it, else one rooted at the file's folder (so sibling helper
        modules resolve)."""
        import jedi

        folder = Path(path).resolve().parent if path else Path.cwd()
        root = self.root if self.root is not None and folder.is_relative_to(self.root) else folder
        project = self._projects.get(root)
        if project is None:
            project = self._projects[root] = jedi.Project(
                root, added_sys_path=[str(STUBS_DIR)], smart_sys_path=True
            )
        return project

    def script(self, text: str, path: str | None) -> jedi.Script:
        import jedi

        return jedi.Script(text, path=path, project=self.project(path), environment=self.environment)

    def forget(self, path: str) -> None:
        """Drop what parso keeps of a closed document: jedi parses every request's text under its path, and
        parso caches the tree per path (so the next parse of that path is a diff) for 10 minutes, about as much
        memory as the text's objects for every document ever hovered (jedi thread only)."""
        from parso.cache import parser_cache

        resolved = Path(path).resolve()
        for by_path in parser_cache.values():
            for key in [k for k in by_path if k is not None and Path(k).resolve() == resolved]:
                del by_path[key]

    def warm_up(self) -> None:
        """Parse the stubs once so the first real request does not pay for it."""
        source = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\nnl.ndarray\nnisa.nc_matmul("
        script = self.script(source, None)
        script.complete(4, 3)
        script.get_signatures(5, len("nisa.nc_matmul("))

    def complete(self, text: str, path: str | None, line: int, column: int) -> list[Completion]:
        """NKI completions at 1-based ``line`` / 0-based code-point ``column``: attributes of the NKI modules and
        keyword arguments of NKI calls. Everything else is left to the editor's Python support.

        Only the module's imports and the statement being typed are given to jedi (``_excerpt``): what follows
        ``nl.`` or sits inside ``nisa.x(`` depends on nothing else, and the cost no longer grows with the module.
        Attribute lists are cached per (imports, expression) and filtered by the typed prefix here.
        """
        excerpt = _excerpt(text, line, column)
        if excerpt is None:
            return []
        source, ex_line, ex_column = excerpt
        before = source.split("\n")[ex_line - 1][:ex_column]
        attribute = re.search(r"([A-Za-z_][\w.]*)\.(\w*)$", before)
        if attribute is not None:
            key = (source[: source.rfind("\n", 0, len(source) - len(before))], attribute.group(1))
            members = self._members.get(key)
            if members is None:
                script = self.script(source[: len(source) - len(attribute.group(2))], path)
                members = [
                    c
                    for c in script.complete(ex_line, ex_column - len(attribute.group(2)))
                    if is_api_name(c) and not c.name.startswith("__")
                ]
                self._members[key] = members
                if len(self._members) > 256:
                    self._members.pop(next(iter(self._members)))
            partial = attribute.group(2).lower()
            return [c for c in members if c.name.lower().startswith(partial)]
        return self._keyword_arguments(source, path, ex_line, ex_column)

    def _keyword_arguments(self, source: str, path: str | None, line: int, column: int) -> list[Completion]:
        """``name=`` completions of the NKI call around the cursor, cached per (imports, callee)."""
        rows = source.split("\n")
        head = "\n".join([*rows[: line - 1], rows[line - 1][:column]])
        call = _open_call(head)
        partial = re.search(r"(\w*)$", head)
        if call is None or partial is None:
            return []
        callee_end, callee = call
        imports = rows[: source.count("\n", 0, source.find(callee)) if callee in source else 0]
        if callee.split(".")[0] not in _nki_bound_names(imports):
            return []  # not an NKI call: never make jedi infer other libraries (numpy takes seconds)
        prefix = partial.group(1)
        key = ("\n".join(imports), callee + "(")
        params = self._members.get(key)
        if params is None:  # ask jedi about a bare call, so no argument typed so far hides a parameter
            bare = f"{key[0]}\n{callee}("
            script = self.script(bare, path)
            cut_line, cut_column = bare.count("\n") + 1, len(callee) + 1
            if not any(is_api_name(s) for s in script.get_signatures(cut_line, cut_column)):
                params = []
            else:
                params = [
                    c
                    for c in script.complete(cut_line, cut_column)
                    if c.type == "param" and c.name_with_symbols.endswith("=")
                ]
            self._members[key] = params
        given = set(re.findall(r"\b(\w+)\s*=(?!=)", head[callee_end:]))
        return [c for c in params if c.name.startswith(prefix) and c.name.rstrip("=") not in given]

    def signatures(self, text: str, path: str | None, line: int, column: int) -> list[Signature]:
        """Signatures of the NKI call around the cursor."""
        return [s for s in self.script(text, path).get_signatures(line, column) if is_api_name(s)]

    def api_names(self, text: str, path: str | None, line: int, column: int) -> list[BaseName]:
        """The NKI API name under the cursor (after following imports), if any; a variable holding an NKI
        object is not an API name."""
        # ``nl.ndarray``: only the imports decide what it is, so jedi reads them and the expression, not the whole
        # module (which changes with every keystroke); cached per (imports, expression).
        quick = _dotted_at(text, line, column)
        if quick is not None:
            imports, dotted = quick
            key = ("hover", imports, dotted)
            cached = self._hover_names.get(key)
            if cached is None:
                cached = self._api_names_of(
                    f"{imports}\n{dotted}", path, imports.count("\n") + 2, len(dotted)
                )
                self._hover_names[key] = cached
                if len(self._hover_names) > 256:
                    self._hover_names.pop(next(iter(self._hover_names)))
            return cached
        return self._api_names_of(text, path, line, column)

    def _api_names_of(self, text: str, path: str | None, line: int, column: int) -> list[BaseName]:
        script = self.script(text, path)
        try:
            names = script.infer(line, column)
        except (ValueError, NotImplementedError):
            return []
        under = _word_at(text, line, column)
        found = [n for n in names if is_api_name(n) and n.name == under]
        if found:
            return found
        # A module attribute declared by annotation (``nl.mgrid: _Mgrid``, ``nl.float32: DType``) infers to its
        # type; its own statement (with the docstring under it) is where goto lands.
        try:
            names = script.goto(line, column, follow_imports=True)
        except (ValueError, NotImplementedError):
            return []
        return [n for n in names if is_api_name(n) and n.name == under and n.type == "statement"]

    def definitions(self, text: str, path: str | None, line: int, column: int) -> list[BaseName]:
        """Where the name under the cursor is defined (user helpers in this or another module, stub entries)."""
        try:
            names = self.script(text, path).goto(
                line, column, follow_imports=True, follow_builtin_imports=False
            )
        except (ValueError, NotImplementedError):
            return []
        return [n for n in names if n.module_path is not None and n.line is not None]


def _word_at(text: str, line: int, column: int) -> str:
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return ""
    row = lines[line - 1]
    start = column
    while start > 0 and (row[start - 1].isalnum() or row[start - 1] == "_"):
        start -= 1
    end = column
    while end < len(row) and (row[end].isalnum() or row[end] == "_"):
        end += 1
    return row[start:end]


_IMPORT = re.compile(r"^(?:import|from)\s")
_MAX_STATEMENT_LINES = 40


def _top_imports(lines: list[str], skip: int) -> list[str]:
    """The module's top-level import lines (with their continuation lines), except the 0-based line ``skip``."""
    imports = []
    for i, row in enumerate(lines):
        if i != skip and _IMPORT.match(row):
            imports.append(row)
            while row.rstrip().endswith(("(", ",", "\\")) and i + 1 < len(lines):  # parenthesised imports
                i += 1
                row = lines[i]
                imports.append(row)
                if ")" in row:
                    break
    return imports


_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.\w+)+)$")


def _dotted_at(text: str, line: int, column: int) -> tuple[str, str] | None:
    """For a cursor in ``alias.attr[.attr]`` whose alias an NKI import binds: (the module's imports, the dotted
    expression up to the end of the word under the cursor); None otherwise (jedi then reads the whole module)."""
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    row = lines[line - 1]
    end = column
    while end < len(row) and (row[end].isalnum() or row[end] == "_"):
        end += 1
    m = _DOTTED.search(row[:end])
    if m is None or m.start() > column:
        return None
    imports = _top_imports(lines, line - 1)
    if m.group(1).split(".")[0] not in _nki_bound_names(imports):
        return None
    return "\n".join(imports), m.group(1)


def _excerpt(text: str, line: int, column: int) -> tuple[str, int, int] | None:
    """The module's top-level imports followed by the statement under the cursor (dedented, up to the cursor);
    returns the excerpt and the cursor in it (1-based line, column)."""
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    imports = _top_imports(lines, line - 1)
    start = line - 1  # the line holding the bracket that is still open at the cursor's line, if any
    depth = 0
    for candidate in range(line - 2, max(-1, line - 2 - _MAX_STATEMENT_LINES), -1):
        depth += _depth(lines[candidate])
        if depth > 0:
            start = candidate
            break
    statement = (
        [lines[start].lstrip(), *lines[start + 1 : line - 1], lines[line - 1][:column]]
        if start < line - 1
        else [lines[start][:column].lstrip()]
    )
    cursor_column = len(statement[-1])
    source = "\n".join([*imports, *statement])
    return source, len(imports) + len(statement), cursor_column


_IMPORT_AS = re.compile(r"^import\s+((?:nki|neuronxcc)[\w.]*)(?:\s+as\s+(\w+))?")
_FROM_IMPORT = re.compile(r"^from\s+(?:nki|neuronxcc)[\w.]*\s+import\s+\(?([^)#]*)")


def _nki_bound_names(import_lines: list[str]) -> set[str]:
    """Names that NKI imports bind (``nisa`` of ``import nki.isa as nisa``, ``nki`` of ``import nki.isa``...)."""
    names: set[str] = set()
    for row in import_lines:
        m = _IMPORT_AS.match(row)
        if m:
            names.add(m.group(2) or m.group(1).split(".")[0])
            continue
        m = _FROM_IMPORT.match(row)
        if m:
            for part in m.group(1).split(","):
                words = part.split()
                if words:
                    names.add(words[-1])
    return names


def _open_call(head: str) -> tuple[int, str] | None:
    """The innermost call whose parenthesis is still open at the end of ``head``: (offset after its '(', callee)."""
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        ch = head[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None
                callee = re.search(r"([A-Za-z_][\w.]*)\s*$", head[:i])
                return (i + 1, callee.group(1)) if callee else None
            depth -= 1
    return None


def _depth(code: str) -> int:
    """Open minus closed brackets of a line (strings and comments are ignored roughly, which is enough here)."""
    code = re.sub(r"#.*$", "", re.sub(r"'[^']*'|\"[^\"]*\"", "", code))
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


# ---- per-target notes for hovers -------------------------------------------------------------------------------

_GEN_ONLY = re.compile(r"\b(trn[123])( only|\+)")
_VERSION_ONLY = re.compile(r"\b0\.7 only\b")
_REMOVED_07 = re.compile(r"removed in 0\.7", re.I)


@dataclass(frozen=True)
class TargetNote:
    """One line of hover text about the configured target; ``warning`` marks an API unusable there."""

    text: str
    warning: bool = False


def target_notes(name: str, docstring: str, target: Target) -> list[TargetNote]:
    """Limits of ``target`` relevant to the API ``name`` plus availability warnings read from its docstring."""
    gen, limits = target.generation, target.limits
    notes: list[TargetNote] = []
    for m in _GEN_ONLY.finditer(docstring):
        wanted = Generation(m.group(1))
        order = [Generation.GEN2, Generation.GEN3, Generation.GEN4]
        ok = gen == wanted if m.group(2) == " only" else order.index(gen) >= order.index(wanted)
        if not ok:
            notes.append(TargetNote(f"Not available on {gen.value} (needs {m.group(1)}{m.group(2)}).", True))
            break
    if _VERSION_ONLY.search(docstring) and target.nki_version < NkiVersion(0, 7):
        notes.append(TargetNote(f"Needs NKI 0.7; the target is NKI {target.nki_version}.", True))
    if _REMOVED_07.search(docstring) and target.nki_version >= NkiVersion(0, 7):
        notes.append(TargetNote(f"Removed in NKI 0.7 (target NKI {target.nki_version}).", True))
    bank_fp32 = limits.psum_bank_bytes // 4
    if name in ("nc_matmul", "matmul"):
        notes.append(
            TargetNote(
                f"{gen.value}: K <= {limits.matmul_contraction_max}, M <= {limits.matmul_stationary_free_max}, "
                f"N <= {limits.matmul_moving_free_max_fp32} (FP32 PSUM dst)"
                + (
                    f", N <= {limits.matmul_moving_free_max_bf16} (BF16 dst)"
                    if limits.matmul_moving_free_max_bf16 != limits.matmul_moving_free_max_fp32
                    else ""
                )
                + f"; dst dtypes {', '.join(limits.psum_dst_dtypes)}."
            )
        )
    elif name == "bn_stats":
        notes.append(
            TargetNote(f"{gen.value}: at most {limits.bn_stats_free_max} free elements per partition.")
        )
    elif name in ("sbuf", "psum", "ndarray", "zeros", "ones", "full", "tile_size"):
        notes.append(
            TargetNote(
                f"{gen.value}: {limits.partitions} partitions; SBUF {_kib(limits.sbuf_bytes_per_partition)} and PSUM "
                f"{_kib(limits.psum_bytes_per_partition)} per partition (PSUM: {limits.psum_banks} banks of "
                f"{_kib(limits.psum_bank_bytes)} = {bank_fp32} FP32)."
            )
        )
    return notes


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} B"
