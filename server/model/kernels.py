"""Kernel discovery: which functions of a module are NKI kernels, and everything they reach.

A kernel is a function decorated with ``nki.jit`` under any alias or call form (``@nki.jit``, ``@nki.jit(...)``,
``from nki import jit``, ``import nki as n``), or wrapped as ``k = nki.jit(f)``; legacy ``neuronxcc.nki`` kernels
and their decorators (``jit``, ``trace``, ``baremetal``, ``benchmark``, ``profile``, torch-neuronx ``nki_jit``)
count too. NKI inlines every call at specialisation time (python-subset.md §1), so every function a kernel calls
or passes as a value -- helpers in the same module, methods of classes it uses, and functions of local modules
resolved relative to the file -- is kernel code as well; so is any function calling ``nki.language``/``nki.isa``/``nki.collectives`` APIs,
which only mean something inside a kernel. Discovery records the call sites, so value propagation can bind
helper arguments at each call.

Only ``ast`` is used: local modules are parsed from disk (cached by path and mtime) and never imported.
"""

from __future__ import annotations

import ast
import os
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from nki_studio.core.file_stamp import Stamp, file_stamp
from nki_studio.model.imports import ImportAliases, is_external, is_legacy, to_canonical
from nki_studio.model.syntax import child_fields, field_types, source_lines

# Decorators (canonical names) that make a function a kernel.
KERNEL_DECORATORS = frozenset({"nki.jit", "nki.trace", "nki.baremetal", "nki.benchmark", "nki.profile"})
# torch-neuronx's legacy integration (deprecations.md §D): ``from torch_neuronx import nki_jit``.
_TORCH_NKI_JIT_SUFFIX = ".nki_jit"

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_MAX_LOCAL_MODULES = 64  # bound on modules parsed per discovery (deep import graphs of big repos)
_MAX_ANCESTORS = 8  # directories walked up when resolving an absolute local import


@dataclass
class ModuleInfo:
    """A parsed module: its path, text, tree and imports."""

    path: str
    source: str
    tree: ast.Module
    aliases: ImportAliases
    functions: dict[str, FunctionInfo] = field(default_factory=dict)  # qualname -> info
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)  # module-level classes
    # id(function node) -> its own nodes in source order (arguments, decorators, body; not nested defs' insides)
    own_nodes: dict[int, list[ast.AST]] = field(default_factory=dict)
    # id(function node) -> its own nodes by exact type, each list in source order (what rules filter by type)
    own_by_type: dict[int, dict[type, list[ast.AST]]] = field(default_factory=dict)
    # every call of the module in source order (the one type read module-wide, by kernel marking and the rules)
    calls: list[ast.Call] = field(default_factory=list)
    # every Name and Attribute node in source order (the chains imports resolve through)
    chains: list[ast.Name | ast.Attribute] = field(default_factory=list)
    # id(function node) -> its own Names that may refer to local code (:func:`_bound_names`), each with its
    # parent node, in source order: what :func:`_local_references` starts from; id(tree) -> those outside
    # functions
    name_refs: dict[int, list[tuple[ast.Name, ast.AST]]] = field(default_factory=dict)
    # local name -> (imported module, level, attribute or None for ``import x as name``), all import forms
    import_index: dict[str, tuple[str, int, str | None]] = field(default_factory=dict)
    kernels_marked: bool = False
    # statements (outermost of their scope) with code nested past MAX_AST_DEPTH, cut off before any analysis
    too_deep: list[ast.stmt] = field(default_factory=list)
    short_names: set[str] = field(
        default_factory=set
    )  # names that can refer to a local function/class/module
    path_cache: dict[tuple[str, int], str | None] = field(
        default_factory=dict
    )  # (dotted, level) -> local file

    @property
    def lines(self) -> Sequence[str]:
        """Source lines without line ends (split once per text)."""
        return source_lines(self.source)

    def module_imports(self) -> list[tuple[str, str | None]]:
        """(local name, dotted target) of every import binding; target None for module-level relative imports
        (their value comes from :meth:`ModuleResolver.imported_symbol`)."""
        out: list[tuple[str, str | None]] = list(self.aliases.bindings.items())
        for stmt in self.tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level > 0:
                out.extend(((a.asname or a.name), None) for a in stmt.names if a.name != "*")
        return out


@dataclass(eq=False)
class FunctionInfo:
    """A function (or method) of some module; ``kernel_decorator`` is set for kernels."""

    qualname: str  # "f", "Cls.method", "outer.inner"
    node: _FunctionNode
    module: ModuleInfo
    parent: FunctionInfo | None = None  # enclosing function for nested defs
    kernel_decorator: ast.expr | None = None  # the decorator (or wrapping call) that makes it a kernel
    kernel_legacy: bool = False  # decorated through the legacy neuronxcc.nki namespace

    @property
    def name(self) -> str:
        """The function's own name."""
        return self.node.name

    @property
    def path(self) -> str:
        """Path of the module that defines it."""
        return self.module.path

    @property
    def is_kernel(self) -> bool:
        """True for ``@nki.jit`` (or legacy-decorated) functions."""
        return self.kernel_decorator is not None

    def __repr__(self) -> str:
        return f"FunctionInfo({self.path}:{self.node.lineno} {self.qualname}{' kernel' if self.is_kernel else ''})"


@dataclass(frozen=True, eq=False)
class CallSite:
    """``caller`` calls ``callee`` at ``call`` (an ``ast.Call`` in the caller's module)."""

    caller: FunctionInfo
    call: ast.Call
    callee: FunctionInfo


@dataclass
class KernelDiscovery:
    """Kernels of one module and the closure of kernel code they reach (possibly in other modules)."""

    module: ModuleInfo
    kernels: list[FunctionInfo]
    reachable: list[FunctionInfo]  # kernels first, then helpers in discovery order; each once
    call_sites: list[CallSite]
    classes: list[tuple[ModuleInfo, ast.ClassDef]]  # classes referenced from kernel code
    # the resolver discovery used: the value interpreter resolves imports through it (shared cache)
    resolver: ModuleResolver = field(default_factory=lambda: ModuleResolver())

    def in_this_module(self) -> list[FunctionInfo]:
        """Reachable functions defined in the analysed module."""
        return [f for f in self.reachable if f.module is self.module]


class ModuleLoader:
    """Parses local modules on demand, cached by path and file stamp; never imports them."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[Stamp, ModuleInfo | None]] = {}

    def load(self, path: str) -> ModuleInfo | None:
        """The parsed module at ``path``, or None when it cannot be read or parsed."""
        path = os.path.abspath(path)
        try:
            stamp = file_stamp(path)
        except OSError:
            return None
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            with open(path, encoding="utf-8") as fh:
                source = fh.read()
            info: ModuleInfo | None = build_module(source, path)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            info = None
        self._cache[path] = (stamp, info)
        return info


_DEFAULT_LOADER = ModuleLoader()


def build_module(source: str, path: str, tree: ast.Module | None = None) -> ModuleInfo:
    """Parse (unless ``tree`` is given) and index a module's functions, classes and imports."""
    if tree is None:
        tree = ast.parse(source, filename=path)
    walk = _traverse(tree, _bound_names(tree))
    # A traversal meets statements in source order: the imports of both kinds are in order.
    imports = walk.imports
    module = ModuleInfo(
        path=os.path.abspath(path) if path else path,
        source=source,
        tree=tree,
        aliases=ImportAliases.from_nodes(imports),
        own_nodes=walk.own,
        own_by_type=walk.own_by_type,
        calls=walk.calls,
        chains=walk.chains,
        name_refs=walk.name_refs,
        too_deep=walk.too_deep,
    )
    _index_functions(module, tree.body, prefix="", parent=None)
    for node in imports:
        module.import_index.update(_import_entries(node))
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            module.classes[stmt.name] = stmt
    # Imports of NKI/library/stdlib modules never resolve to a local file (ModuleResolver), so only local ones
    # can name kernel code.
    module.short_names = (
        {q.rsplit(".", 1)[-1] for q in module.functions}
        | set(module.classes)
        | {name for name, entry in module.import_index.items() if _may_be_local(entry)}
    )
    return module


def _import_entries(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, tuple[str, int, str | None]]]:
    """The :attr:`ModuleInfo.import_index` entries of one import statement."""
    if isinstance(node, ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                yield alias.asname or alias.name, (node.module or "", node.level, alias.name)
    else:
        for alias in node.names:
            if alias.asname:
                yield alias.asname, (alias.name, 0, None)


def _may_be_local(entry: tuple[str, int, str | None]) -> bool:
    """Whether an import (an :attr:`ModuleInfo.import_index` entry) can name kernel code: imports of
    NKI/library/stdlib modules never resolve to a local file (:class:`ModuleResolver`), so only local ones."""
    src, level, _ = entry
    return level > 0 or not is_external(src)


# Deepest AST nesting the analyses take: they recurse (a few Python frames per level) under the interpreter's
# recursion limit of 1000. Deeper code (an elif chain of 1,000 branches, a 2,500-deep subscript chain) is cut
# at this depth, the cut replaced by TOO_DEEP markers, and reported once per construct (NKI003).
MAX_AST_DEPTH = 100
TOO_DEEP = "__nki_studio_too_deep__"  # name of the marker standing for a cut-off subtree
_SCOPES = frozenset((ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
_FUNCTION_KINDS = frozenset((ast.FunctionDef, ast.AsyncFunctionDef))


@dataclass
class _Traversal:
    """What one traversal of a tree gives every analysis (the fields of :class:`ModuleInfo` of the same names)."""

    own: dict[int, list[ast.AST]]
    own_by_type: dict[int, dict[type, list[ast.AST]]]
    calls: list[ast.Call]
    imports: list[ast.Import | ast.ImportFrom]
    chains: list[ast.Name | ast.Attribute]
    name_refs: dict[int, list[tuple[ast.Name, ast.AST]]]
    too_deep: list[ast.stmt]  # statements (outermost of their scope) holding code cut at MAX_AST_DEPTH


def _traverse(tree: ast.Module, watched: set[str]) -> _Traversal:
    """Each function's own nodes in source order and grouped by type, the module's calls and imports,
    and the Name/Attribute chains: one traversal serves every analysis (no analysis walks the whole tree again
    to filter it). Module-wide, only calls and imports are grouped: no analysis reads another type across the
    module, and a grouping of every node cost a lookup and an append per node. The names in ``watched`` a
    function reads or writes are kept with their parents (``name_refs``): the name is at hand here, while a
    later pass over every name of every function touched each node again. Code nested past
    :data:`MAX_AST_DEPTH` is cut on the way."""
    own: dict[int, list[ast.AST]] = {}
    # defaultdicts while grouping (an absent type costs no lookup and test per node), plain dicts after
    own_by_type: dict[int, defaultdict[type, list[ast.AST]]] = {}
    name_refs: dict[int, list[tuple[ast.Name, ast.AST]]] = {}
    watched = watched | {TOO_DEEP}  # one set lookup per name tests both
    calls: list[ast.Call] = []
    imports: list[ast.Import | ast.ImportFrom] = []
    chains: list[ast.Name | ast.Attribute] = []
    too_deep: dict[int, ast.stmt] = {}
    # per node type: its child_fields, whether it is a function, whether it is a scope (one lookup per node)
    plans: dict[type, tuple[tuple[str, ...], bool, bool]] = {}
    name_kind, attribute_kind, call_kind, constant_kind = ast.Name, ast.Attribute, ast.Call, ast.Constant
    node_kind, stmt_kind = ast.AST, ast.stmt
    import_kinds = (ast.Import, ast.ImportFrom)

    # Recursive, not an explicit stack: a call per node with its context as arguments costs less than a tuple
    # pushed and unpacked per node. A node is recorded by its parent's loop, and the leaves (most nodes: Name,
    # Constant) are not visited at all: they have no field to look at (model.syntax.child_fields), so the call
    # is saved. The depth is bounded: code past MAX_AST_DEPTH is cut before it is visited.
    # ast.iter_child_nodes is inlined (this is the hottest loop of linting a large tree); the load/store
    # context and operator singletons are left out: no analysis walks to them. Code outside functions is
    # recorded in lists nobody keeps, which costs less than a test per node. ``chains.append(...)`` and the
    # like are not bound once: Python 3.11 specialises a list's ``append`` call, a bound method call it does not.
    def visit(
        node: ast.AST,
        kind: type,
        owner: list[ast.AST],
        groups: defaultdict[type, list[ast.AST]],
        refs: list[tuple[ast.Name, ast.AST]],
        depth: int,
        top: ast.stmt | None,
    ) -> None:
        """Record the children of ``node`` (of type ``kind``, itself recorded) and visit those with fields."""
        plan = plans.get(kind)
        if plan is None:
            plan = plans[kind] = (child_fields(kind), kind in _FUNCTION_KINDS, kind in _SCOPES)
        fields, function, scope = plan
        if function:
            owner = own[id(node)] = []
            groups = own_by_type[id(node)] = defaultdict(list)
            refs = name_refs[id(node)] = []
        if depth >= MAX_AST_DEPTH and _cut(node) and top is not None:
            too_deep[id(top)] = top
        depth += 1
        for name in fields:
            value = getattr(node, name, None)
            for child in value if type(value) is list else (value,):
                if not isinstance(child, node_kind):
                    continue
                child_kind = type(child)
                owner.append(child)
                groups[child_kind].append(child)
                if child_kind is name_kind:
                    chains.append(child)  # type: ignore[arg-type]
                    if child.id in watched:  # type: ignore[attr-defined]
                        if child.id == TOO_DEEP and top is not None:  # type: ignore[attr-defined]
                            too_deep[id(top)] = top  # cut by an earlier traversal (incremental lint)
                        refs.append((child, node))  # type: ignore[arg-type]
                    continue
                if child_kind is constant_kind:
                    continue
                if child_kind is attribute_kind:
                    chains.append(child)  # type: ignore[arg-type]
                elif child_kind is call_kind:
                    calls.append(child)  # type: ignore[arg-type]
                elif child_kind in import_kinds:
                    imports.append(child)  # type: ignore[arg-type]
                # a statement of a scope's body is the "top" of everything under it
                top_of_child = child if scope and isinstance(child, stmt_kind) else top
                visit(child, child_kind, owner, groups, refs, depth, top_of_child)  # noqa: F821 (del below)

    try:
        visit(tree, type(tree), [], defaultdict(list), name_refs.setdefault(id(tree), []), 0, None)
    finally:
        del visit  # the closure refers to itself: a cycle that would hold every node until a collection
    cut = sorted(too_deep.values(), key=lambda s: (s.lineno, s.col_offset))
    by_type = {key: dict(groups) for key, groups in own_by_type.items()}
    return _Traversal(own, by_type, calls, imports, chains, name_refs, cut)


# ASDL types of the fields that hold statements, directly or in an ``except``/``case`` clause (an expression
# never holds one).
_BLOCK_TYPES = frozenset({"stmt", "excepthandler", "match_case"})
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {}
_DEF_KINDS = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name a ``def``, a ``class`` or an import of a possibly local module binds anywhere in ``tree``: a
    superset of :attr:`ModuleInfo.short_names` known before the traversal, found from the statements alone."""
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)  # a stack, not recursion: an elif chain can nest 1,000 deep
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in _DEF_KINDS:
            names.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.Import or kind is ast.ImportFrom:
            names.update(name for name, entry in _import_entries(node) if _may_be_local(entry))  # type: ignore[arg-type]
        for name in _block_fields(kind):
            pending.extend(getattr(node, name, None) or ())
    return names


def _block_fields(kind: type) -> tuple[str, ...]:
    """The fields of ``kind`` that hold statement blocks (:data:`_BLOCK_TYPES`; a field of unknown type too),
    cached per type."""
    fields = _BLOCK_FIELDS.get(kind)
    if fields is None:
        types = field_types(kind)
        fields = _BLOCK_FIELDS[kind] = tuple(
            f for f in child_fields(kind) if types.get(f, "stmt") in _BLOCK_TYPES
        )
    return fields


def _marker(like: ast.AST) -> ast.Name:
    marker = ast.Name(id=TOO_DEEP, ctx=getattr(like, "ctx", None) or ast.Load())
    return ast.copy_location(marker, like)


def _cut(node: ast.AST) -> bool:
    """Replace the sub-expressions and statement blocks of ``node`` by markers; whether anything was cut."""
    cut = False
    for name in child_fields(type(node)):
        value = getattr(node, name, None)
        if isinstance(value, ast.expr) and not isinstance(value, (ast.Name, ast.Constant)):
            setattr(node, name, _marker(value))
            cut = True
        elif type(value) is list and value:
            if isinstance(value[0], ast.stmt):
                setattr(node, name, [ast.copy_location(ast.Expr(value=_marker(value[0])), value[0])])
                cut = True
            elif isinstance(value[0], ast.expr):
                for i, item in enumerate(value):
                    if not isinstance(item, (ast.Name, ast.Constant)):
                        value[i] = _marker(item)
                        cut = True
    return cut


def _index_functions(
    module: ModuleInfo, body: Iterable[ast.stmt], prefix: str, parent: FunctionInfo | None
) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info = FunctionInfo(qualname=prefix + stmt.name, node=stmt, module=module, parent=parent)
            module.functions[info.qualname] = info
            _index_functions(module, stmt.body, prefix=info.qualname + ".", parent=info)
        elif isinstance(stmt, ast.ClassDef):
            _index_functions(module, stmt.body, prefix=prefix + stmt.name + ".", parent=parent)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            # Functions defined under ``if TYPE_CHECKING``/``try`` blocks still belong to this scope.
            for block in _sub_blocks(stmt):
                _index_functions(module, block, prefix, parent)


def _sub_blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if block:
            yield block
    for handler in getattr(stmt, "handlers", []) or []:
        yield handler.body


def kernel_decorator_name(expr: ast.expr, aliases: ImportAliases) -> str | None:
    """Canonical name of a kernel decorator expression (``nki.jit`` for ``@n.jit(...)``), else None.

    Legacy names are returned un-canonicalised (``neuronxcc.nki.jit``) so callers can tell them apart.
    """
    target = expr.func if isinstance(expr, ast.Call) else expr
    name = aliases.resolve(target)
    if name is None:
        return None
    if to_canonical(name) in KERNEL_DECORATORS:
        return name
    if name.startswith("torch_neuronx") and name.endswith(_TORCH_NKI_JIT_SUFFIX):
        return name
    return None


def _mark_kernels(module: ModuleInfo) -> None:
    if module.kernels_marked:
        return
    module.kernels_marked = True
    for info in module.functions.values():
        for dec in info.node.decorator_list:
            name = kernel_decorator_name(dec, module.aliases)
            if name is not None:
                info.kernel_decorator = dec
                info.kernel_legacy = is_legacy(name) or name.startswith("torch_neuronx")
                break
    # ``k = nki.jit(f)`` / ``nki.jit(f)(...)``: wrapping a function by call makes it a kernel too. The wrapped
    # function's name is one the traversal kept with its parent (name_refs): without such a call among those
    # parents (most modules), no call of the module need be looked at.
    if not any(
        type(parent) is ast.Call and parent.args and parent.args[0] is name
        for refs in module.name_refs.values()
        for name, parent in refs
    ):
        return
    for node in module.calls:
        if node.args and isinstance(node.args[0], ast.Name):
            # The wrapped function first: a dictionary lookup rules out most calls (``helper(t, ...)``) before
            # the callee's name is resolved through the imports.
            target = module.functions.get(node.args[0].id)
            if target is None or target.kernel_decorator is not None:
                continue
            name = kernel_decorator_name(node.func, module.aliases)
            if name is not None:
                target.kernel_decorator = node
                target.kernel_legacy = is_legacy(name) or name.startswith("torch_neuronx")


class ModuleResolver:
    """Resolves names imported by a module to functions, classes or whole modules of local files.

    The one module-resolution path of the analysis: kernel discovery and the value interpreter both use it.
    Results are cached per (module path, name); at most ``_MAX_LOCAL_MODULES`` local modules are loaded.
    """

    def __init__(self, loader: ModuleLoader | None = None) -> None:
        self.loader = loader or _DEFAULT_LOADER
        self.loaded = 0
        self.files: set[str] = set()  # local files loaded: what an analysis through this resolver depends on
        self.symbols: dict[tuple[str, str], tuple[ModuleInfo, str] | ModuleInfo | None] = {}

    def local_module(self, module: ModuleInfo, dotted: str, level: int) -> ModuleInfo | None:
        """Module ``dotted`` imported from ``module`` (relative when ``level`` > 0), if it is a local file."""
        if not module.path or self.loaded >= _MAX_LOCAL_MODULES:
            return None
        key = (dotted, level)
        if key not in module.path_cache:
            module.path_cache[key] = _find_local_file(module.path, dotted, level)
        path = module.path_cache[key]
        if path is None:
            return None
        found = self.loader.load(path)
        self.files.add(path)
        if found is not None:
            self.loaded += 1
            _mark_kernels(found)
        return found

    def imported_symbol(self, module: ModuleInfo, name: str) -> tuple[ModuleInfo, str] | ModuleInfo | None:
        """Where a name bound by ``from X import name`` or ``import X as name`` in ``module`` lives locally."""
        key = (module.path, name)
        if key not in self.symbols:
            self.symbols[key] = self._imported_symbol(module, name)
        return self.symbols[key]

    def _imported_symbol(self, module: ModuleInfo, name: str) -> tuple[ModuleInfo, str] | ModuleInfo | None:
        entry = module.import_index.get(name)
        if entry is None:
            return None
        src, level, attr = entry
        if level == 0 and is_external(src):
            return None
        if attr is None:  # ``import pkg.mod as name``
            return self.local_module(module, src, 0)
        target = self.local_module(module, src, level)
        if target is not None and (attr in target.functions or attr in target.classes):
            return (target, attr)
        # ``from pkg import submodule``
        return self.local_module(module, f"{src}.{attr}" if src else attr, level)


def _find_local_file(importer: str, dotted: str, level: int) -> str | None:
    """The source file of module ``dotted`` as imported from file ``importer``: relative to its package for
    ``level`` > 0, else searched in its directory and up to ``_MAX_ANCESTORS`` parents (a package beside it)."""
    rel = dotted.replace(".", os.sep) if dotted else ""
    if not rel:
        return None
    base = os.path.dirname(importer)
    if level > 0:
        for _ in range(level - 1):
            base = os.path.dirname(base)
        roots = [base]
    else:
        roots = []
        for _ in range(_MAX_ANCESTORS):
            roots.append(base)
            parent = os.path.dirname(base)
            if parent == base:
                break
            base = parent
    for root in roots:
        for path in (os.path.join(root, rel + ".py"), os.path.join(root, rel, "__init__.py")):
            if os.path.isfile(path):
                return path
    return None


def discover(
    source: str,
    path: str,
    tree: ast.Module | None = None,
    *,
    extra_roots: Iterable[str] = (),
    loader: ModuleLoader | None = None,
) -> KernelDiscovery:
    """Find the kernels of a module and all kernel code they reach.

    ``extra_roots`` names (qualnames) functions of this module that kernels in *other* files reach, so a
    helper module linted on its own is still checked as kernel code; functions calling ``nki.language``,
    ``nki.isa`` or ``nki.collectives`` APIs are roots too (:func:`_api_callers`). Raises SyntaxError for unparsable text.
    """
    module = build_module(source, path, tree)
    _mark_kernels(module)
    resolver = ModuleResolver(loader)
    kernels = [f for f in module.functions.values() if f.is_kernel]
    roots = kernels + [module.functions[q] for q in extra_roots if q in module.functions]
    roots += _api_callers(module)
    reachable: list[FunctionInfo] = []
    seen: set[int] = set()
    call_sites: list[CallSite] = []
    classes: list[tuple[ModuleInfo, ast.ClassDef]] = []
    seen_classes: set[int] = set()
    queue = deque(roots)  # popped from the front: a list would move every element left per pop
    while queue:
        func = queue.popleft()
        if id(func) in seen:
            continue
        seen.add(id(func))
        reachable.append(func)
        for node in _local_references(func):
            callee_target = node.func if type(node) is ast.Call else node
            resolved = _resolve_ref(func, callee_target, resolver)
            if resolved is None:
                continue
            if isinstance(resolved, FunctionInfo):
                if isinstance(node, ast.Call):
                    call_sites.append(CallSite(caller=func, call=node, callee=resolved))
                queue.append(resolved)
            else:
                mod, cls = resolved
                if id(cls) not in seen_classes:
                    seen_classes.add(id(cls))
                    classes.append((mod, cls))
                    queue.extend(f for q, f in mod.functions.items() if q.startswith(cls.name + "."))
    return KernelDiscovery(
        module=module,
        kernels=kernels,
        reachable=reachable,
        call_sites=call_sites,
        classes=classes,
        resolver=resolver,
    )


# NKI API namespaces whose functions only work while a kernel is specialised or traced (language.md, isa.md,
# collectives.md: they create or operate on on-chip tensors and registers, or issue instructions).
_KERNEL_ONLY_APIS = ("nki.language.", "nki.isa.", "nki.collectives.")


def _api_callers(module: ModuleInfo) -> list[FunctionInfo]:
    """Functions that call an ``nki.language``/``nki.isa``/``nki.collectives`` function (any spelling, legacy
    ``neuronxcc.nki`` included). Those calls only mean something inside a kernel, so such functions are kernel
    code even when no kernel of this module calls them -- a helper module opened on its own in the editor.

    Criterion (documented in docs/value-interpreter.md, "Kernel code"): a *call* of one of these APIs in the
    function's own body; reading attributes such as ``nl.bfloat16`` or ``nl.tile_size.pmax`` does not count
    (host code uses them to build inputs), nor do calls of ``nki.*`` itself (``nki.jit``, ``nki.simulate``)."""
    out = []
    for func in module.functions.values():
        if func.is_kernel:
            continue
        for node in module.own_by_type.get(id(func.node), {}).get(ast.Call, ()):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
                name = module.aliases.canonical(node.func)
                if name is not None and name.startswith(_KERNEL_ONLY_APIS):
                    out.append(func)
                    break
    return out


def _local_references(func: FunctionInfo) -> list[ast.Name | ast.Attribute | ast.Call]:
    """The function's own nodes that can refer to a local function or class (:func:`_resolve_ref`), in
    traversal order: each name defined or imported at its module's level (``short_names``; most names are
    locals, parameters or builtins), the attribute of it (``helpers.rms``) and the call of either. Found from
    the names the traversal kept with their parents (``name_refs``), not a pass over every own node (nested
    defs are separate FunctionInfos, reached when referenced). Each name comes after its call and attribute,
    the order of the traversal (a call's callee is its first child, an attribute's value its only one)."""
    module = func.module
    short_names = module.short_names
    call_of: dict[ast.expr, ast.Call] | None = None
    out: list[ast.Name | ast.Attribute | ast.Call] = []
    for name, parent in module.name_refs.get(id(func.node), ()):
        if name.id not in short_names:
            continue
        if type(parent) is ast.Attribute:
            if call_of is None:  # the calls by callee, only for a function with such an attribute
                calls = cast("list[ast.Call]", module.own_by_type[id(func.node)].get(ast.Call, []))
                call_of = {c.func: c for c in calls}  # nodes hash by identity
            call = call_of.get(parent)
            if call is not None:
                out.append(call)
            out.append(parent)
        elif type(parent) is ast.Call and parent.func is name:
            out.append(parent)
        out.append(name)
    return out


def _resolve_ref(
    func: FunctionInfo, expr: ast.expr, resolver: ModuleResolver
) -> FunctionInfo | tuple[ModuleInfo, ast.ClassDef] | None:
    """The function or class a Name/Attribute in ``func`` refers to, when it is defined locally."""
    module = func.module
    if isinstance(expr, ast.Name):
        if expr.id not in module.short_names or not isinstance(expr.ctx, ast.Load):
            return None  # most names are locals, builtins or parameters: nothing to resolve
        name = expr.id
        # Nested defs of enclosing functions first (closest scope wins), then module level.
        scope: FunctionInfo | None = func
        while scope is not None:
            nested = module.functions.get(f"{scope.qualname}.{name}")
            if nested is not None and nested is not func:
                return nested
            scope = scope.parent
        if name in module.functions:
            return module.functions[name]
        if name in module.classes:
            return (module, module.classes[name])
        if name in module.import_index:
            found = resolver.imported_symbol(module, name)
            if isinstance(found, tuple):
                mod, sym = found
                if sym in mod.functions:
                    return mod.functions[sym]
                return (mod, mod.classes[sym])
        return None
    # ``helpers.rms(x)`` where ``helpers`` is a local module
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        owner = expr.value.id
        if owner in module.classes:
            return module.functions.get(f"{owner}.{expr.attr}")
        if owner in module.import_index:
            target = module.aliases.bindings.get(owner, "")
            if target and is_external(target):
                return None
            found = resolver.imported_symbol(module, owner)
            if isinstance(found, ModuleInfo):
                if expr.attr in found.functions:
                    return found.functions[expr.attr]
                if expr.attr in found.classes:
                    return (found, found.classes[expr.attr])
    return None
