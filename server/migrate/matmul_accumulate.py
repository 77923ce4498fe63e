"""Matrix products accumulated into PSUM -> ``nisa.nc_matmul(dst=..., accumulate=True)``.

``psum[...] += nl.matmul(a, b, transpose_x=True)`` and ``psum[...] += nisa.nc_matmul(a, b)`` added a new FP32 PSUM
product tile into ``psum`` (legacy: "accumulation and results are always in float32" [v2.26.1 nki.isa.nc_matmul];
``nl.matmul(x, y, transpose_x=True)`` is ``x.T @ y`` with ``x`` as the stationary operand [v2.26.1
nki.language.matmul]). In 0.7 the product goes straight into the accumulator: ``nisa.nc_matmul(dst=psum[...],
stationary=a, moving=b, accumulate=True)`` adds into the existing PSUM content (isa.md §1.1: ``dst (=|+=)
stationary.T @ moving``, ``accumulate=True`` adds). ``+=`` adds whatever ``psum`` holds, so ``True`` is its
meaning on an accumulator ``nl.zeros`` initialised; the 0.7 simulator warns when that content was not written by a
matmul, which hardware leaves undefined (isa.md §1.1) -- the proof runs the simulator, so it shows that warning.
On an accumulator allocated without values (``nl.ndarray``, a direct allocator) legacy ``+=`` opened a matmul
accumulation group, its first write overwriting (the legacy simulator's model, ``sim.legacy.operators``; nki-samples'
fused RMSNorm-QKV relies on it): there the call keeps 0.7's default ``accumulate=None``, which the compiler infers
the same way (first write to a PSUM location overwrites, later ones add; isa.md §1.1), where ``True`` would add to
never-written PSUM.

Only an accumulator the function allocates in PSUM (``buffer=nl.psum`` or a ``psum`` allocator), or a parameter
every call in the file passes one of its caller's such allocations by name, qualifies: an
SBUF ``+=`` stays the operators pass's ``nisa.tensor_tensor``. ``nl.matmul`` without ``transpose_x=True``
(its stationary operand needs a transpose first) is left to it too. A ``mask=`` is kept for the mask pass to
rewrite or list (as ``isa_results`` does).
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions

_MATMUL = f"{LANGUAGE}.matmul"
_NC_MATMUL = f"{ISA}.nc_matmul"
_PSUM = f"{LANGUAGE}.psum"
_ZEROS = f"{LANGUAGE}.zeros"
_PSUM_ALLOCATORS = "nki.compiler.psum."  # ncc.psum.alloc / mod_alloc / auto_alloc placements
# nc_matmul keywords that keep their meaning in 0.7 (isa.md §1.1), and the legacy mask= (the mask pass's); calls
# with others (dtype=, accumulate= ...) are not rewritten here.
_KEPT = frozenset(
    {"is_stationary_onezero", "is_moving_onezero", "tile_position", "tile_size", "perf_mode", "mask"}
)


def run(src: Source) -> PassResult:
    """Rewrite each ``psum += <matrix product>`` of a PSUM accumulator."""
    out = PassResult()
    for node, new in _rewrites(src):
        detail = (
            "accumulate=True"
            if "accumulate=True" in new
            else "accumulate inferred: the first write overwrites"
        )
        out.change(src.replace(node, new), node.lineno, "matmul +=", f"nisa.nc_matmul(dst=..., {detail})")
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The product calls of ``src`` this pass rewrites (``manual.py`` lists the other value-returning ones)."""
    return {id(node.value) for node, _ in _rewrites(src)}


def _rewrites(src: Source) -> list[tuple[ast.AugAssign, str]]:
    found = []
    nisa = src.alias_of(ISA, "nisa")
    for func in functions(src.tree):
        # name -> whether nl.zeros initialised it
        psum = psum_names(src, func) | passed_accumulators(src, func)
        for node in ast.walk(func):
            if not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)):
                continue
            base: ast.expr = node.target
            while isinstance(base, ast.Subscript):
                base = base.value
            operands = _operands(src, node.value) if isinstance(node.value, ast.Call) else None
            if isinstance(base, ast.Name) and base.id in psum and operands is not None:
                target = src.text_of(node.target)
                accumulate = ", accumulate=True" if psum[base.id] else ""
                found.append((node, f"{nisa}.nc_matmul(dst={target}, {operands}{accumulate})"))
    return found


def psum_names(src: Source, func: ast.AST) -> dict[str, bool]:
    """Names the function binds to a PSUM allocation (``nl.zeros(..., buffer=nl.psum)``, ``buffer=ncc.psum...``,
    or an allocator the module names, ``psum_mod = ncc.psum.mod_alloc``), each with whether ``nl.zeros`` made it
    (its content is defined before the first product)."""
    module = {
        t.id: src.canonical(n.value)
        for n in src.tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    names: dict[str, bool] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            buffer = next((k.value for k in node.value.keywords if k.arg == "buffer"), None)
            place = buffer.func if isinstance(buffer, ast.Call) else buffer
            where = src.canonical(place) if place is not None else None
            if where is None and isinstance(place, ast.Name):
                where = module.get(place.id)
            if where is not None and (where == _PSUM or where.startswith(_PSUM_ALLOCATORS)):
                zeros = src.canonical(node.value.func) == _ZEROS
                names.update({t.id: zeros for t in node.targets if isinstance(t, ast.Name)})
    return names


def passed_accumulators(src: Source, func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, bool]:
    """The parameters of ``func`` every call of which in the file passes, by name, a PSUM allocation of the calling
    function (nki-samples' flash-attention backward core accumulates into the ``dk_psum``/``dv_psum`` its kernel
    allocated), each with whether ``nl.zeros`` made all of them."""
    positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    found: dict[str, list[bool | None]] = {}
    for caller in functions(src.tree):
        own = psum_names(src, caller)
        for call in ast.walk(caller):
            if not (
                isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == func.name
            ):
                continue
            given = {k.arg: k.value for k in call.keywords if k.arg} | dict(
                zip(positional, call.args, strict=False)
            )
            for name in [*positional, *(a.arg for a in func.args.kwonlyargs)]:
                value = given.get(name)
                found.setdefault(name, []).append(own.get(value.id) if isinstance(value, ast.Name) else None)
    return {name: all(flags) for name, flags in found.items() if None not in flags}


def _operands(src: Source, call: ast.Call) -> str | None:
    """``stationary=..., moving=...`` (and the kept keywords) of a product call, or None for another call."""
    name = src.canonical(call.func)
    keywords = {str(k.arg): k.value for k in call.keywords}
    if None in (k.arg for k in call.keywords) or len(call.args) > 2:
        return None
    if name == _MATMUL:
        transpose = keywords.pop("transpose_x", None)
        if not (isinstance(transpose, ast.Constant) and transpose.value is True):
            return None
        named = {"x": "stationary", "y": "moving", "mask": "mask"}  # nl.matmul(x, y): x.T @ y
        args = {**dict(zip(("stationary", "moving"), call.args, strict=False))}
        args.update({named[k]: v for k, v in keywords.items() if k in named})
        if set(keywords) - set(named):
            return None
    elif name == _NC_MATMUL:
        args = {**dict(zip(("stationary", "moving"), call.args, strict=False)), **keywords}
        if not set(args) - {"stationary", "moving"} <= _KEPT:
            return None
    else:
        return None
    if "stationary" not in args or "moving" not in args:
        return None
    return ", ".join(f"{k}={src.text_of(v)}" for k, v in args.items())
