"""A kernel whose helper fails (diagnostic on the kernel line, helper chain as related information)."""
import nki
import nki.language as nl


def scale(t, factor):
    return t * factor[0]  # line 7: factor is an int, not a list


# nki-studio: simulate a=float32[128,64]
@nki.jit
def broken(a):
    t = nl.load(a)
    u = scale(t, 3)  # line 14
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, u)
    return out
