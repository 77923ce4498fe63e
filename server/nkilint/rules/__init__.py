"""Rule modules; each registers its rule(s) with ``nki_studio.nkilint.rule.rule`` when imported.

Code ranges: NKI0xx meta, NKI1xx Python subset, NKI2xx deprecations/legacy, NKI3xx partition dimension,
NKI4xx SBUF/PSUM capacity, NKI5xx ISA operands.
"""
