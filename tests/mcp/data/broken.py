import nki
import nki.language as nl


@nki.jit
def broken(x)
    return x
