"""Legacy tile operators -> ``nl.*`` calls (deprecations.md §E: "``c = a + b`` operator overloading on tiles ->
``nl.add(a, b)``").

A tile is what an ``nl``/``nisa`` call returns (index and launch helpers excepted), a name bound to one, a
subscript of one, or an operator on one; names are followed in source order within each function, so
``c = a + b`` makes ``c`` a tile; so is a parameter of a function of the file that every call of it in the file
passes a tile (nki-samples' rotary ``_nki_apply_rotary_embedding_core(q_tile, ...)``, called with loaded tiles,
multiplies its parameters). ``acc += x`` on a tile updated it in place in the legacy API; it becomes
``nisa.tensor_tensor(dst=acc, data1=acc, data2=x, op=nl.add)`` (the in-place form deprecations.md gives for
``nl.loop_reduce``), so other names of the same tile see the update too. The legacy tile method
``tile.broadcast_to(shape)`` becomes ``nl.broadcast_to(tile, shape)``.
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions

# nl functions returning something other than a tile (index tiles, launch queries, iterators, slices).
_NOT_TILES = frozenset(
    {
        "arange", "mgrid", "program_id", "num_programs", "program_ndim", "ds", "par_dim", "affine_range",
        "sequential_range", "static_range", "dynamic_range", "spmd_dim", "nc", "tile_size", "fp32",
        "device_print", "get_nc_version",
    }
)  # fmt: skip
_BINARY = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "divide",
    ast.Pow: "power",
}
_COMPARE = {ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater", ast.GtE: "greater_equal"}


class Tiles:
    """Which expressions of one function are tiles."""

    def __init__(self, src: Source, func: ast.AST, parameters: frozenset[str] = frozenset()) -> None:
        self.src = src
        self.names: set[str] = set(parameters)  # the parameters known to receive tiles
        changed = True  # a fixpoint: a name may be bound from a tile bound later in ast.walk's order
        while changed:
            changed = False
            for node in ast.walk(func):
                if isinstance(node, ast.Assign) and self.is_tile(node.value):
                    for target in node.targets:
                        if isinstance(target, ast.Name) and target.id not in self.names:
                            self.names.add(target.id)
                            changed = True

    def is_tile(self, node: ast.expr) -> bool:
        """Whether ``node`` evaluates to a tile."""
        if isinstance(node, ast.Name):
            return node.id in self.names
        if isinstance(node, ast.Call):
            name = self.src.canonical(node.func)
            if name is None:
                return False
            module, _, leaf = name.rpartition(".")
            return (module == ISA or module == LANGUAGE) and leaf not in _NOT_TILES
        if isinstance(node, ast.Subscript):
            return self.is_tile(node.value)
        return self.is_operator(node)

    def is_operator(self, node: ast.AST) -> bool:
        """A tile operator: a binary operator, a single comparison or a negation with a tile operand."""
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self.is_tile(node.left) or self.is_tile(node.right)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            return self.is_tile(node.left) or self.is_tile(node.comparators[0])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.is_tile(node.operand)
        return False


class _Renderer:
    def __init__(self, src: Source, tiles: Tiles, nl: str) -> None:
        self.src, self.tiles, self.nl = src, tiles, nl

    def outermost(self, node: ast.AST) -> list[ast.AST]:
        """The tile operators under ``node`` (itself excluded) not nested in another one."""
        found: list[ast.AST] = []
        for child in ast.iter_child_nodes(node):
            if self.tiles.is_operator(child):
                found.append(child)
            else:
                found.extend(self.outermost(child))
        return found

    def splice(self, node: ast.AST) -> str:
        """The text of ``node`` with every tile operator in it rewritten."""
        if self.tiles.is_operator(node):
            return self.call(node)
        start, end = self.src.bounds(node)
        out, at = [], start
        for inner in sorted(self.outermost(node), key=lambda n: self.src.bounds(n)[0]):
            a, b = self.src.bounds(inner)
            out += [self.src.text[at:a], self.call(inner)]
            at = b
        out.append(self.src.text[at:end])
        return "".join(out)

    def call(self, node: ast.AST) -> str:
        if isinstance(node, ast.BinOp):
            fn, operands = _BINARY[type(node.op)], [node.left, node.right]
        elif isinstance(node, ast.Compare):
            fn, operands = _COMPARE[type(node.ops[0])], [node.left, node.comparators[0]]
        else:
            assert isinstance(node, ast.UnaryOp)
            fn, operands = "negative", [node.operand]
        return f"{self.nl}.{fn}({', '.join(self.splice(o) for o in operands)})"


def run(src: Source) -> PassResult:
    """Rewrite every tile operator of every function."""
    out = PassResult()
    nl = src.alias_of(LANGUAGE, "nl")
    parameters = tile_parameters(src)
    for func in functions(src.tree):
        # a nested function is analysed on its own: the outer one skips its nodes, which would overlap
        nested = {
            id(d)
            for n in ast.walk(func)
            if n is not func and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            for d in ast.walk(n)
        }
        tiles = Tiles(src, func, parameters.get(id(func), frozenset()))
        render = _Renderer(src, tiles, nl)
        for node in _own_nodes(func, nested):
            if isinstance(node, ast.AugAssign) and tiles.is_tile(node.target):
                _augmented(src, out, render, node, nl)
        augmented = [
            n for n in _own_nodes(func, nested) if isinstance(n, ast.AugAssign) and tiles.is_tile(n.target)
        ]
        inside = {id(d) for a in augmented for d in ast.walk(a)}
        for node in _own_nodes(func, nested):
            if _is_tile_method(tiles, node, "broadcast_to"):
                assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                args = [src.text_of(node.func.value), *(src.text_of(a) for a in [*node.args, *node.keywords])]
                new = f"{nl}.broadcast_to({', '.join(args)})"
                out.change(src.replace(node, new), node.lineno, "tile method", "nl.broadcast_to")
        for node in render.outermost(func):
            if id(node) in inside or id(node) in nested:
                continue
            out.change(src.replace(node, render.splice(node)), node.lineno, "tile operator", "nl.* call")  # type: ignore[attr-defined]
    return out


def tile_parameters(src: Source) -> dict[int, frozenset[str]]:
    """``id(function)`` -> its parameters that every call of it in the file passes a tile (by position or
    keyword), for the module's top-level functions that are called; followed to a fixpoint (a tile parameter passed
    on makes the next callee's parameter one too)."""
    tree = src.tree
    by_name = {
        f.name: f for f in getattr(tree, "body", []) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    found: dict[int, frozenset[str]] = {}
    for _ in range(len(by_name) + 1):  # each round can only add parameters; a chain is at most this long
        given: dict[
            str, set[str] | None
        ] = {}  # callee -> parameters every call so far passed a tile (None: none yet)
        for caller in by_name.values():
            tiles = Tiles(src, caller, found.get(id(caller), frozenset()))
            for call in ast.walk(caller):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                    continue
                callee = by_name.get(call.func.id)
                if callee is None or callee is caller:
                    continue
                names = [a.arg for a in callee.args.args]
                passed = {names[i] for i, a in enumerate(call.args[: len(names)]) if tiles.is_tile(a)}
                passed |= {k.arg for k in call.keywords if k.arg and tiles.is_tile(k.value)}
                before = given.get(callee.name)
                given[callee.name] = passed if before is None else before & passed
        now = {id(by_name[n]): frozenset(p) for n, p in given.items() if p}
        if now == found:
            break
        found = now
    return found


def _own_nodes(func: ast.AST, nested: set[int]) -> list[ast.AST]:
    """The nodes of ``func`` outside the functions nested in it (``nested``: their nodes' ids)."""
    return [n for n in ast.walk(func) if id(n) not in nested]


def _is_tile_method(tiles: Tiles, node: ast.AST, name: str) -> bool:
    """``tile.<name>(...)`` (legacy tile methods; ``sim.legacy_hooks`` lists them)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and tiles.is_tile(node.func.value)
    )


def _augmented(src: Source, out: PassResult, render: _Renderer, node: ast.AugAssign, nl: str) -> None:
    op = _BINARY.get(type(node.op))
    if op is None or op == "power":
        out.manual.append(
            ManualStep(
                node.lineno, "tile operator", f"`{src.text_of(node)}`: write the result with nl.* calls"
            )
        )
        return
    target = src.text_of(node.target)
    nisa = src.alias_of(ISA, "nisa")
    new = (
        f"{nisa}.tensor_tensor(dst={target}, data1={target}, data2={render.splice(node.value)}, op={nl}.{op})"
    )
    out.change(
        src.replace(node, new), node.lineno, "tile operator", f"in-place {op}: nisa.tensor_tensor(dst=...)"
    )
