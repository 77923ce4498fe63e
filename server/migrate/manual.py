"""Legacy constructs the rewrite does not migrate, each with its manual recipe (deprecations.md §C-E)."""

from __future__ import annotations

import ast

from nki_studio.migrate import (
    affine_values,
    allocation,
    isa_operands,
    isa_results,
    loop_directives,
    loop_reductions,
    masked_values,
    matmul_accumulate,
    reductions,
    scalar_masks,
    spmd_grids,
)
from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions
from nki_studio.model.nki_api import ISA_VALUE_RESULTS

_LANGUAGE_RECIPES = {
    "static_cast": "nisa.tensor_copy into a tile of the target dtype, or nl.copy(x, dtype=...)",
    "loop_reduce": "nisa.tensor_tensor(dst=acc, data1=acc, data2=x, op=op) inside the loop",
    "atomic_rmw": "nisa.dma_compute scatter with reduce_op",
    "all_reduce": "nki.collectives.all_reduce",
    "spmd_dim": "SPMD grids take one LNC degree in 0.7: launch kernel[2] (or set NEURON_LOGICAL_NC_CONFIG) and "
    "loop over the rest of the grid in Python",
    "nc": "SPMD grids take one LNC degree in 0.7: launch kernel[2] (or set NEURON_LOGICAL_NC_CONFIG)",
    "gemm_grid": "no replacement: write the tiling loops",
    "gemm_stationary_grid": "no replacement: write the tiling loops",
}
# 0.7's launch bracket is one LNC degree, its grid one axis (nki-0.7.md §2.5 on kernel[k]): a kernel reading a
# later axis of a multi-dimensional legacy grid has no bracket form; spmd_grids loops over the grid in the kernel
# when the file's launches say its extents, the rest is listed.
_GRID_AXES = frozenset({"program_id", "num_programs"})
_GRID_AXIS = (
    "NKI 0.7 launches have one grid axis (the LNC degree): loop over the grid in the kernel (for pid_1 in "
    "range(n): ..., program_id(1) -> pid_1, the extents as parameters; migrate does it unless a helper others "
    "call too reads the grid, the kernel returns a per-program value or the file uses it other than by launching "
    "it), or take the grid point as kernel arguments and launch once per point in a Python loop"
)
_VALUE_RETURNING = (
    "value-returning ISA calls were removed in 0.2: allocate the result (t = nl.ndarray(shape, dtype, "
    "buffer=nl.sbuf)) and pass it as dst= (nisa.{name}(dst=t, ...))"
)

_DIRECT_ALLOCATION = (
    "direct allocation: nl.ndarray(..., address=(partition_offset, byte_offset)), or let the compiler allocate "
    "(drop it)"
)


def run(src: Source) -> PassResult:
    """List every construct left for the user (no edits)."""
    masked = frozenset(masked_values.rewritten(src))
    out = PassResult(manual=[*scalar_masks.listed(src, masked), *reductions.listed(src)])
    used_values = (
        _used_values(src.tree)
        - isa_results.rewritten_calls(src)
        - isa_operands.rewritten_calls(src)
        - matmul_accumulate.rewritten_calls(src)
        - affine_values.rewritten_calls(src)
    )
    compiler_rewritten = allocation.rewritten_calls(src) | loop_directives.rewritten_calls(src)
    grids = spmd_grids.rewritten_calls(src)
    reduced = loop_reductions.rewritten_calls(src)
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Call):
            name = src.canonical(node.func) or ""
            module, _, leaf = name.rpartition(".")
            if module == LANGUAGE and leaf in _GRID_AXES and _later_axis(node) and id(node) not in grids:
                out.manual.append(ManualStep(node.lineno, f"nl.{leaf} axis > 0", _GRID_AXIS))
            elif module == LANGUAGE and leaf in _LANGUAGE_RECIPES and id(node) not in reduced:
                out.manual.append(ManualStep(node.lineno, f"nl.{leaf}", _LANGUAGE_RECIPES[leaf]))
            elif (
                module == ISA
                and id(node) in used_values
                and leaf not in ISA_VALUE_RESULTS
                and not any(k.arg == "dst" for k in node.keywords)
            ):
                out.manual.append(
                    ManualStep(node.lineno, f"nisa.{leaf} value", _VALUE_RETURNING.format(name=leaf))
                )
            elif name.startswith("nki.compiler.") and id(node) not in compiler_rewritten:
                out.manual.append(ManualStep(node.lineno, leaf, _DIRECT_ALLOCATION))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Tuple)
            and _launches(src, node)
            and id(node) not in grids
        ):
            out.manual.append(
                ManualStep(
                    node.lineno,
                    "SPMD grid",
                    f"`{src.text_of(node)}`: the bracket takes one LNC degree in 0.7: launch once per grid point "
                    "in a Python loop (passing the point as arguments) or use kernel[2] with nl.program_id(0)",
                )
            )
    return out


def _later_axis(call: ast.Call) -> bool:
    """``nl.program_id(1)``, ``nl.num_programs(axes=2)``: a literal launch-grid axis after the first."""
    axis = (
        call.args[0]
        if call.args
        else next((k.value for k in call.keywords if k.arg in ("axis", "axes")), None)
    )
    return isinstance(axis, ast.Constant) and isinstance(axis.value, int) and axis.value > 0


def _used_values(tree: ast.AST) -> set[int]:
    """Calls whose value is used (not expression statements)."""
    statements = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    return {id(n) for n in ast.walk(tree) if isinstance(n, ast.Call) and id(n) not in statements}


def _launches(src: Source, node: ast.Subscript) -> bool:
    """``kernel[a, b]`` where ``kernel`` is a function of this file decorated as a kernel (not a local tile of
    the same name, ``dropout_p_local[:, 0]`` in a function binding ``dropout_p_local``)."""
    if not isinstance(node.value, ast.Name):
        return False
    kernels = {f.name for f in src.tree.body if isinstance(f, ast.FunctionDef) and f.decorator_list}
    name = node.value.id
    shadowed = any(
        any(n is node for n in ast.walk(f))
        and any(
            (isinstance(b, ast.arg) and b.arg == name)
            or (isinstance(b, ast.Name) and b.id == name and not isinstance(b.ctx, ast.Load))
            for b in ast.walk(f)
        )
        for f in functions(src.tree)
    )
    return name in kernels and not shadowed
