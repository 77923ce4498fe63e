"""Rule modules; each registers its rule(s) with ``nki_studio.nkilint.rule.rule`` when imported.

The code ranges are the families of the code catalogue (``nki_studio.core.codes.FAMILIES``).
"""
