"""Legacy ``nl.finfo(dtype)`` -> ``np.finfo(dtype)`` (deprecations.md: ``nl.finfo`` has no direct replacement;
``np.finfo(np.float32).min`` is accepted since 0.6.0), and ``nl.fp32.min`` / ``nisa.fp32.min`` -> the literal
``-3.4028235e+38`` (deprecations.md's automatic row: 0.7 has no ``nl.fp32``; the legacy value is the lowest FP32,
bit pattern 0xff7fffff, language.md §2, which the literal rounds to in FP32).

The legacy ``nl.finfo`` gave a float dtype's limits as NumPy's ``finfo`` does [v2.26.1 nki.language.finfo]; 0.7's
dtypes are NumPy dtypes (``nl.bfloat16`` the ml_dtypes one), so ``np.finfo`` of the same dtype gives the same
``min``/``max``/``eps`` (inferred for dtypes other than float32; the proof checks the values the kernel computes).
A file that does not import NumPy keeps the call, listed with the recipe.
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source

RECIPE = "no nl.finfo in 0.7: np.finfo(dtype) (accepted since 0.6.0), or the limit as a literal"
FP32_MIN = "-3.4028235e+38"
_FP32_MIN_NAMES = (f"{LANGUAGE}.fp32.min", f"{ISA}.fp32.min")


def run(src: Source) -> PassResult:
    """Replace ``nl.finfo`` by ``np.finfo`` where the file imports NumPy (list it elsewhere), and ``nl.fp32.min``
    by its value."""
    out = PassResult()
    for node in ast.walk(src.tree):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Attribute) and src.canonical(child) in _FP32_MIN_NAMES:
                # an operand of an operator or an attribute takes the negative literal in parentheses
                bare = not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript))
                value = FP32_MIN if bare else f"({FP32_MIN})"
                out.change(src.replace(child, value), child.lineno, "nl.fp32.min", value)
    np = src.alias_of("numpy", "")
    for call, name in src.calls_to(LANGUAGE):
        if name != "finfo":
            continue
        if np:
            out.change(src.replace(call.func, f"{np}.finfo"), call.lineno, "nl.finfo", f"{np}.finfo")
        else:
            out.manual.append(ManualStep(call.lineno, "nl.finfo", RECIPE))
    return out
