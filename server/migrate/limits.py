"""Legacy ``nl.finfo(dtype)`` -> ``np.finfo(dtype)`` (deprecations.md: ``nl.finfo`` has no direct replacement;
``np.finfo(np.float32).min`` is accepted since 0.6.0).

The legacy ``nl.finfo`` gave a float dtype's limits as NumPy's ``finfo`` does [v2.26.1 nki.language.finfo]; 0.7's
dtypes are NumPy dtypes (``nl.bfloat16`` the ml_dtypes one), so ``np.finfo`` of the same dtype gives the same
``min``/``max``/``eps`` (inferred for dtypes other than float32; the proof checks the values the kernel computes).
A file that does not import NumPy keeps the call, listed with the recipe.
"""

from __future__ import annotations

from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import LANGUAGE, Source

RECIPE = "no nl.finfo in 0.7: np.finfo(dtype) (accepted since 0.6.0), or the limit as a literal"


def run(src: Source) -> PassResult:
    """Replace ``nl.finfo`` by ``np.finfo`` where the file imports NumPy; list it elsewhere."""
    out = PassResult()
    np = src.alias_of("numpy", "")
    for call, name in src.calls_to(LANGUAGE):
        if name != "finfo":
            continue
        if np:
            out.change(src.replace(call.func, f"{np}.finfo"), call.lineno, "nl.finfo", f"{np}.finfo")
        else:
            out.manual.append(ManualStep(call.lineno, "nl.finfo", RECIPE))
    return out
