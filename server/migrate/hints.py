"""What ``nki-studio migrate`` does with one legacy ``neuronxcc.nki`` API name, in a line: the rewrite it makes
or the manual recipe it lists. The editor's hover and the agents' API docs show it next to the legacy docs; the
recipes are the passes' own (``manual``, ``block_dims``), so the hint says what the command would do."""

from __future__ import annotations

from nki_studio.migrate import allocation, block_dims, entry_points, isa_results, iterators, limits, manual

_INDEX_TILES = (
    "rewritten: index tiles become slices (t[i_p, i_f] -> t[0:128, 0:512]) and a mask= a bounded slice; a use that "
    "is not a plain offset of one index tile is listed to do by hand"
)
_LANGUAGE = {
    "arange": _INDEX_TILES,
    "mgrid": _INDEX_TILES,
    "par_dim": f"rewritten where every use of the tile is a subscript; otherwise {block_dims.RECIPE}",
    # 0.7 traces kernels with Python, so host code may compute the limits (inferred from nki-0.7.md §1)
    "finfo": "not rewritten: NKI 0.7 has no nl.finfo; use the limits as constants (numpy / ml_dtypes finfo)",
    "fp32": f"rewritten: nl.fp32.min becomes {limits.FP32_MIN} (the lowest FP32 value)",
    **{
        name: f"rewritten to Python's range(...) (nl.{name} is deprecated in 0.7)"
        for name in iterators._STATIC
    },
    **manual._LANGUAGE_RECIPES,
}


def migration_hint(module: str, name: str) -> str | None:
    """The migration of ``name`` of the legacy ``module`` (``""`` for ``neuronxcc.nki`` itself, ``"language"``,
    ``"isa"``, ``"compiler"``); None for a name NKI 0.7 keeps as it is. Every ISA name is taken for its legacy
    value-returning form: ask only for those (an instruction the legacy API shares is called as in 0.7)."""
    if module == "language":
        return _LANGUAGE.get(name)
    if module == "isa":  # the legacy value-returning form of an instruction
        recipe = manual._VALUE_RETURNING.format(name=name)
        if name in isa_results._SIGNATURES:
            return (
                f"rewritten: t = nisa.{name}(...) becomes an allocation of t and nisa.{name}(dst=t, ...); other "
                f"uses of the value: {recipe}"
            )
        return recipe
    if module == "compiler":
        if name in ("sbuf", "psum", "mod_alloc", "auto_alloc", "alloc"):
            return manual._DIRECT_ALLOCATION
        if f"nki.compiler.{name}" in allocation.DIRECTIVES:
            return "dropped: it steers only the legacy compiler, NKI 0.7 has no such directive"
        # the directives (inferred: 0.7's nki.compiler only configures the compiler, with CompileConfig)
        return "not rewritten: NKI 0.7 has no such directive (nki.compiler.CompileConfig configures a kernel); remove it"
    if name == "jit":
        dropped = sorted(entry_points._DROPPED | entry_points._LEGACY_OPTIONS)
        return f"kept; the options 0.7 does not take are dropped ({'=, '.join(dropped)}=)"
    if f"nki.{name}" in entry_points._TO_JIT:
        return "rewritten to nki.jit (run standalone with nki.simulate(kernel)(...) or on a device with NumPy inputs)"
    if name == "simulate_kernel":
        return "rewritten: nki.simulate_kernel(kernel, *args) becomes nki.simulate(kernel)(*args)"
    return None
