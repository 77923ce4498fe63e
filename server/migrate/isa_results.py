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
}
_PSUM = frozenset({"nc_matmul", "nc_transpose"})


def run(src: Source) -> PassResult:
    """Rewrite each ``name = nisa.<instruction>(...)`` statement whose result can be allocated from its operands."""
    out = PassResult()
    nl = src.alias_of(LANGUAGE, "nl")
    dtypes = _allocated_dtypes(src)
    for node in ast.walk(src.tree):
        new = _rewrite(src, node, nl, dtypes) if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if new is not None:
            assert isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call)
            leaf = (src.canonical(node.value.func) or "").rpartition(".")[2]
            out.change(src.replace(node, new), node.lineno, f"nisa.{leaf} value", "allocation + dst= call")
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The value-returning calls of ``src`` this pass rewrites (``manual.py`` lists the others)."""
    dtypes = _allocated_dtypes(src)
    return {
        id(node.value)
        for node in ast.walk(src.tree)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _rewrite(src, node, "nl", dtypes) is not None
    }


def _allocated_dtypes(src: Source) -> dict[int, str]:
    """For each ``t[...] = ...`` statement (by ``id``) whose ``t`` its function always allocates with the same
    ``dtype=``: that dtype's text."""
    out: dict[int, str] = {}
    for func in functions(src.tree):  # outer functions first: an inner one's own names win
        seen: dict[str, set[str]] = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                dtype = next((k.value for k in node.value.keywords if k.arg == "dtype"), None)
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        seen.setdefault(target.id, set()).add(src.text_of(dtype) if dtype is not None else "")
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
                base = node.targets[0].value
                texts = seen.get(base.id, set()) if isinstance(base, ast.Name) else set()
                if len(texts) == 1 and "" not in texts:
                    out[id(node)] = next(iter(texts))
    return out


def _rewrite(src: Source, node: ast.Assign | ast.AnnAssign, nl: str, dtypes: dict[int, str]) -> str | None:
    """The allocation and ``dst=`` call replacing ``node``, or None when it is not such a statement."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not (
        len(targets) == 1
        and isinstance(targets[0], (ast.Name, ast.Subscript))
        and isinstance(node.value, ast.Call)
    ):
        return None
    call, target = node.value, src.text_of(targets[0])
    module, _, leaf = (src.canonical(call.func) or "").rpartition(".")
    if module != ISA or leaf not in _SIGNATURES or src.delete_lines(node) is None:
        return None
    params, shaped = _SIGNATURES[leaf]
    if len(call.args) > len(params) or any(k.arg in (None, "dst") for k in call.keywords):
        return None
    # a mask= left here is the mask pass's to rewrite or list
    args = {**dict(zip(params, call.args, strict=False)), **{str(k.arg): k.value for k in call.keywords}}
    dtype = args.pop("dtype", None)
    keywords = ", ".join(f"{k}={src.text_of(v)}" for k, v in args.items())
    if isinstance(targets[0], ast.Subscript):
        # ``t[...] = nisa.op(...)`` wrote into (and cast to) the existing tile: it is the destination itself; a
        # ``dtype=`` is then only the same cast when it is the tile's own, as allocated or ``t.dtype`` (else the
        # result was rounded twice)
        base = targets[0].value
        own = {dtypes.get(id(node)), f"{base.id}.dtype" if isinstance(base, ast.Name) else None} - {None}
        same = dtype is None or src.text_of(dtype) in own
        return f"{src.text_of(call.func)}(dst={target}, {keywords})" if same else None
    operands = [args.get(shaped), args.get("moving")] if leaf == "nc_matmul" else [args.get(shaped)]
    if any(o is None or not _cheap(o) for o in operands):
        return None
    texts = [src.text_of(o) for o in operands if o is not None]
    if leaf == "tensor_reduce":
        shape = _reduced_shape(texts[0], args.get("axis"), args.get("keepdims"))
        if shape is None:
            return None
        texts.append(shape)
    allocation = _allocation(leaf, texts, src.text_of(dtype) if dtype is not None else None, nl)
    declared = target if isinstance(node, ast.Assign) else f"{target}: {src.text_of(node.annotation)}"
    return f"{declared} = {allocation}; {src.text_of(call.func)}(dst={target}, {keywords})"


def _cheap(node: ast.expr) -> bool:
    """A name or a subscript of one (its ``.shape`` can be read again without side effects)."""
    return isinstance(node, ast.Name) or (isinstance(node, ast.Subscript) and _cheap(node.value))


def _reduced_shape(data: str, axis: ast.expr | None, keepdims: ast.expr | None) -> str | None:
    """The shape expression of ``tensor_reduce(data, axis, keepdims)``'s result, or None when the axes or
    ``keepdims`` are not literal (or not contiguous free axes)."""
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


def _allocation(leaf: str, operands: list[str], dtype: str | None, nl: str) -> str:
    first = operands[0]
    if leaf == "nc_matmul":
        shape = f"({first}.shape[1], {operands[1]}.shape[1])"
        return f"{nl}.ndarray({shape}, dtype={dtype or f'{nl}.float32'}, buffer={nl}.psum)"
    if leaf == "nc_transpose":
        shape = f"({first}.shape[1], {first}.shape[0])"
        return f"{nl}.ndarray({shape}, dtype={dtype or f'{first}.dtype'}, buffer={nl}.psum)"
    shape = operands[1] if leaf == "tensor_reduce" else f"{first}.shape"
    return f"{nl}.ndarray({shape}, dtype={dtype or f'{first}.dtype'}, buffer={nl}.sbuf)"
