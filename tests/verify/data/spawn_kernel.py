"""A kernel that starts a child process and then loops (no orphan after cancel/timeout)."""
import os
import subprocess

import nki


# nki-studio: simulate a=float32[128,64]
@nki.jit
def spawner(a):
    child = subprocess.Popen(["sleep", "300"])
    with open(os.environ["NKI_TEST_CHILD_PID_FILE"], "w") as fh:
        fh.write(str(child.pid))
    while True:
        pass
