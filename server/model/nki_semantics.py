"""What NKI API names and calls evaluate to in the interpreter: constants, dtypes, buffers, allocations,
views, and recorded ISA / language calls.

Sources: language.md (§1 buffers, §2 dtypes, §3 tile_size, §5 views and indexing, §6 creation, §7-§9 ops),
isa.md (§0.1 dst-first calling convention, parameter lists in ``api_signatures.py``), hardware.md §5.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from nki_studio.model.api_signatures import ISA_PARAMS, NL_CREATE_PARAMS, bind_arguments
from nki_studio.model.arithmetic import binop
from nki_studio.model.evaluator import Evaluator
from nki_studio.model.index_tiles import (
    IndexMask,
    IndexTile,
    arange,
    block_tile,
    indexed_shape,
    masked_shape,
)
from nki_studio.model.legacy_isa import LEGACY_VALUE_CALLS, legacy_result
from nki_studio.model.nki_api import (
    LANGUAGE_ACTIVATIONS,
    LANGUAGE_BINARY,
    LANGUAGE_PARAMS,
    LANGUAGE_REDUCTIONS,
    LANGUAGE_SHAPE_KEEPING,
    LANGUAGE_UNARY_MATH,
    TENSOR_VIEW_METHODS,
)
from nki_studio.model.targets import Target, tile_size_constants
from nki_studio.model.tensors import ApiCall, ViewEvent
from nki_studio.model.values import (
    BUFFERS,
    MAX_SEQ_LEN,
    ON_CHIP,
    UNKNOWN,
    Allocation,
    ApiRef,
    BufferVal,
    Const,
    DType,
    FunctionVal,
    ModuleRef,
    Seq,
    SliceVal,
    TensorVal,
    Value,
    const_int,
    make_dtype,
    merge_binds,
    same_value,
)

# The function name of the frame module globals are evaluated in (``ExpressionEvaluator.module_env``).
MODULE_FRAME = "<module>"


@dataclass(frozen=True, eq=False)
class RangeVal(Value):
    """``range(start, stop, step)`` (and ``nl.affine_range`` ...) with known or unknown bounds."""

    start: Value
    stop: Value
    step: Value

    def length(self) -> int | None:
        """Number of iterations when all bounds are known."""
        a, b, s = const_int(self.start), const_int(self.stop), const_int(self.step)
        if a is None or b is None or not s:
            return None
        return len(range(a, b, s))

    def values(self) -> list[Value] | None:
        """The loop values (with derivation ``i``) when known and not too many."""
        n = self.length()
        if n is None or n > MAX_SEQ_LEN:
            return None
        a, s = const_int(self.start), const_int(self.step)
        assert a is not None and s is not None
        return [Const(a + k * s) for k in range(n)]


class _Ellipsis(Value):
    __slots__ = ()


ELLIPSIS: Value = _Ellipsis()


def make_range(args: list[Value]) -> Value:
    """``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)``."""
    if len(args) == 1:
        return RangeVal(Const(0), args[0], Const(1))
    if len(args) == 2:
        return RangeVal(args[0], args[1], Const(1))
    if len(args) >= 3:
        return RangeVal(args[0], args[1], args[2])
    return UNKNOWN


_NC_VERSIONS = {"gen2": 2, "gen3": 3, "gen4": 4}


def resolve_qualname(qualname: str, target: Target) -> Value:
    """The value of an imported / attribute-accessed API name (``nki.language.bfloat16`` -> a DType)."""
    head, _, leaf = qualname.rpartition(".")
    if head in ("nki.language", "numpy", "ml_dtypes", "torch", "jax.numpy", "nki.language.dtype"):
        dtype = make_dtype(leaf)
        if dtype is not None:
            return dtype
    if head == "nki.language" and leaf in BUFFERS:
        return BufferVal(BUFFERS[leaf])
    if head == "nki.language.tile_size":
        value = tile_size_constants(target.limits).get(leaf)
        return Const(value, f"nl.tile_size.{leaf}") if value is not None else UNKNOWN
    if head == "nki.isa.nc_version" and leaf in _NC_VERSIONS:
        return Const(_NC_VERSIONS[leaf], f"nc_version.{leaf}")
    if qualname in ("nki", "nki.language", "nki.isa", "numpy", "math", "nki.language.tile_size"):
        return ModuleRef(qualname)
    return ApiRef(qualname)


def with_shape(t: TensorVal, shape: tuple[Value, ...]) -> TensorVal:
    """The same tensor with a shape learned from an assert."""
    return TensorVal(shape, t.dtype, t.buffer, t.storage)


def with_dtype(t: TensorVal, dtype: Value) -> TensorVal:
    """The same tensor with a dtype learned from an assert."""
    return TensorVal(t.shape, dtype if isinstance(dtype, DType) else None, t.buffer, t.storage)


def tensor_attribute(t: TensorVal, attr: str, text: str) -> Value:
    """``x.shape``, ``x.dtype``, ``x.buffer``, ``x.ndim``, ``x.size`` of a tensor value."""
    if attr == "shape":
        if t.shape is None:
            return UNKNOWN
        return Seq([_rename(d, f"{text}.shape[{i}]") for i, d in enumerate(t.shape)])
    if attr == "dtype":
        return t.dtype if t.dtype is not None else UNKNOWN
    if attr == "buffer":
        return BufferVal(t.buffer) if t.buffer is not None and t.buffer in BUFFERS.values() else UNKNOWN
    if attr == "ndim":
        return Const(len(t.shape)) if t.shape is not None else UNKNOWN
    if attr == "size":
        n = t.free_elems()
        first = const_int(t.dim(0))
        return Const(n * first) if n is not None and first is not None else UNKNOWN
    return UNKNOWN


def _rename(value: Value, text: str) -> Value:
    if isinstance(value, Const) and not value.expr and text:
        return Const(value.value, text, ((text, str(value.value)),))
    return value


# ---------------------------------------------------------------------------------------------- tensors


def new_tensor(
    interp: Evaluator,
    api: str,
    shape: tuple[Value, ...] | None,
    dtype: DType | None,
    buffer: str | None,
    node: ast.AST,
) -> TensorVal:
    """Record an allocation at ``node`` and return the tensor it creates."""
    seq = interp.next_seq()
    assert interp.frame is not None
    alloc = Allocation(
        api=api,
        span=interp.span(node),
        path=interp.module.path,
        shape=shape,
        dtype=dtype,
        buffer=buffer,
        seq=seq,
        function=interp.frame.function,
        call_chain=interp.call_chain,
        last_use=seq,
        loops=tuple(interp.loops),
        branches=tuple(interp.branches),
    )
    tensor = TensorVal(shape, dtype, buffer, alloc)
    if interp.frame.function == MODULE_FRAME:
        # Module-level code runs at import, not in the kernel, and module globals are evaluated once, by
        # whichever kernel reads a global first: recording the allocation there would charge it to that
        # kernel only, so whole-file and incremental lint (which checks a kernel with only the module-level
        # statements it names) would disagree. It is no kernel's allocation (inferred: NKI allocates on-chip
        # tensors inside a traced kernel; nothing in the reference says a module-level one counts).
        return tensor
    interp.facts.allocations.append(alloc)
    note_view(interp, tensor, node, "allocation" if api in _CREATE_APIS else f"result of {api}")
    return tensor


def note_view(interp: Evaluator, tensor: TensorVal, node: ast.AST, what: str) -> None:
    """Remember an on-chip tensor whose partition dim exceeds the target's (the NKI3xx rule reports it)."""
    if tensor.buffer not in ON_CHIP:
        return
    first = const_int(tensor.dim(0))
    if first is None or first <= interp.target.limits.pmax:
        return
    interp.facts.views.append(
        ViewEvent(tensor, interp.span(node), interp.module.path, interp.call_chain, what)
    )


@dataclass(frozen=True, eq=False)
class ParDim(Value):
    """Legacy ``nl.par_dim(n)``: marks the partition dim of a shape (it may follow block dims)."""

    size: Value


def _shape_arg(value: Value) -> tuple[Value, ...] | None:
    if isinstance(value, Seq) and value.exact:
        return tuple(v.size if isinstance(v, ParDim) else v for v in value.items)
    if isinstance(value, Const) and isinstance(value.value, int):
        return (value,)
    return None


def _dtype_arg(value: Value | None, fallback: DType | None = None) -> DType | None:
    if isinstance(value, DType):
        return value
    if value is None or (isinstance(value, Const) and value.value is None):
        return fallback
    return None


def _buffer_arg(value: Value | None, default: str | None) -> str | None:
    if value is None or (isinstance(value, Const) and value.value is None):
        return default
    if isinstance(value, BufferVal):
        return value.name
    return None


_CREATE_APIS = frozenset(f"nl.{n}" for n in NL_CREATE_PARAMS)


def subscript_tensor(interp: Evaluator, t: TensorVal, key_node: ast.expr, node: ast.AST) -> TensorVal:
    """The view ``t[key]`` (language.md §5.2): ints drop free dims (partition dim kept as 1, on-chip views stay
    at least 2-D), slices and ``nl.ds`` keep a dim of their size."""
    keys = key_node.elts if isinstance(key_node, ast.Tuple) else [key_node]
    values = [interp.eval(k) for k in keys]
    picked = block_tile(t, values)  # one block of a legacy block tensor (model.index_tiles)
    if picked is not None:
        t, values = picked
    if any(isinstance(v, IndexTile) for v in values):  # a legacy index-tile access (model.index_tiles)
        selected = indexed_shape(t.shape, values)
        mask = interp.masks[-1] if interp.masks else None
        if selected is not None and isinstance(mask, IndexMask):  # a masked access spans what the mask keeps
            selected = masked_shape(selected, mask)
        view = TensorVal(selected, t.dtype, t.buffer, t.storage)
        if selected is not None:
            note_view(interp, view, node, "access")
        return view
    if t.shape is None:
        return TensorVal(None, t.dtype, t.buffer, t.storage)
    if any(v is ELLIPSIS for v in values):
        at = next(i for i, v in enumerate(values) if v is ELLIPSIS)
        fill = len(t.shape) - (len(values) - 1)
        values = (
            values[:at] + [SliceVal(Const(None), Const(None), Const(1))] * max(fill, 0) + values[at + 1 :]
        )
    if len(values) > len(t.shape):
        return TensorVal(None, t.dtype, t.buffer, t.storage)
    on_chip = t.buffer in ON_CHIP
    dims: list[Value] = []
    for i, (key, dim) in enumerate(zip(values, t.shape, strict=False)):
        if isinstance(key, SliceVal):
            dims.append(slice_size(key, dim))
        elif isinstance(key, Const) and isinstance(key.value, int) and not isinstance(key.value, bool):
            if on_chip and i == 0:
                dims.append(Const(1))
        else:
            return TensorVal(None, t.dtype, t.buffer, t.storage)  # tensor / unknown index: rank unknown
    dims.extend(t.shape[len(values) :])
    if on_chip and len(dims) < 2:
        dims.append(Const(1))
    view = TensorVal(tuple(dims), t.dtype, t.buffer, t.storage)
    note_view(interp, view, node, "view")
    return view


def slice_size(key: SliceVal, dim: Value) -> Value:
    """Elements a slice selects from a dim, with the derivation of ``stop - start`` when that is the size.

    On a known dim this follows Python slicing (negative bounds count from the end, bounds are clamped), so
    a view never has more partitions than its tensor; on an unknown dim it is ``ceil((stop - start) / step)``.
    """
    if key.size is not None:
        return key.size
    step = const_int(key.step) if not _is_none(key.step) else 1
    n = const_int(dim)
    start = 0 if _is_none(key.start) else const_int(key.start)
    stop = n if _is_none(key.stop) else const_int(key.stop)
    if start is None or stop is None or not step:
        return UNKNOWN
    plain = max(0, -(-(stop - start) // step)) if step > 0 else max(0, -(-(start - stop) // -step))
    size = len(range(n)[slice(start, stop, step)]) if n is not None else plain
    if size != plain or step != 1:
        return Const(size)
    start_v, stop_v = key.start, key.stop
    if _is_none(stop_v):
        return Const(size, dim.expr, dim.binds) if isinstance(dim, Const) and start == 0 else Const(size)
    if not isinstance(stop_v, Const):
        return Const(size)
    if start == 0:
        return Const(size, stop_v.expr, stop_v.binds)
    if isinstance(start_v, Const):
        start_text = start_v.expr or str(start_v.value)
        if not (start_text.isidentifier() or start_text.isdigit()):
            start_text = f"({start_text})"
        return Const(
            size, f"{stop_v.expr or stop_v.value}-{start_text}", merge_binds(stop_v.binds, start_v.binds)
        )
    return Const(size)


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


def tensor_method(
    interp: Evaluator,
    t: TensorVal,
    name: str,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.AST,
) -> Value:
    """View methods of NkiTensor (language.md §5.3): the view's shape when it can be computed."""
    shape = list(t.shape) if t.shape is not None else None
    dtype: DType | None = t.dtype

    def arg(i: int, key: str) -> Value | None:
        return kwargs.get(key, args[i] if i < len(args) else None)

    new_shape: list[Value] | None = None
    if name == "reshape":
        target = arg(0, "shape")
        if len(args) > 1:
            target = Seq(list(args))
        dims = _shape_arg(target) if target is not None else None
        new_shape = list(dims) if dims is not None else None
    elif name in ("view", "reinterpret_cast"):
        new_dtype = _dtype_arg(arg(0, "dtype"))
        if shape is not None and new_dtype is not None and dtype is not None and shape:
            last = const_int(shape[-1])
            scaled = last * dtype.bytes / new_dtype.bytes if last is not None else None
            new_shape = [
                *shape[:-1],
                Const(int(scaled)) if scaled is not None and scaled == int(scaled) else UNKNOWN,
            ]
        dtype = new_dtype
    elif name == "ap":
        pattern = arg(0, "pattern")
        if isinstance(pattern, Seq) and pattern.exact:
            new_shape = [
                p.items[1] if isinstance(p, Seq) and len(p.items) == 2 else UNKNOWN for p in pattern.items
            ]
        dtype = _dtype_arg(kwargs.get("dtype"), t.dtype)
    elif shape is not None:
        new_shape = _reshaping_method(name, shape, arg)
    elif name == "indirect":
        new_shape = None
    else:
        return UNKNOWN if name not in TENSOR_VIEW_METHODS else TensorVal(None, dtype, t.buffer, t.storage)
    if name not in TENSOR_VIEW_METHODS:
        return UNKNOWN
    view = TensorVal(tuple(new_shape) if new_shape is not None else None, dtype, t.buffer, t.storage)
    note_view(interp, view, node, f"view .{name}()")
    return view


def _reshaping_method(
    name: str, shape: list[Value], get: Callable[[int, str], Value | None]
) -> list[Value] | None:
    """Shape after slice/select/permute/broadcast/expand/squeeze/reshape_dim/flatten/indirect; ``get`` reads
    an argument by position or keyword."""

    def idx(i: int, key: str) -> int | None:
        v = get(i, key)
        n = const_int(v) if isinstance(v, Value) else None
        if n is not None and n < 0:
            n += len(shape)
        return n

    dim = idx(0, "dim")
    if name == "slice" and dim is not None and dim < len(shape):
        start, end = idx(1, "start"), idx(2, "end")
        step = idx(3, "step") or 1
        out = list(shape)
        out[dim] = (
            Const(max(0, -(-(end - start) // step))) if start is not None and end is not None else UNKNOWN
        )
        return out
    if name == "select" and dim is not None and dim < len(shape):
        return shape[:dim] + shape[dim + 1 :]
    if name == "permute":
        order = get(0, "dims")
        perm = order.as_ints() if isinstance(order, Seq) else None
        if perm is not None and sorted(perm) == list(range(len(shape))):
            return [shape[i] for i in perm]
        return None
    if name == "broadcast" and dim is not None and dim < len(shape):
        out = list(shape)
        size = get(1, "size")
        out[dim] = size if isinstance(size, Value) else UNKNOWN
        return out
    if name == "expand_dim" and dim is not None:
        return [*shape[:dim], Const(1), *shape[dim:]]
    if name == "squeeze_dim" and dim is not None and dim < len(shape):
        return shape[:dim] + shape[dim + 1 :]
    if name == "reshape_dim" and dim is not None and dim < len(shape):
        parts = get(1, "shape")
        if isinstance(parts, Seq) and parts.exact:
            return shape[:dim] + list(parts.items) + shape[dim + 1 :]
        return None
    if name == "flatten_dims":
        end = idx(1, "end_dim")
        if dim is not None and end is not None and dim <= end < len(shape):
            maybe = [const_int(d) for d in shape[dim : end + 1]]
            ints = [n for n in maybe if n is not None]
            total: Value = UNKNOWN
            if len(ints) == len(maybe):
                prod = 1
                for n in ints:
                    prod *= n
                total = Const(prod)
            return [*shape[:dim], total, *shape[end + 1 :]]
        return None
    if name == "indirect":
        num = get(1, "num_elem")
        return [shape[0], num if isinstance(num, Const) else UNKNOWN]
    return None


# ---------------------------------------------------------------------------------------------- API calls

# Calls whose result has the shape of their tensor operands (broadcast together); reductions drop or keep axes.
_ELEMENTWISE_RESULT = frozenset(
    {"copy", "where", *LANGUAGE_UNARY_MATH, *LANGUAGE_ACTIVATIONS, *LANGUAGE_BINARY, *LANGUAGE_SHAPE_KEEPING}
)
_RANGE_APIS = frozenset({"affine_range", "static_range", "sequential_range", "range"})
# Data-movement calls recorded for the rules, with their parameter lists from the stubs.
_LANG_PARAMS = {
    name: LANGUAGE_PARAMS[name] for name in ("load", "store", "matmul", "transpose", "load_transpose2d")
}


def call_api(
    interp: Evaluator,
    qualname: str,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.Call,
    as_statement: bool,
) -> Value:
    """Evaluate a call of an NKI API name (``builtins`` and ``math`` are ``builtin_values``')."""
    head, _, name = qualname.rpartition(".")
    for value in (*args, *kwargs.values()):
        interp.use(value)
    if head == "nki.language":
        return _language_call(interp, name, args, kwargs, node)
    if head == "nki.isa":
        return _isa_call(interp, name, args, kwargs, node, as_statement)
    if head == "nki" and name == "jit" and args:
        return args[0]
    return UNKNOWN


def _language_call(
    interp: Evaluator, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.Call
) -> Value:
    if name in NL_CREATE_PARAMS:
        return _create(interp, name, bind_arguments(NL_CREATE_PARAMS[name], args, kwargs), node)
    if name in _RANGE_APIS:
        return make_range(args)
    if name == "ds" and len(args) + len(kwargs) >= 2:
        b = bind_arguments(LANGUAGE_PARAMS["ds"], args, kwargs)
        start, size = b["start"], b["size"]
        assert isinstance(start, Value) and isinstance(size, Value)
        stop = binop(ast.Add(), start, size, "start", "size")
        return SliceVal(start, stop, Const(1), size)
    if name == "par_dim" and args:
        return ParDim(args[0])
    if name == "arange":
        return arange(args)
    if name in ("fori_loop",):
        b = bind_arguments(LANGUAGE_PARAMS["fori_loop"], args, kwargs)
        body = b.get("body_fun")
        if isinstance(body, FunctionVal):
            interp.call_function(body, [UNKNOWN], {}, node)
        return Const(None)
    if name == "while_loop":
        b = bind_arguments(LANGUAGE_PARAMS["while_loop"], args, kwargs)
        body = b.get("body_fun")
        if isinstance(body, FunctionVal):
            interp.call_function(body, [UNKNOWN], {}, node)
        return UNKNOWN
    if name in _LANG_PARAMS:
        bound = bind_arguments(_LANG_PARAMS[name], args, kwargs)
        operands = {k: v for k, v in bound.items() if isinstance(v, Value)}
        interp.facts.calls.append(
            ApiCall(
                name,
                "language",
                interp.span(node),
                interp.module.path,
                operands,
                interp.call_chain,
                interp.seq,
            )
        )
        return _language_result(interp, name, operands, node)
    if name in _ELEMENTWISE_RESULT or name in LANGUAGE_REDUCTIONS:
        return _elementwise_result(interp, name, args, kwargs, node)
    return UNKNOWN


def _create(interp: Evaluator, name: str, bound: dict[str, Value], node: ast.Call) -> Value:
    api = f"nl.{name}"
    if name in ("empty_like", "zeros_like"):
        like = bound.get("x")
        if not isinstance(like, TensorVal):
            return TensorVal(None, None, None)
        default_buffer = like.buffer if name == "empty_like" else "sbuf"
        dtype = _dtype_arg(bound.get("dtype"), like.dtype)
        buffer = _buffer_arg(bound.get("buffer"), default_buffer)
        return new_tensor(interp, api, like.shape, dtype, buffer, node)
    if name == "shared_identity_matrix":
        n = bound.get("n")
        square = (n, n) if isinstance(n, Const) else None
        dtype = _dtype_arg(bound.get("dtype"), DType("uint8"))
        return new_tensor(interp, api, square, dtype, "sbuf", node)
    shape_value = bound.get("shape")
    shape = _shape_arg(shape_value) if isinstance(shape_value, Value) else None
    dtype = _dtype_arg(bound.get("dtype"))
    buffer = _buffer_arg(bound.get("buffer"), "sbuf")
    blocks = _legacy_block_dims(shape_value)
    if blocks is not None and shape is not None:
        # Legacy block tensor (blocks..., par_dim(P), free...): P partitions hold every block's free data.
        # Indexing follows the legacy block semantics we do not model, so the view's shape stays unknown.
        storage_shape = (shape[blocks], *shape[:blocks], *shape[blocks + 1 :])
        tensor = new_tensor(interp, api, storage_shape, dtype, buffer, node)
        if tensor.storage is not None:
            tensor.storage.block_dims = blocks
        return TensorVal(None, dtype, buffer, tensor.storage)
    return new_tensor(interp, api, shape, dtype, buffer, node)


def _legacy_block_dims(value: object) -> int | None:
    """Index of a ``par_dim`` that is not the first dim of a shape tuple, else None."""
    if isinstance(value, Seq):
        for i, item in enumerate(value.items):
            if isinstance(item, ParDim):
                return i if i > 0 else None
    return None


def _language_result(interp: Evaluator, name: str, ops: dict[str, Value], node: ast.Call) -> Value:
    if name == "store":
        return Const(None)
    src = ops.get("src") if name in ("load", "load_transpose2d") else ops.get("x")
    if not isinstance(src, TensorVal):
        return TensorVal(None, None, "psum" if name in ("matmul", "transpose") else "sbuf")
    dtype = _dtype_arg(ops.get("dtype"), src.dtype)
    if name == "load":
        return new_tensor(interp, "nl.load", src.shape, dtype, "sbuf", node)
    if name in ("load_transpose2d", "transpose"):
        shape = tuple(reversed(src.shape)) if src.shape is not None and len(src.shape) == 2 else None
        return new_tensor(
            interp, f"nl.{name}", shape, dtype, "sbuf" if name == "load_transpose2d" else "psum", node
        )
    # matmul: x @ y, or x.T @ y with transpose_x -> PSUM fp32 (language.md §7)
    y = ops.get("y")
    transpose_x = ops.get("transpose_x")
    shape = None
    if (
        isinstance(y, TensorVal)
        and y.shape is not None
        and src.shape is not None
        and len(src.shape) == 2
        and len(y.shape) == 2
        and isinstance(transpose_x, (Const, type(None)))
    ):
        m = src.shape[1] if transpose_x is not None and transpose_x.value else src.shape[0]
        shape = (m, y.shape[1])
    return new_tensor(interp, "nl.matmul", shape, DType("float32"), "psum", node)


def _elementwise_result(
    interp: Evaluator, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.Call
) -> Value:
    tensors = [a for a in args if isinstance(a, TensorVal)]
    if not tensors:
        return UNKNOWN
    first = tensors[0]
    shape = first.shape
    for other in tensors[1:]:
        if shape is None or other.shape is None or len(other.shape) != len(shape):
            shape = None
            break
        shape = tuple(a if same_value(a, b) else UNKNOWN for a, b in zip(shape, other.shape, strict=False))
    if name in LANGUAGE_REDUCTIONS and shape is not None:
        axis = kwargs.get("axis", args[1] if len(args) > 1 else None)
        axes = (
            [const_int(axis)]
            if isinstance(axis, Const)
            else (list(axis.as_ints() or [None]) if isinstance(axis, Seq) else [None])
        )
        keep = kwargs.get("keepdims")
        if None in axes:
            shape = None
        elif isinstance(keep, Const) and keep.value:
            shape = tuple(Const(1) if i in axes else d for i, d in enumerate(shape))
        else:
            shape = tuple(d for i, d in enumerate(shape) if i not in axes)
    dtype = _dtype_arg(kwargs.get("dtype"), first.dtype)
    buffer = "sbuf" if kwargs.get("buffer") is None else _buffer_arg(kwargs.get("buffer"), "sbuf")
    return new_tensor(interp, f"nl.{name}", shape, dtype, buffer, node)


def _isa_call(
    interp: Evaluator,
    name: str,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.Call,
    as_statement: bool,
) -> Value:
    if name == "get_nc_version":
        return Const(interp.target.generation.nc_version, "nisa.get_nc_version()")
    params = ISA_PARAMS.get(name)
    if params is None:
        return UNKNOWN
    first = params[0]  # dst, or what the instruction writes/sends first (sendrecv, core_barrier, topk)
    # Legacy (<= 0.1) ISA calls returned their result and had no dst; only bind the current signature when the
    # call is written in the dst-first form (isa.md §0.1).
    if first not in kwargs and (not as_statement or interp.module.legacy):
        if interp.module.legacy and name in LEGACY_VALUE_CALLS:
            return legacy_result(interp, name, args, kwargs, node, new_tensor)
        return UNKNOWN
    bound = bind_arguments(params, args, kwargs)
    operands = {k: v for k, v in bound.items() if isinstance(v, Value)}
    interp.facts.calls.append(
        ApiCall(name, "isa", interp.span(node), interp.module.path, operands, interp.call_chain, interp.seq)
    )
    if name in ("nc_matmul", "nc_matmul_mx"):
        dst = operands.get("dst")
        if isinstance(dst, TensorVal) and dst.storage is not None:
            dst.storage.is_matmul_dst = True
    return UNKNOWN
