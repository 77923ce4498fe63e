"""A kernel that allocates without bound (runner memory-limit tests)."""
import numpy as np

import nki


# nki-studio: simulate a=float32[128,64]
@nki.jit
def hog(a):
    hoard = []
    while True:
        hoard.append(np.ones(1 << 24))
