"""A kernel that prints how its process was started (start-method tests)."""
import sys

import nki
import nki.language as nl


def copy_of(a):
    return a.copy()


# nki-studio: simulate a=float32[128,64] reference=copy_of
@nki.jit
def show_argv(a):
    print("ARGV", " ".join(sys.argv[1:]))
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out
