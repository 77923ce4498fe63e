"""A user's kernels (sample project for tests/testrun): a correct add, a wrong add, and a kernel the
simulator refuses."""

import nki
import nki.language as nl


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.add(nl.load(a), nl.load(b)))
    return out


@nki.jit
def add_wrong(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.subtract(nl.load(a), nl.load(b)))  # bug: subtracts
    return out


@nki.jit
def too_tall(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    tile = nl.load(a)  # SIMULATOR ERROR: 256 partitions do not fit in SBUF's 128
    nl.store(out, tile)
    return out
