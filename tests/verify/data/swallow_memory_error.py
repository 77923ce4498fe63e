"""A kernel that catches MemoryError and keeps allocating (the RSS guard's hard stop)."""
import numpy as np

import nki


# nki-studio: simulate a=float32[128,64]
@nki.jit
def swallow(a):
    hoard = []
    while True:
        try:
            hoard.append(np.ones(1 << 22))
        except MemoryError:
            pass
