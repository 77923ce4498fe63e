"""Python builtins, ``math`` functions, list/dict methods and user classes on interpreter values."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

from nki_studio.model import nki_semantics as nki
from nki_studio.model.arithmetic import binop
from nki_studio.model.evaluator import Evaluator
from nki_studio.model.values import (
    MAX_SEQ_LEN,
    UNKNOWN,
    ClassVal,
    Const,
    DictVal,
    FunctionVal,
    ObjectVal,
    Seq,
    SliceVal,
    TensorVal,
    Value,
    const_int,
    const_num,
    merge_binds,
)


def list_method(interp: Evaluator, owner: Seq, name: str, args: list[Value]) -> Value:
    """Mutating list methods; a change the list outlives in a summarised loop or an unknown branch makes it
    inexact (its length is no longer known)."""
    if name in ("append", "extend", "insert", "pop", "remove", "clear") and interp.uncertain_write(
        owner.created
    ):
        object.__setattr__(owner, "exact", False)
    if name == "append" and args:
        if len(owner.items) < MAX_SEQ_LEN:
            owner.items.append(args[0])
    elif name == "extend" and args:
        if isinstance(args[0], Seq) and args[0].exact:
            owner.items.extend(args[0].items)
        else:
            object.__setattr__(owner, "exact", False)
    elif name == "insert" and len(args) == 2:
        index = const_int(args[0])
        if index is None:
            object.__setattr__(owner, "exact", False)
        else:
            owner.items.insert(index, args[1])
    elif name == "pop":
        if owner.items and owner.exact and not args:
            return owner.items.pop()
        object.__setattr__(owner, "exact", False)
    elif name in ("remove", "clear", "sort", "reverse"):
        object.__setattr__(owner, "exact", False)
    elif name == "index" or name == "count":
        return UNKNOWN
    return Const(None)


def dict_method(owner: DictVal, name: str, args: list[Value]) -> Value:
    if name == "get" and args and isinstance(args[0], Const) and isinstance(args[0].value, str):
        if args[0].value in owner.items:
            return owner.items[args[0].value]
        return args[1] if len(args) > 1 else Const(None)
    if name == "keys":
        return Seq([Const(k) for k in owner.items])
    if name == "values":
        return Seq(list(owner.items.values()))
    if name == "items":
        return Seq([Seq([Const(k), v]) for k, v in owner.items.items()])
    return UNKNOWN


def _class_fields(cls: ast.ClassDef) -> Iterator[tuple[str, ast.expr | None]]:
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            yield stmt.target.id, stmt.value
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    yield target.id, stmt.value


def class_attribute(interp: Evaluator, cls: ClassVal, attr: str) -> Value:
    """A class-level constant (``Config.TILE``), evaluated in the class's module."""
    for name, expr in _class_fields(cls.node):
        if name == attr and expr is not None:
            saved = interp.frame
            interp.frame = interp.new_frame(cls.module, cls.node.name)
            try:
                return interp.eval(expr)
            finally:
                interp.frame = saved
    return UNKNOWN


def instantiate(interp: Evaluator, cls: ClassVal, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """A user class call: dataclass-style fields from arguments/defaults, then ``__init__`` inlined if present."""
    obj = ObjectVal(cls.node.name, created=interp.context_depth())
    fields = list(_class_fields(cls.node))
    saved = interp.frame
    interp.frame = interp.new_frame(cls.module, cls.node.name)
    try:
        for name, default in fields:
            obj.attrs[name] = interp.eval(default) if default is not None else UNKNOWN
    finally:
        interp.frame = saved
    init = next((s for s in cls.node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is not None:
        interp.call_function(
            FunctionVal(init, cls.module),
            [obj, *args],
            kwargs,
            ast.Call(func=ast.Name(id=cls.node.name), args=[], keywords=[]),
        )
        return obj
    for (name, _), value in zip(fields, args, strict=False):
        obj.attrs[name] = value
    for name, value in kwargs.items():
        obj.attrs[name] = value
    return obj


def builtin_call(interp: Evaluator, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """Python builtins and ``math`` functions on known values."""
    nums = [const_num(a) for a in args]
    if name in ("min", "max"):
        items = args
        if len(args) == 1 and isinstance(args[0], Seq):
            items = list(args[0].items) if args[0].exact else []
        maybe = [const_num(a) for a in items]
        values = [v for v in maybe if v is not None]
        if not items or len(values) < len(maybe):
            return UNKNOWN
        pick = (min if name == "min" else max)(range(len(items)), key=lambda i: values[i])
        chosen = items[pick]
        assert isinstance(chosen, Const)
        exprs = ", ".join(c.expr or str(c.value) for c in items if isinstance(c, Const))
        binds = merge_binds(*(c.binds for c in items if isinstance(c, Const)))
        return Const(chosen.value, f"{name}({exprs})", binds)
    if name == "range":
        return nki.make_range(args)
    if name == "len":
        if args and isinstance(args[0], Seq) and args[0].exact:
            return Const(len(args[0].items))
        if args and isinstance(args[0], TensorVal):
            return args[0].dim(0)
        if args and isinstance(args[0], DictVal):
            return Const(len(args[0].items))
        if args and isinstance(args[0], nki.RangeVal):
            n = args[0].length()
            return Const(n) if n is not None else UNKNOWN
        return UNKNOWN
    if name in ("int", "float", "bool", "abs", "round") and len(args) >= 1:
        value = args[0]
        if (
            not isinstance(value, Const)
            or value.value is None
            or (isinstance(value.value, str) and name != "int")
        ):
            return UNKNOWN
        try:
            fn = {"int": int, "float": float, "bool": bool, "abs": abs, "round": round}[name]
            result = fn(value.value) if len(args) == 1 else fn(value.value, const_int(args[1]))  # type: ignore[operator]
        except (TypeError, ValueError, OverflowError):
            return UNKNOWN
        return Const(result, f"{name}({value.expr or value.value})", value.binds)
    if name in ("tuple", "list"):
        if not args:
            return Seq([], is_list=name == "list")
        src = args[0]
        if isinstance(src, Seq):
            return Seq(list(src.items), is_list=name == "list", exact=src.exact)
        if isinstance(src, nki.RangeVal):
            loop_values = src.values()
            return Seq(loop_values, is_list=name == "list") if loop_values is not None else UNKNOWN
        return UNKNOWN
    if name in ("enumerate", "zip", "reversed", "sorted"):
        return _sequence_builtin(name, args)
    if name == "sum":
        if args and isinstance(args[0], Seq) and args[0].exact:
            maybe = [const_num(v) for v in args[0].items]
            values = [v for v in maybe if v is not None]
            if len(values) == len(maybe):
                return Const(sum(values))
        return UNKNOWN
    if name == "divmod" and len(nums) == 2:
        num, den = nums
        if num is None or not den:
            return UNKNOWN
        q, r = divmod(num, den)
        return Seq([Const(q), Const(r)])
    if name == "slice":
        padded = [*args, Const(None), Const(None), Const(None)]
        if len(args) == 1:
            return SliceVal(Const(None), args[0], Const(1))
        return SliceVal(
            padded[0],
            padded[1],
            padded[2] if not (isinstance(padded[2], Const) and padded[2].value is None) else Const(1),
        )
    if name in ("any", "all") and args and isinstance(args[0], Seq) and args[0].exact:
        truths = [interp.truth(v) for v in args[0].items]
        if None in truths:
            return UNKNOWN
        return Const((any if name == "any" else all)(truths))
    if name == "print":
        return Const(None)
    if name == "pow" and len(nums) >= 2 and None not in nums[:2]:
        return binop(ast.Pow(), args[0], args[1], "", "")
    return UNKNOWN


def _sequence_builtin(name: str, args: list[Value]) -> Value:
    seqs: list[list[Value]] = []
    for arg in args:
        if isinstance(arg, Seq) and arg.exact:
            seqs.append(list(arg.items))
        elif isinstance(arg, nki.RangeVal) and arg.values() is not None:
            seqs.append(arg.values() or [])
        elif isinstance(arg, Const) and name == "enumerate":
            continue  # start= argument as positional
        else:
            return UNKNOWN
    if not seqs:
        return UNKNOWN
    if name == "enumerate":
        return Seq([Seq([Const(i), v]) for i, v in enumerate(seqs[0])])
    if name == "zip":
        return Seq([Seq(list(group)) for group in zip(*seqs, strict=False)])
    if name == "reversed":
        return Seq(list(reversed(seqs[0])))
    maybe = [const_num(v) for v in seqs[0]]
    values = [v for v in maybe if v is not None]
    if len(values) < len(maybe):
        return UNKNOWN
    return Seq([Const(v) for v in sorted(values)])


def math_call(name: str, args: list[Value]) -> Value:
    """``math.ceil`` / ``floor`` / ``prod`` / ``sqrt`` / ``log2`` on known numbers."""
    if name == "prod" and args and isinstance(args[0], Seq):
        dims = args[0].as_ints() if args[0].exact else None
        return Const(math.prod(dims)) if dims is not None else UNKNOWN
    nums = [const_num(a) for a in args]
    if not nums or None in nums:
        return UNKNOWN
    fn = {
        "ceil": math.ceil,
        "floor": math.floor,
        "sqrt": math.sqrt,
        "log2": math.log2,
        "gcd": math.gcd,
        "isqrt": math.isqrt,
    }.get(name)
    if fn is None:
        return UNKNOWN
    try:
        first = args[0]
        assert isinstance(first, Const)
        return Const(fn(*nums), f"{name}({first.expr or first.value})", first.binds)  # type: ignore[operator]
    except (ValueError, TypeError, OverflowError):
        return UNKNOWN
