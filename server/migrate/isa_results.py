"""Value-returning ISA calls -> an allocation plus the ``dst=`` call (deprecations.md: "destination-passing:
``nisa.tensor_copy(dst=x, src=src)``; allocate ``x`` with ``nl.ndarray``"; signatures isa.md §1-3).

``x = nisa.tensor_copy(t)`` becomes ``x = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)`` and
``nisa.tensor_copy(dst=x, src=t)`` on the same line (``;``-joined, so line numbers stay); ``t2[...] =
nisa.tensor_copy(t)`` (written into an existing tile) becomes ``nisa.tensor_copy(dst=t2[...], src=t)``. The result's shape is
read from the operand at run time (``t.shape``), so it need not be known statically; the operand must then be a
name or a subscript of one (evaluated twice). Result rules: element-wise instructions give their data operand's
shape and dtype (or the legacy ``dtype=``) in SBUF; ``nc_matmul`` gives ``(stationary free, moving free)`` FP32 in
PSUM (isa.md §1.1), ``nc_transpose`` the transposed shape in PSUM (§1.3, Tensor engine), ``tensor_reduce`` keeps
the partition dim and the free dims before the reduced ones, which are dropped or, with ``keepdims=True``, kept
with size 1 [v2.26.1 nki.isa.tensor_reduce], in the data's dtype (or ``dtype=``) in SBUF; a result left with the
partition dim only is ``(P, 1)`` (the legacy simulator's rule, inferred: on-chip tiles keep two dims). Its axes
must be literal, contiguous and non-negative (0.7 requires them to end at the last dim, isa.md §3.4). The legacy default
dtypes of the element-wise instructions are inferred (the data operand's), not documented: the proof checks.
Other value-returning calls (other instructions, operands that are expressions) stay manual steps (``manual.py``).
"""

from __future__ import annotations

import ast
import collections
import itertools
from collections.abc import Callable

from nki_studio.migrate import block_dims
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions

# instruction -> its legacy positional parameters (the 0.7 names, after ``dst``) and the operand giving the shape
_SIGNATURES: dict[str, tuple[tuple[str, ...], str]] = {
    "tensor_copy": (("src",), "src"),
    "reciprocal": (("data",), "data"),
    "activation": (("op", "data", "bias", "scale"), "data"),
    "tensor_tensor": (("data1", "data2", "op"), "data1"),
    "tensor_scalar": (("data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1"), "data"),
    "nc_matmul": (("stationary", "moving"), "stationary"),
    "nc_transpose": (("data",), "data"),
    "tensor_reduce": (("op", "data", "axis"), "data"),
    "activation_reduce": (("op", "data", "reduce_op", "reduce_res", "bias", "scale"), "data"),
    "tensor_scalar_reduce": (("data", "op0", "operand0", "reduce_op", "reduce_res", "reverse0"), "data"),
    "scalar_tensor_tensor": (("data", "op0", "operand0", "op1", "operand1", "reverse0", "reverse1"), "data"),
    "tensor_tensor_scan": (("data0", "data1", "initial", "op0", "op1", "reverse0", "reverse1"), "data0"),
    "tensor_partition_reduce": (("op", "data"), "data"),
    "bn_stats": (("data",), "data"),
    "bn_aggr": (("data",), "data"),
    "dma_transpose": (("src", "axes", "priority", "dge_mode", "oob_mode"), "src"),
    "memset": (("shape", "value", "dtype"), "shape"),
    "iota": ((), "shape"),  # in the 0.7 operands and the shape= affine_values gave it
    # in the 0.7 operands affine_values gave it (the legacy pred is its own pass's)
    "affine_select": (
        ("pattern", "channel_multiplier", "on_true_tile", "on_false_value", "cmp_op", "offset"),
        "on_true_tile",
    ),  # its shape operand is the result's shape
}
_PSUM = frozenset({"nc_matmul", "nc_transpose"})
# instructions whose result in the data's own dtype holds the data's values exactly (written into a tile of another
# dtype, it is rounded once either way)
_MOVES = frozenset({"tensor_copy", "dma_transpose"})


def run(src: Source) -> PassResult:
    """Rewrite each ``name = nisa.<instruction>(...)`` statement whose result can be allocated from its operands."""
    out = PassResult()
    nl = src.alias_of(LANGUAGE, "nl")
    dtypes = _allocated_dtypes(src)
    for node in ast.walk(src.tree):
        new = (
            _rewrite(src, node, nl, dtypes, set()) if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        )
        if new is not None:
            assert isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call)
            leaf = (src.canonical(node.value.func) or "").rpartition(".")[2]
            out.change(src.replace(node, new), node.lineno, f"nisa.{leaf} value", "allocation + dst= call")
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The value-returning calls of ``src`` this pass rewrites (``manual.py`` lists the others)."""
    dtypes, folded = _allocated_dtypes(src), block_dims.rewritten_markers(src)
    return {
        id(node.value)
        for node in ast.walk(src.tree)
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and _rewrite(src, node, "nl", dtypes, folded) is not None
    }


def _allocated_dtypes(src: Source) -> dict[int, set[str]]:
    """For each ``t[...] = ...`` statement (by ``id``): the texts naming ``t``'s dtype there: the ``dtype=`` its
    function always allocates ``t`` with (or that of the allocation reaching the statement), and the names the
    function binds once to that text or to ``t.dtype`` (``mixed_dtype = dy_o_sum.dtype``, nki-samples'
    compute_rowsum)."""
    out: dict[int, set[str]] = {}
    for func in functions(src.tree):  # outer functions first: an inner one's own names win
        seen: dict[str, set[str]] = {}
        stores = collections.Counter(
            n.id for n in ast.walk(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        )
        once: dict[str, str] = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                dtype = next((k.value for k in node.value.keywords if k.arg == "dtype"), None)
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        seen.setdefault(target.id, set()).add(src.text_of(dtype) if dtype is not None else "")
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and stores[node.targets[0].id] == 1
            ):
                once[node.targets[0].id] = src.text_of(node.value)
        parents = {id(c): n for n in ast.walk(func) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(func):
            if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript)):
                continue
            base = node.targets[0].value
            if not isinstance(base, ast.Name):
                continue
            allocated = seen.get(base.id, set())
            if len(allocated) == 1 and "" not in allocated:
                out[id(node)] = {f"{base.id}.dtype", *allocated}
            elif (reaching := _reaching(node, base.id, parents)) is not None:
                out[id(node)] = {f"{base.id}.dtype", src.text_of(reaching)}
            else:  # an enclosing function's allocation (a closure) stays what this one found
                out.setdefault(id(node), {f"{base.id}.dtype"})
            out[id(node)] |= {name for name, value in once.items() if value in out[id(node)]}
    return out


def _reaching(node: ast.stmt, name: str, parents: dict[int, ast.AST]) -> ast.expr | None:
    """The ``dtype=`` of the one assignment to ``name`` that reaches ``node`` when it is the nearest one before it
    in its own or an enclosing block (``name = call(..., dtype=D)``, the name rebound elsewhere in the function:
    the nki-samples attention tutorial reuses ``scores_buf``), and no loop between them assigns ``name`` (a later
    iteration would see that); None otherwise (branches and ``try`` are not followed)."""
    child: ast.AST = node
    loops: list[ast.AST] = []
    while not isinstance(
        parent := parents.get(id(child)), (ast.FunctionDef, ast.AsyncFunctionDef, type(None))
    ):
        if hasattr(parent, "handlers"):  # try (and try*): which statements ran is not known
            return None
        block = next(
            (
                b
                for b in (getattr(parent, f, None) for f in ("body", "orelse"))
                if isinstance(b, list) and any(s is child for s in b)
            ),
            None,
        )
        if block is not None:
            for before in reversed(block[: next(i for i, s in enumerate(block) if s is child)]):
                if not _assigns(before, name):
                    continue
                dtype = (
                    next((k.value for k in before.value.keywords if k.arg == "dtype"), None)
                    if isinstance(before, ast.Assign)
                    and isinstance(before.value, ast.Call)
                    and len(before.targets) == 1
                    and isinstance(before.targets[0], ast.Name)
                    else None
                )
                return None if dtype is None or any(_assigns(loop, name) for loop in loops) else dtype
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)):
            loops.append(parent)
        child = parent
    return None


def _assigns(node: ast.AST, name: str) -> bool:
    """``node`` binds ``name`` somewhere."""
    return any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(node)
    )


def _rewrite(
    src: Source, node: ast.Assign | ast.AnnAssign, nl: str, dtypes: dict[int, set[str]], folded: set[int]
) -> str | None:
    """The allocation and ``dst=`` call replacing ``node``, or None when it is not such a statement (``folded``: the
    ``nl.par_dim`` markers the block-dim pass rewrites before this one runs)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not (
        len(targets) == 1
        and isinstance(targets[0], (ast.Name, ast.Subscript))
        and isinstance(node.value, ast.Call)
    ):
        return None
    call, target = node.value, src.text_of(targets[0])
    parsed = _parsed(src, call)
    if parsed is None or src.delete_lines(node) is None:
        return None
    leaf, args, dtype = parsed
    if isinstance(targets[0], ast.Subscript):
        # ``t[...] = nisa.op(...)`` wrote into (and cast to) the existing tile: it is the destination itself; a
        # ``dtype=`` is then only the same cast when it is the tile's own, as allocated or ``t.dtype`` (else the
        # result was rounded twice)
        same = (
            leaf in _PSUM | _MOVES or _same_as_data(src, node, targets[0], args.get(_SIGNATURES[leaf][1]))
            if dtype is None
            else src.text_of(dtype) in dtypes.get(id(node), set())
        )
        if not same or (leaf == "nc_transpose" and "engine" not in args):
            return _through_result(src, call, (leaf, args, dtype), target, nl)
        # the written tile gives the shape: a shape= operand (memset's) goes
        kept = {k: v for k, v in args.items() if not (k == "shape" and _SIGNATURES[leaf][1] == "shape")}
        keywords = ", ".join(f"{k}={src.text_of(v)}" for k, v in kept.items())
        return f"{src.text_of(call.func)}(dst={target}, {keywords})"
    declared = target if isinstance(node, ast.Assign) else f"{target}: {src.text_of(node.annotation)}"
    if any(isinstance(n, ast.Name) and n.id == target for n in ast.walk(call)):
        # ``y = nisa.activation(op, data=y)``: allocating ``y`` first would rebind it before the call reads it (the
        # instruction would read the new, uninitialised tile): the result gets a fresh name, then ``y`` is bound to it
        name = fresh_name(src, leaf)
        made = _allocated(src, call, (leaf, args, dtype), name, name, nl, folded)
        return None if made is None else f"{made}; {declared} = {name}"
    return _allocated(src, call, (leaf, args, dtype), target, declared, nl, folded)


def _same_as_data(src: Source, node: ast.stmt, target: ast.Subscript, data: ast.expr | None) -> bool:
    """Whether ``t[...] = nisa.op(data=x[...])`` (no ``dtype=``: the legacy result had the data's dtype) may write
    ``t`` directly: false when ``t`` and ``x`` are different tensors one of which is a parameter of the function,
    whose dtype is not known here. The legacy result was rounded to ``x``'s dtype, then the assignment cast it to
    ``t``'s (a bfloat16 tile quantized into a float8 one, nki-samples' rmsnorm_quant: two roundings, which the
    legacy simulator follows); written directly, it would be rounded once, which can differ by one unit in the
    last place. Tiles of the function itself are left as they were (inferred: their dtypes are those the kernel
    chose for the assignment; the proof checks). PSUM instructions are not asked: their result has a dtype of its
    own (FP32), not the data's."""
    func = next((f for f in functions(src.tree) if any(n is node for n in ast.walk(f))), None)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or data is None:
        return True
    bases = [_base(target), _base(data)]
    if None in bases or bases[0] == bases[1]:
        return True
    parameters = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    return not any(b in parameters for b in bases)


def _base(node: ast.expr) -> str | None:
    """The name a subscript (or a name) reads."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _through_result(src: Source, call: ast.Call, parsed: _Parsed, target: str, nl: str) -> str | None:
    """``t[...] = nisa.op(...)`` computed into a result of its own, then copied into ``t`` (the copy under the
    call's own ``mask=``, which the mask pass turns into the same condition).

    A ``dtype=`` other than ``t``'s rounded the legacy result to it before the assignment cast it to ``t``'s (the
    nki-samples flash-attention backward selects into a ``kernel_dtype`` tile with ``dtype=mixed_dtype``): the own
    result has that dtype, and the copy casts it as the assignment did. ``nc_transpose``: the legacy engine left
    unknown put a tile over 32x32 on the Tensor engine, into PSUM, and the assignment copied it [v2.26.1
    nki.isa.nc_transpose]; 0.7 would pick the engine from the destination, and an SBUF ``t`` means the Vector
    engine, limited to 32x32 (isa.md §1.3). A transpose moves values exactly either way."""
    isa = src.alias_of(ISA, "")
    name = fresh_name(src, parsed[0])
    made = _allocated(src, call, parsed, name, name, nl, set())
    mask = next((f", mask={src.text_of(k.value)}" for k in call.keywords if k.arg == "mask"), "")
    return f"{made}; {isa}.tensor_copy(dst={target}, src={name}{mask})" if made is not None and isa else None


def fresh_name(src: Source, leaf: str) -> str:
    """``<instruction>_value`` (numbered when taken): a name for a result the rewrite makes, used by nothing in the
    file."""
    taken = {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name)}
    taken |= {a.arg for a in ast.walk(src.tree) if isinstance(a, ast.arg)}
    return next(n for n in (f"{leaf}_value{i or ''}" for i in itertools.count()) if n not in taken)


def allocated(src: Source, call: ast.Call, name: str, nl: str) -> str | None:
    """``name = <allocation>; nisa.op(dst=name, ...)`` making the value of ``call`` (a value-returning ISA call),
    or None when its result cannot be allocated from its operands."""
    parsed = _parsed(src, call)
    return None if parsed is None else _allocated(src, call, parsed, name, name, nl, set())


_Parsed = tuple[str, dict[str, ast.expr], ast.expr | None]  # instruction, 0.7 operands by name, legacy dtype=


def _parsed(src: Source, call: ast.Call) -> _Parsed | None:
    """A value-returning call of an instruction this pass knows, its operands named as in 0.7."""
    module, _, leaf = (src.canonical(call.func) or "").rpartition(".")
    if module != ISA or leaf not in _SIGNATURES:
        return None
    params, _ = _SIGNATURES[leaf]
    if len(call.args) > len(params) or any(k.arg in (None, "dst") for k in call.keywords):
        return None
    if leaf in ("affine_select", "iota") and (
        call.args or any(k.arg in ("pred", "expr") for k in call.keywords)
    ):
        return None  # the legacy index-tile form: affine_values did not rewrite it
    # a mask= left here is the mask pass's to rewrite or list
    args = {**dict(zip(params, call.args, strict=False)), **{str(k.arg): k.value for k in call.keywords}}
    return leaf, args, args.pop("dtype", None)


def _allocated(
    src: Source, call: ast.Call, parsed: _Parsed, target: str, declared: str, nl: str, folded: set[int]
) -> str | None:
    """The allocation of ``target`` (``declared``: with its annotation) and the ``dst=`` call, or None."""
    leaf, args, dtype = parsed
    shaped = _SIGNATURES[leaf][1]
    args = dict(args)
    shape_of_result = args.pop("shape", None) if shaped == "shape" else None
    before, texts_of = "", {id(v): src.text_of(v) for v in args.values()}
    operand = args.get(shaped)
    if shaped != "shape" and leaf != "nc_matmul" and operand is not None and not cheap(operand):
        if not _pure(args, operand):
            return None
        # an expression giving the shape (``tensor_reduce(np.add, nl.multiply(a, b), ...)``, nki-samples'
        # flash-attention backward) is bound to a name first, so that it is evaluated once; the other operands
        # have no effects, so evaluating it before them changes nothing
        bound = fresh_name(src, shaped)
        before = f"{bound} = {texts_of[id(operand)]}; "
        args[shaped] = ast.Name(bound, ast.Load())
        texts_of[id(args[shaped])] = bound
    keywords = ", ".join(f"{k}={texts_of[id(v)]}" for k, v in args.items())
    if shaped == "shape":
        shape = _shape_operand(src, shape_of_result, folded)
        if shape is None or dtype is None:
            return None
        texts = ["", shape]
    else:
        operands = [args.get(shaped), args.get("moving")] if leaf == "nc_matmul" else [args.get(shaped)]
        if any(o is None or not cheap(o) for o in operands):
            return None
        texts = [texts_of[id(o)] for o in operands if o is not None]
    if leaf in _SHAPED:
        shape = _SHAPED[leaf](texts[0], args)
        if shape is None:
            return None
        texts.append(shape)
    allocation = _allocation(leaf, texts, src.text_of(dtype) if dtype is not None else None, nl)
    return f"{before}{declared} = {allocation}; {src.text_of(call.func)}(dst={target}, {keywords})"


def _pure(args: dict[str, ast.expr], operand: ast.expr) -> bool:
    """Every operand but ``operand`` is free of calls (names, constants, attributes, subscripts, tuples)."""
    return not any(isinstance(n, ast.Call) for v in args.values() if v is not operand for n in ast.walk(v))


def cheap(node: ast.expr) -> bool:
    """A name or a subscript of one (its ``.shape`` can be read again without side effects)."""
    return isinstance(node, ast.Name) or (isinstance(node, ast.Subscript) and cheap(node.value))


def _shape_operand(src: Source, shape: ast.expr | None, folded: set[int]) -> str | None:
    """The text of a ``shape=`` operand (legacy ``memset``; ``iota`` as affine_values left it) for ``nl.ndarray``;
    None while an ``nl.par_dim`` the block-dim pass
    (which runs first) does not fold marks a dim (``folded``: those it does, by ``id``)."""
    if shape is None:
        return None
    markers = [
        n
        for n in ast.walk(shape)
        if isinstance(n, ast.Call) and src.canonical(n.func) == f"{LANGUAGE}.par_dim"
    ]
    return src.text_of(shape) if all(id(m) in folded for m in markers) else None


def _reduced_shape(data: str, args: dict[str, ast.expr]) -> str | None:
    """The shape expression of ``tensor_reduce(data, axis, keepdims)``'s result, or None when the axes or
    ``keepdims`` are not literal (or not contiguous free axes)."""
    axis, keepdims = args.get("axis"), args.get("keepdims")
    items = axis.elts if isinstance(axis, (ast.Tuple, ast.List)) else [axis]
    axes = sorted(a.value for a in items if isinstance(a, ast.Constant) and type(a.value) is int)
    if len(axes) != len(items) or not axes or axes[0] < 1 or axes != list(range(axes[0], axes[-1] + 1)):
        return None
    keep = False
    if keepdims is not None:
        if not (isinstance(keepdims, ast.Constant) and isinstance(keepdims.value, bool)):
            return None
        keep = keepdims.value
    kept = [f"{data}.shape[{d}]" for d in range(axes[0])]
    if keep:
        kept += ["1"] * len(axes)
    elif len(kept) < 2:
        kept.append("1")
    return f"({', '.join(kept)})"


def _partition_reduced_shape(data: str, _: dict[str, ast.expr]) -> str:
    """``tensor_partition_reduce``: one partition, the data's free dims (isa.md §4.3; the legacy simulator's rule)."""
    return f"(1, *{data}.shape[1:])"


def _transposed_shape(src: str, args: dict[str, ast.expr]) -> str | None:
    """``dma_transpose``: the source dims in ``axes`` order; without ``axes`` the legacy default reverses them (the
    legacy simulator's rule, inferred; the same as 0.7's default up to rank 3, isa.md §5.2). None for axes that
    are not a literal tuple of ints."""
    axes = args.get("axes")
    if axes is None:
        return f"tuple(reversed({src}.shape))"
    items = axes.elts if isinstance(axes, (ast.Tuple, ast.List)) else []
    order = [a.value for a in items if isinstance(a, ast.Constant) and type(a.value) is int]
    if not items or len(order) != len(items):
        return None
    return f"({', '.join(f'{src}.shape[{d}]' for d in order)})"


def _statistics_shape(count: int) -> Callable[[str, dict[str, ast.expr]], str]:
    """``bn_stats`` / ``bn_aggr``: ``count`` values per partition (6 statistics, or mean and variance; isa.md
    §3.12-3.13, v2.26.1 nki.isa.bn_stats / bn_aggr)."""
    return lambda data, _: f"({data}.shape[0], {count})"


# instruction -> the result's shape expression from its shape operand's text and the call's arguments
_SHAPED: dict[str, Callable[[str, dict[str, ast.expr]], str | None]] = {
    "tensor_reduce": _reduced_shape,
    "tensor_partition_reduce": _partition_reduced_shape,
    "dma_transpose": _transposed_shape,
    "bn_stats": _statistics_shape(6),
    "bn_aggr": _statistics_shape(2),
}


def _allocation(leaf: str, operands: list[str], dtype: str | None, nl: str) -> str:
    first = operands[0]
    if leaf == "nc_matmul":
        shape = f"({first}.shape[1], {operands[1]}.shape[1])"
        return f"{nl}.ndarray({shape}, dtype={dtype or f'{nl}.float32'}, buffer={nl}.psum)"
    if leaf == "nc_transpose":
        shape = f"({first}.shape[1], {first}.shape[0])"
        return f"{nl}.ndarray({shape}, dtype={dtype or f'{first}.dtype'}, buffer={nl}.psum)"
    shape = operands[1] if len(operands) > 1 else f"{first}.shape"
    return f"{nl}.ndarray({shape}, dtype={dtype or f'{first}.dtype'}, buffer={nl}.sbuf)"
