"""A kernel that never finishes (runner timeout tests)."""
import nki
import nki.language as nl


# nki-studio: simulate a=float32[128,64]
@nki.jit
def spin(a):
    t = nl.load(a)
    while True:
        pass
    return t
