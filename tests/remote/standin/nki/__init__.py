"""Stand-in for the compile step on the test "remote" (the Neuron compiler is proprietary and needs Trainium).

``@nki.jit`` returns a callable that, when called with NumPy arrays, "compiles": it checks the environment
the harness must set and writes ``$NKI_ARTIFACTS_DIR/kernel.neff`` — a JSON stand-in NEFF naming the kernel
file and function and recording whether NKI source locations would be embedded (NKI_DEBUG_INFO=True and
NEURON_FRAMEWORK_DEBUG=1). The kernel body is not executed. Only the test's stand-in ``neuron-explorer``
reads that file. ``STANDIN_REJECT=TEXT`` plays a compiler that rejects a variant the simulator accepts: a
kernel file containing TEXT fails to compile.
"""

import inspect
import json
import os

import numpy as np


class _Kernel:
    def __init__(self, fn, lnc=1):
        self.fn, self.lnc = fn, lnc

    def __getitem__(self, grid):
        return _Kernel(self.fn, grid if isinstance(grid, int) else 1)

    def __call__(self, *args):
        out_dir = os.environ.get("NKI_ARTIFACTS_DIR")
        if not out_dir:
            raise RuntimeError("stand-in nki: NKI_ARTIFACTS_DIR not set, the NEFF would be lost")
        kernel_file = os.path.abspath(inspect.getsourcefile(self.fn))
        reject = os.environ.get("STANDIN_REJECT")
        if reject:
            with open(kernel_file, encoding="utf-8") as f:
                if reject in f.read():
                    raise RuntimeError(f"stand-in compiler: {self.fn.__name__}: {reject!r} is rejected")
        params = list(inspect.signature(self.fn).parameters)
        if len(args) != len(params):
            raise TypeError(f"{self.fn.__name__}() takes {len(params)} arguments, got {len(args)}")
        os.makedirs(out_dir, exist_ok=True)
        neff = {
            "standin_neff": 1,
            "kernel_file": kernel_file,
            "kernel": self.fn.__name__,
            # STANDIN_NO_SOURCE=1 plays a compiler that ignored the debug flags (e.g. a reused cached NEFF)
            "debug_info": (
                os.environ.get("NKI_DEBUG_INFO") == "True"
                and os.environ.get("NEURON_FRAMEWORK_DEBUG") == "1"
                and os.environ.get("STANDIN_NO_SOURCE") != "1"
            ),
            "target": os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE"),
            "lnc": self.lnc,
            "args": [[list(a.shape), str(a.dtype)] if isinstance(a, np.ndarray) else repr(a) for a in args],
        }
        with open(os.path.join(out_dir, "kernel.neff"), "w", encoding="utf-8") as f:
            json.dump(neff, f)
        return None


def jit(fn=None, **_options):
    if fn is None:
        return lambda f: _Kernel(f)
    return _Kernel(fn)
