"""Entry points and decorators (deprecations.md §D): ``nki.baremetal`` / ``benchmark`` / ``profile`` / ``trace``
and torch-neuronx's ``nki_jit`` become ``nki.jit``; ``@nki.jit(mode=...)`` loses its ignored ``mode``;
``nki.simulate_kernel(kernel, *args)`` becomes ``nki.simulate(kernel)(*args)``. ``platform_target=`` is an error
since 0.3 with no in-code replacement (the environment variable ``NEURON_PLATFORM_TARGET_OVERRIDE``): dropped when
it names the generation the file is simulated (and proven) for, which the target configuration then gives; listed
otherwise.
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import Source
from nki_studio.model.targets import Generation, parse_generation

_TO_JIT = frozenset({"nki.baremetal", "nki.benchmark", "nki.profile", "nki.trace", "nki.jit"})
_TORCH_JIT = ("torch_neuronx.nki_jit", "torch_neuronx.xla_impl.ops.nki_jit")
_DROPPED = frozenset({"mode"})  # ignored since 0.3 (deprecations.md §D)
# Options only the legacy entry points knew (compile artefacts, benchmark loops): dropped with the wrapper.
_LEGACY_OPTIONS = frozenset(
    {"save_neff_name", "save_trace_name", "additional_compile_opt", "warmup", "iters", "working_directory",
     "artifacts_dir", "debug_kernel", "show_compiler_tb", "enable_out_of_bound_check", "save_profile_name"}
)  # fmt: skip


def _entry(src: Source, func: ast.expr) -> str | None:
    name = src.aliases.resolve(func)
    if name in _TORCH_JIT:
        return "nki.jit"
    canonical = src.canonical(func)
    return canonical if canonical in _TO_JIT or canonical == "nki.simulate_kernel" else None


def run(src: Source, platform: Generation | None = None) -> PassResult:
    """Rewrite decorators and launch calls (``platform``: the generation the file is simulated for, if known)."""
    out = PassResult()
    nki = src.alias_of("nki", "nki")
    decorators = {id(d) for f in src.nodes if isinstance(f, ast.FunctionDef) for d in f.decorator_list}
    for node in src.nodes:
        if not isinstance(node, ast.Call) and not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        func = node.func if isinstance(node, ast.Call) else node
        entry = _entry(src, func)
        if entry is None or (not isinstance(node, ast.Call) and id(node) not in decorators):
            continue
        if entry == "nki.simulate_kernel" and isinstance(node, ast.Call):
            _simulate_kernel(src, out, node, nki)
            continue
        if isinstance(node, ast.Call):
            _jit_call(src, out, node, nki, entry, platform)
        elif entry != "nki.jit" or src.text_of(node) != f"{nki}.jit":
            out.change(src.replace(node, f"{nki}.jit"), node.lineno, entry, f"{nki}.jit")
    return out


def _jit_call(
    src: Source, out: PassResult, call: ast.Call, nki: str, entry: str, platform: Generation | None
) -> None:
    kept = []
    for k in call.keywords:
        if k.arg == "platform_target" and platform is not None and _names(k.value, platform):
            continue
        if k.arg == "platform_target":
            out.manual.append(
                ManualStep(
                    call.lineno,
                    "platform_target=",
                    "an error since NKI 0.3: remove it and set NEURON_PLATFORM_TARGET_OVERRIDE in the environment",
                )
            )
            return
        if k.arg not in _DROPPED and k.arg not in _LEGACY_OPTIONS:
            kept.append(src.text_of(k))
    if len(kept) == len(call.keywords):  # nothing dropped: only the wrapper's name changes, layout kept
        if entry != "nki.jit":
            out.change(src.replace(call.func, f"{nki}.jit"), call.lineno, entry, f"{nki}.jit")
        return
    args = [src.text_of(a) for a in call.args] + kept
    new = f"{nki}.jit({', '.join(args)})" if args else f"{nki}.jit"
    dropped = [k for k in call.keywords if k.arg == "platform_target"]
    detail = (
        f"{new} (platform_target= dropped: it names {platform.value if platform else ''}, the generation the file "
        "is simulated for; 0.7 takes the target from NEURON_PLATFORM_TARGET_OVERRIDE / the configuration)"
        if dropped
        else new
    )
    out.change(src.replace(call, new), call.lineno, entry, detail)


def _names(value: ast.expr, platform: Generation) -> bool:
    """``value`` is a literal naming ``platform`` (``'trn2'``, ``'gen3'`` ...)."""
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return False
    try:
        return parse_generation(value.value) == platform
    except ValueError:
        return False


def _simulate_kernel(src: Source, out: PassResult, call: ast.Call, nki: str) -> None:
    if not call.args or isinstance(call.args[0], ast.Starred):
        return
    kernel, *rest = call.args
    args = [src.text_of(a) for a in rest] + [src.text_of(k) for k in call.keywords]
    new = f"{nki}.simulate({src.text_of(kernel)})({', '.join(args)})"
    out.change(src.replace(call, new), call.lineno, "nki.simulate_kernel", "nki.simulate(kernel)(...)")
