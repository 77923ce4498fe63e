"""Our own legacy kernels under a whole-instruction mask, shared by the rewrite tests (``test_masked_values``) and
the proof tests (``tests/service/test_migration_masked_values``)."""

LEGACY = "import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n"

# The masked sum is stored only where its mask holds, elsewhere the plain tile is (the flash-attention forward's
# ``intermediate = nl.add(..., mask=diagonal)``); the call spans two lines, which the rewrite keeps.
BANDED = """\
@nki.jit
def banded(x, b):
    out = nl.ndarray((4, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    bias = nl.load(b)
    for i in nl.affine_range(4):
        t = nl.load(x[i])
        on = i >= 2
        s = nl.add(t, bias,
                   dtype=nl.float32, mask=on)
        nl.store(out[i], value=t)
        nl.store(out[i], value=s, mask=on)
    return out
"""

BANDED_INPUTS = "x=float32[4,128,64] b=float32[128,64]"
