"""Simulate specs: what to feed a kernel, parsed from the comment above its decorator, from
``[tool.nki-studio.simulate]`` in pyproject.toml, or inferred from the kernel itself.

Comment grammar (one line, directly above the kernel's first decorator)::

    # nki-studio: simulate x=bfloat16[1024,4096] k=3 reference=ref_fn seed=7 lnc=2 atol=0.01 rtol=0.01

* ``name=dtype[d0,d1,...]`` a tensor argument; ``name=3`` / ``name=0.5`` / ``name=true`` / ``name=none`` a
  scalar argument (``none`` is Python's None: nki-samples' flash attention takes ``seed=None``);
  ``name=(3,4)`` a tuple of integers (a shape argument: nki-samples' transpose2d kernel takes one);
  ``name=Config(field=1,flag=true)`` an instance of a class the kernel's module defines, called with those
  scalar keyword fields (a configuration dataclass: nki-samples' ``FlashConfig``);
* reserved keys: ``reference=`` (function computing the expected outputs from the same inputs, in the same
  file or ``module:function`` / ``module.function``), ``inputs=`` (function returning the argument tuple; given
  the kernel's module and the seed when it takes ``module``/``seed`` parameters), ``seed=`` (input generator seed),
  ``lnc=`` (1 or 2), ``ranks=`` (collective ranks to simulate), ``atol=``/``rtol=`` (oracle tolerances). A
  reserved key that is also a kernel parameter's name is passed to the kernel as well (``ranks=4`` for a kernel
  taking ``ranks``); ``seed=none`` passes None to a kernel's ``seed`` parameter, the inputs then drawn with seed 0.

Precedence (issue 4): the comment, then inference, then pyproject.toml. It is applied per key, so a
pyproject ``reference=`` still applies when the shapes come from the comment (nothing is lost).
A malformed spec yields ``NKI601`` findings on the comment and no run.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nki_studio.core.findings import Finding, Span
from nki_studio.core.pyproject import TOOL_TABLE, PyprojectError, find_pyproject, read_pyproject
from nki_studio.core.simulation_codes import MALFORMED_SPEC
from nki_studio.model.kernels import build_module, kernel_decorator_name
from nki_studio.protocol.simulation import Spec

SPEC_MARKER = "nki-studio: simulate"
INFERRED_DEFAULT_DTYPE = "float32"  # for parameters whose dtype the kernel does not assert
RESERVED = ("reference", "inputs", "seed", "lnc", "ranks", "atol", "rtol")
MAX_RANKS = 64  # collective ranks simulated as threads: a sanity bound, not a hardware number

# User-facing dtype names -> canonical NumPy / ml_dtypes names (language.md §2).
_DTYPES = {
    name: name
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "tfloat32",
        "float8_e4m3",
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e8m0fnu",
    )
}
_DTYPES.update(
    {
        "bool_": "bool",
        "bf16": "bfloat16",
        "fp16": "float16",
        "f16": "float16",
        "half": "float16",
        "fp32": "float32",
        "f32": "float32",
        "float": "float32",
        "fp64": "float64",
        "tf32": "tfloat32",
        "fp8_e4m3": "float8_e4m3",
        "fp8_e4m3fn": "float8_e4m3fn",
        "fp8_e5m2": "float8_e5m2",
    }
)


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument: canonical dtype name and shape."""

    dtype: str
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"


Scalar = int | float | bool | None


@dataclass(frozen=True)
class InstanceSpec:
    """An instance of a class of the kernel's module (a configuration dataclass), built by calling the class
    with these keyword fields; no field: all its defaults."""

    cls: str
    fields: tuple[tuple[str, Scalar], ...] = ()

    def __str__(self) -> str:
        return f"{self.cls}({','.join(f'{k}={_format_value(v)}' for k, v in self.fields)})"


ArgValue = TensorSpec | Scalar | tuple[int, ...] | InstanceSpec


@dataclass(frozen=True)
class SimSpec:
    """Everything needed to run one kernel: arguments in call order plus oracle and launch options."""

    kernel: str
    args: tuple[tuple[str, ArgValue], ...] = ()
    reference: str | None = None
    inputs: str | None = None
    seed: int = 0
    lnc: int = 1
    ranks: int = 1  # collective ranks to simulate (one kernel instance each)
    atol: float | None = None
    rtol: float | None = None
    origin: tuple[str, ...] = ()  # sources that contributed, e.g. ("comment", "pyproject")

    def to_comment(self) -> str:
        """The spec as a comment line (what "Add simulate spec" inserts)."""
        parts = [f"{name}={_format_value(value)}" for name, value in self.args]
        given = {name for name, _ in self.args}
        defaults = {"seed": 0, "lnc": 1, "ranks": 1}
        for key in RESERVED:
            value = getattr(self, key)
            if value is not None and key not in given and value != defaults.get(key):
                parts.append(f"{key}={value}")
        return f"# {SPEC_MARKER} " + " ".join(parts)

    def to_json(self) -> Spec:
        """A JSON-friendly form (sent to the worker process and in results)."""
        return {
            "kernel": self.kernel,
            "args": [[n, _format_value(v)] for n, v in self.args],
            "reference": self.reference,
            "inputs": self.inputs,
            "seed": self.seed,
            "lnc": self.lnc,
            "ranks": self.ranks,
            "atol": self.atol,
            "rtol": self.rtol,
            "origin": list(self.origin),
        }

    @staticmethod
    def from_json(raw: Mapping[str, Any]) -> SimSpec:
        """Inverse of :meth:`to_json`."""
        args = tuple((str(n), parse_value(str(v))) for n, v in raw.get("args", ()))
        return SimSpec(
            kernel=str(raw["kernel"]),
            args=args,
            reference=raw.get("reference"),
            inputs=raw.get("inputs"),
            seed=int(raw.get("seed", 0)),
            lnc=int(raw.get("lnc", 1)),
            ranks=int(raw.get("ranks", 1)),
            atol=raw.get("atol"),
            rtol=raw.get("rtol"),
            origin=tuple(raw.get("origin", ())),
        )


def _format_value(value: ArgValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return str(value).replace(" ", "")  # (3,4), (3,): a spec value is one token
    return str(value)


class SpecError(ValueError):
    """A malformed spec value; ``start``/``end`` are 0-based offsets into the text that was parsed."""

    def __init__(self, message: str, start: int = 0, end: int = 0) -> None:
        super().__init__(message)
        self.start, self.end = start, end


@dataclass(frozen=True)
class KernelInfo:
    """A ``@...jit``-decorated function in a file, and the spec comment above it if any."""

    name: str
    params: tuple[str, ...]  # positional parameter names in order
    required: tuple[str, ...]  # parameters without a default
    def_line: int  # 1-based line of ``def``
    decorator_line: int  # 1-based line of the first decorator
    spec_line: int | None = None  # 1-based line of the spec comment directly above
    spec_text: str | None = None  # the whole comment line


# ---------------------------------------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(?P<key>[A-Za-z_]\w*)\s*=\s*(?P<val>[A-Za-z_][\w.]*\s*\[[^\]]*\]|\S+)")
_TENSOR = re.compile(r"(?P<dtype>[A-Za-z_][\w.]*)\s*\[(?P<dims>[^\]]*)\]")
_FUNC = re.compile(r"[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?")
_TUPLE = re.compile(r"\(\s*(?P<items>-?\d+(\s*,\s*-?\d+)*)?\s*,?\s*\)")
_INSTANCE = re.compile(r"(?P<cls>[A-Za-z_]\w*)\((?P<fields>[^()]*)\)")


def parse_dtype(text: str) -> str:
    """Canonical dtype name for ``bf16``, ``nl.bfloat16``, ``np.float32`` ...; raises SpecError."""
    name = text.strip()
    for prefix in ("nl.", "np.", "numpy.", "ml_dtypes.", "nki.language."):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    try:
        return _DTYPES[name.lower()]
    except KeyError:
        known = ", ".join(sorted(set(_DTYPES.values())))
        raise SpecError(f"unknown dtype {text!r}; expected one of: {known}") from None


def parse_value(text: str) -> ArgValue:
    """Parse one argument value: ``dtype[shape]``, an int, a float, true/false, none, a tuple of ints ``(3,4)``
    or an instance ``Config(field=1,flag=true)``; raises SpecError."""
    m = _TENSOR.fullmatch(text.strip())
    if m:
        dims_text = m.group("dims").strip()
        dims: list[int] = []
        for part in (p.strip() for p in dims_text.split(",")) if dims_text else ():
            if not re.fullmatch(r"\d+", part) or int(part) <= 0:
                raise SpecError(f"shape dimension {part!r} in {text!r} is not a positive integer")
            dims.append(int(part))
        return TensorSpec(parse_dtype(m.group("dtype")), tuple(dims))
    m = _TUPLE.fullmatch(text.strip())
    if m:
        items = m.group("items")
        return tuple(int(v) for v in items.split(",")) if items else ()
    m = _INSTANCE.fullmatch(text.strip())
    if m:
        return InstanceSpec(m.group("cls"), _instance_fields(m.group("fields"), text))
    return _parse_scalar(text)


def _parse_scalar(text: str) -> Scalar:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise SpecError(
            f"{text!r} is neither dtype[shape] (e.g. bfloat16[128,512]), a number, true/false, none, "
            "Class(field=value,...) nor a tuple of integers"
        ) from None


def _instance_fields(text: str, whole: str) -> tuple[tuple[str, Scalar], ...]:
    """``field=1,flag=true`` as (name, scalar) pairs; raises SpecError."""
    fields: dict[str, Scalar] = {}
    for part in (p.strip() for p in text.split(",")) if text.strip() else ():
        name, equals, value = part.partition("=")
        if not equals or not name.strip().isidentifier() or name.strip() in fields:
            raise SpecError(f"{part!r} in {whole!r} is not a new field=value")
        fields[name.strip()] = _parse_scalar(value)
    return tuple(fields.items())


def _parse_reserved(key: str, text: str) -> Any:
    if key in ("reference", "inputs"):
        if not _FUNC.fullmatch(text):
            raise SpecError(
                f"{key}= expects a function name, 'module:function' or 'module.function', got {text!r}"
            )
        return text
    if key == "seed":
        if text.lower() == "none":  # for a kernel's own seed parameter (_check_args): the kernel gets None
            return None
        if not re.fullmatch(r"\d+", text):
            raise SpecError(f"seed= expects a non-negative integer, got {text!r}")
        return int(text)
    if key == "ranks":
        if not re.fullmatch(r"\d+", text) or not 1 <= int(text) <= MAX_RANKS:
            raise SpecError(
                f"ranks= expects the number of collective ranks to simulate, 1 to {MAX_RANKS}, got {text!r}"
            )
        return int(text)
    if key == "lnc":
        if text not in ("1", "2"):
            raise SpecError(f"lnc= must be 1 or 2 (logical NeuronCore degree), got {text!r}")
        return int(text)
    try:  # atol / rtol
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise SpecError(f"{key}= expects a non-negative number, got {text!r}")
    return value


def parse_fields(text: str) -> tuple[dict[str, Any], list[SpecError]]:
    """Parse ``key=value ...`` into typed fields; every problem is collected (offsets into ``text``)."""
    fields: dict[str, Any] = {}
    errors: list[SpecError] = []
    pos = 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            start = len(text) - len(text[pos:].lstrip())
            end = text.find(" ", start)
            end = len(text) if end < 0 else end
            errors.append(SpecError(f"expected name=value, got {text[start:end]!r}", start, end))
            pos = end
            continue
        key, raw = m.group("key"), m.group("val")
        start, end = m.start("key"), m.end("val")
        pos = m.end()
        if key in fields:
            errors.append(SpecError(f"{key}= is given twice", start, end))
            continue
        try:
            fields[key] = _parse_reserved(key, raw) if key in RESERVED else parse_value(raw)
        except SpecError as exc:
            errors.append(SpecError(str(exc), start, end))
    return fields, errors


# ------------------------------------------------------------------------------------- kernel discovery


def find_kernels(source: str, path: str = "") -> list[KernelInfo]:
    """Top-level kernels (``@nki.jit`` under any alias or call form, model.kernels); [] if unparsable."""
    return list(_kernels(source, path) or ())


def parses(source: str, path: str = "") -> bool:
    """Whether ``source`` parses: while it does not (a line half typed), nothing can be said about its specs."""
    return _kernels(source, path) is not None


@functools.lru_cache(maxsize=16)  # one save asks several times about the same text
def _kernels(source: str, path: str) -> tuple[KernelInfo, ...] | None:
    """The kernels of ``source``; None when it does not parse."""
    try:
        module = build_module(source, path)
    except (SyntaxError, ValueError):
        return None
    lines = source.splitlines()
    kernels = []
    for info in module.functions.values():
        node = info.node
        decorators = [d for d in node.decorator_list if kernel_decorator_name(d, module.aliases)]
        if info.parent is not None or "." in info.qualname or not decorators:
            continue
        dec_line = min(d.lineno for d in node.decorator_list)
        positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        keyword_only = [a.arg for a in node.args.kwonlyargs]
        params = positional + keyword_only
        required = positional[: len(positional) - len(node.args.defaults)] + [
            a for a, default in zip(keyword_only, node.args.kw_defaults, strict=True) if default is None
        ]
        spec_line = spec_text = None
        above = lines[dec_line - 2] if dec_line >= 2 else ""
        if spec_body(above) is not None:
            spec_line, spec_text = dec_line - 1, above
        kernels.append(
            KernelInfo(node.name, tuple(params), tuple(required), node.lineno, dec_line, spec_line, spec_text)
        )
    return tuple(kernels)


def spec_body(line: str) -> str | None:
    """The text after the marker if ``line`` is a spec comment, else None."""
    m = re.match(r"\s*#\s*nki-studio\s*:\s*simulate\b", line)
    return line[m.end() :] if m else None


# ----------------------------------------------------------------------------------- validation / merge


def _check_args(kernel: KernelInfo, fields: Mapping[str, Any]) -> list[tuple[str | None, str]]:
    """Problems of argument keys against the kernel signature: (offending key or None, message)."""
    problems: list[tuple[str | None, str]] = []
    for key in fields:
        if key not in RESERVED and key not in kernel.params:
            problems.append(
                (
                    key,
                    f"kernel {kernel.name} has no parameter {key!r} "
                    f"(parameters: {', '.join(kernel.params) or 'none'})",
                )
            )
    if "seed" in fields and fields["seed"] is None and "seed" not in kernel.params:
        problems.append(("seed", f"seed=none is for a kernel's seed parameter; {kernel.name} has none"))
    if "inputs" not in fields:
        missing = [p for p in kernel.required if p not in fields]
        if missing:
            problems.append(
                (
                    None,
                    f"no value for parameter(s) {', '.join(missing)} of {kernel.name}; give each as name=dtype[shape] "
                    "or name=number (or inputs=function) in a spec comment on the line directly above the "
                    f"kernel's decorator, e.g. `{example_comment(kernel, fields)}`, or under "
                    f"[tool.{TOOL_TABLE}.simulate] in pyproject.toml",
                )
            )
    return problems


# A placeholder the user edits: one full partition dimension by a free dimension.
EXAMPLE_TENSOR = TensorSpec(INFERRED_DEFAULT_DTYPE, (128, 512))


def example_comment(kernel: KernelInfo, fields: Mapping[str, Any]) -> str:
    """A spec comment for ``kernel``: the arguments already given, then a placeholder tensor for each required
    parameter still missing (the shape and dtype are an example to edit)."""
    given = [f"{k}={_format_value(v)}" for k, v in fields.items() if k in kernel.params]
    missing = [f"{p}={EXAMPLE_TENSOR}" for p in kernel.required if p not in fields]
    return f"# {SPEC_MARKER} " + " ".join(given + missing)


def comment_findings(source: str, path: str, *, typing: bool = False) -> list[Finding]:
    """NKI601 findings for every malformed or misplaced spec comment in ``source``. ``typing``: the text is
    being edited, so a value that fails to parse at the very end of a comment is taken as still being typed
    (``a=bfloat16[128,``) and not reported; it is reported once the text is saved or opened."""
    kernels = {k.spec_line: k for k in find_kernels(source, path) if k.spec_line is not None}
    findings: list[Finding] = []
    for lineno, line in enumerate(source.splitlines(), start=1):
        body = spec_body(line)
        if body is None:
            continue
        offset = len(line) - len(body)  # 0-based column where the body starts
        whole = Span(lineno, len(line) - len(line.lstrip()) + 1, lineno, len(line) + 1)
        kernel = kernels.get(lineno)
        if kernel is None:
            findings.append(
                _finding(
                    path,
                    whole,
                    "simulate spec is not directly above a kernel's decorator "
                    "(an @nki.jit function); it is ignored",
                )
            )
            continue
        fields, errors = parse_fields(body)
        typed = [e for e in errors if not typing or e.end < len(body.rstrip())]
        for err in typed:
            findings.append(
                _finding(path, Span(lineno, offset + err.start + 1, lineno, offset + err.end + 1), str(err))
            )
        for key, message in _check_args(kernel, fields):
            if key is None and errors:  # a value that failed to parse is not also "missing"
                continue
            span = whole
            if key is not None:
                m = re.search(rf"\b{re.escape(key)}\s*=", body)
                if m:
                    span = Span(lineno, offset + m.start() + 1, lineno, offset + m.end() + 1)
            findings.append(_finding(path, span, message))
    return findings


def _finding(path: str, span: Span, message: str) -> Finding:
    return MALFORMED_SPEC.finding(path, span, f"malformed simulate spec: {message}")


# ------------------------------------------------------------------------------------------- pyproject


def pyproject_fields(pyproject: Path, kernel_path: str | Path, kernel: str) -> dict[str, Any]:
    """Fields for ``kernel`` from ``[tool.nki-studio.simulate]``: key ``"rel/path.py::kernel"`` or ``"kernel"``.

    A value is either a spec string (the comment grammar) or a table of the same keys. Raises SpecError.
    """
    try:
        data = read_pyproject(str(pyproject))
    except PyprojectError as exc:
        raise SpecError(f"{pyproject}: cannot read: {exc.reason}") from None
    table = data.get("tool", {}).get(TOOL_TABLE, {}).get("simulate", {})
    if not isinstance(table, dict):
        return {}
    try:
        rel = Path(kernel_path).resolve().relative_to(pyproject.parent).as_posix()
    except ValueError:
        rel = Path(kernel_path).name
    entry = table.get(f"{rel}::{kernel}", table.get(kernel))
    if entry is None:
        return {}
    if isinstance(entry, str):
        text = entry
    elif isinstance(entry, dict):
        text = " ".join(f"{k}={_format_value(v) if not isinstance(v, str) else v}" for k, v in entry.items())
    else:
        raise SpecError(f"{pyproject}: [tool.nki-studio.simulate] {kernel!r} must be a string or a table")
    fields, errors = parse_fields(text)
    if errors:
        raise SpecError(f"{pyproject}: [tool.nki-studio.simulate] {kernel!r}: " + "; ".join(map(str, errors)))
    return fields


# ------------------------------------------------------------------------------------------ resolution


@dataclass
class Resolution:
    """The outcome of :func:`resolve`: a spec, or the reasons there is none."""

    spec: SimSpec | None
    problems: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # NKI601 on the comment


def build_spec(kernel: KernelInfo, layers: list[tuple[str, Mapping[str, Any]]]) -> SimSpec:
    """Merge field layers (highest precedence first) into a spec; arguments keep the kernel's order."""
    merged: dict[str, Any] = {}
    origin: list[str] = []
    for name, fields in layers:
        used = False
        for key, value in fields.items():
            if key not in merged:
                merged[key] = value
                used = True
        if used:
            origin.append(name)
    args = tuple((p, merged[p]) for p in kernel.params if p in merged)
    return SimSpec(
        kernel=kernel.name,
        args=args,
        reference=merged.get("reference"),
        inputs=merged.get("inputs"),
        seed=int(merged.get("seed") or 0),  # seed=none is the kernel's: the inputs then draw with seed 0
        lnc=int(merged.get("lnc", 1)),
        ranks=int(merged.get("ranks", 1)),
        atol=merged.get("atol"),
        rtol=merged.get("rtol"),
        origin=tuple(origin),
    )


def resolve(
    source: str,
    path: str,
    kernel_name: str | None = None,
    *,
    override: Mapping[str, Any] | None = None,
    inferred: Mapping[str, Any] | None = None,
    use_pyproject: bool = True,
    infer: bool = True,
) -> Resolution:
    """The spec to run ``kernel_name`` (default: the only, or the first spec'd, kernel) of ``source`` with.

    ``override`` (CLI ``--inputs``/``--reference``) beats everything; ``inferred`` fields default to what the
    value interpreter derives (:func:`inferred_fields`) when ``infer`` is true.
    """
    kernels = find_kernels(source, path)
    if not kernels:
        return Resolution(None, [f"{path}: no @nki.jit kernel found (or the file does not parse)"])
    if kernel_name is None:
        with_spec = [k for k in kernels if k.spec_line is not None]
        kernel = with_spec[0] if with_spec else kernels[0]
    else:
        matches = [k for k in kernels if k.name == kernel_name]
        if not matches:
            names = ", ".join(k.name for k in kernels)
            return Resolution(None, [f"{path}: no kernel named {kernel_name!r} (kernels: {names})"])
        kernel = matches[0]
    findings = [f for f in comment_findings(source, path) if kernel.spec_line == f.span.line]
    layers: list[tuple[str, Mapping[str, Any]]] = []
    if override:
        layers.append(("command line", override))
    if kernel.spec_text is not None:
        body = spec_body(kernel.spec_text) or ""
        comment, errors = parse_fields(body)
        if errors:
            return Resolution(None, [str(e) for e in errors], findings)
        layers.append(("comment", comment))
    if inferred is None and infer:
        inferred = inferred_fields(source, path, kernel.name)
    if inferred:
        layers.append(("inferred", inferred))
    problems: list[str] = []
    if use_pyproject:
        pyproject = find_pyproject(path)
        if pyproject is not None:
            try:
                layers.append(("pyproject", pyproject_fields(Path(pyproject), path, kernel.name)))
            except SpecError as exc:
                problems.append(str(exc))
    spec = build_spec(kernel, layers)
    merged: dict[str, Any] = dict(spec.args)
    if spec.inputs:
        merged["inputs"] = spec.inputs
    if next((fields["seed"] for _, fields in layers if "seed" in fields), 0) is None:
        merged["seed"] = None  # checked against the kernel's parameters
    arg_problems = [m for _, m in _check_args(kernel, merged)]
    if problems or arg_problems:
        return Resolution(None, problems + arg_problems, findings)
    return Resolution(spec, [], findings)


def inferred_fields(source: str, path: str, kernel: str) -> dict[str, Any]:
    """Tensor arguments the value interpreter pins down (shape from asserts/unpacking; dtype when asserted,
    else float32 -- an assumption, named in the "Add simulate spec" action). {} when it derives nothing."""
    from nki_studio.model.analysis import infer_kernel_inputs

    try:
        raw = infer_kernel_inputs(source, path, kernel)
    except Exception:  # half-typed code or an analysis bug: inference is best effort, never fatal
        return {}
    fields: dict[str, Any] = {}
    for name, found in raw.items():
        if found is None:
            continue
        dims, dtype = found
        try:
            fields[name] = TensorSpec(parse_dtype(dtype) if dtype else INFERRED_DEFAULT_DTYPE, tuple(dims))
        except SpecError:
            continue
    return fields


def spec_arguments(
    source: str, path: str
) -> dict[str, dict[str, tuple[tuple[int, ...], str] | int | float | bool]]:
    """What the specs (comment and pyproject, not inference) say of each spec'd kernel's arguments: a tensor's
    (shape, dtype), or a number or true/false (not a tuple, none or an instance); for the features that size allocations from them (hover, lint). {} without
    specs, and a malformed spec just gives none. Cheap when the file has no spec comment and its pyproject no
    ``[tool.nki-studio.simulate]`` table (lint asks on every edit)."""
    if not _may_have_specs(source, path):
        return {}
    out: dict[str, dict[str, tuple[tuple[int, ...], str] | int | float | bool]] = {}
    for kernel in find_kernels(source, path):
        try:
            spec = resolve(source, path, kernel.name, infer=False).spec
        except (SpecError, ValueError, OSError):
            continue
        if spec is None or not spec.args:
            continue
        out[
            kernel.name
        ] = {  # a tuple value (a shape argument) is left out: its readers take it for a tensor's
            name: (value.shape, value.dtype) if isinstance(value, TensorSpec) else value
            for name, value in spec.args
            if isinstance(value, (TensorSpec, int, float))  # bool is an int
        }
    return out


def _may_have_specs(source: str, path: str) -> bool:
    if re.search(r"#\s*nki-studio\s*:\s*simulate\b", source):
        return True
    pyproject = find_pyproject(path)
    if pyproject is None:
        return False
    try:
        data = read_pyproject(pyproject)
    except PyprojectError:
        return False
    return bool(data.get("tool", {}).get(TOOL_TABLE, {}).get("simulate"))
