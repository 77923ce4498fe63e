"""Language-server first-request and exit benchmark (issue 18): the real ``nki-studio serve`` over stdio,
driven with raw JSON-RPC so the client adds nothing. Prints figures; asserts nothing.

* first NKI keyword-argument completion (inside ``nisa.nc_matmul(``), asked at several delays after the first
  diagnostics: what a user typing right away, or a moment later, waits for (jedi's warm-up runs after the
  first diagnostics);
* exit: time from the ``exit`` notification to the process being gone (target <= 200 ms).

Run: ``.venv/bin/python benchmarks/serve_exit_bench.py [--runs 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from targets import goal

ROOT = Path(__file__).resolve().parents[1]
KERNEL = """import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def k(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(
    return out
"""


class Session:
    """One server process and a blocking JSON-RPC reader."""

    def __init__(self, cache: str) -> None:
        exe = Path(sys.executable).with_name("nki-studio")
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        self.proc = subprocess.Popen(
            [str(exe), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = self.proc.stdout.read(1)
            if not byte:
                raise EOFError("server closed its output")
            header += byte
        length = next(
            int(h.split(b":")[1]) for h in header.split(b"\r\n") if h.lower().startswith(b"content-length")
        )
        return dict(json.loads(self.proc.stdout.read(length)))

    def until(self, pred: Any) -> dict[str, Any]:
        while True:
            msg = self.read()
            if pred(msg):
                return msg


def one_run(delay_s: float, folder: Path, cache: str) -> tuple[float, float]:
    """(first completion ms, exit ms) for one start, the completion asked ``delay_s`` after the first diagnostics."""
    path = folder / "kernel.py"
    path.write_text(KERNEL)
    s = Session(cache)
    s.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}},
        }
    )
    s.until(lambda m: m.get("id") == 1)
    s.send({"method": "initialized", "params": {}})
    doc = {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": KERNEL}
    s.send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
    s.until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    time.sleep(delay_s)
    start = time.perf_counter()
    position = {"line": 8, "character": len("    nisa.nc_matmul(")}
    s.send(
        {
            "id": 2,
            "method": "textDocument/completion",
            "params": {"textDocument": {"uri": doc["uri"]}, "position": position},
        }
    )
    s.until(lambda m: m.get("id") == 2)
    completion_ms = (time.perf_counter() - start) * 1000
    s.send({"id": 3, "method": "shutdown", "params": None})
    s.until(lambda m: m.get("id") == 3)
    start = time.perf_counter()
    s.send({"method": "exit"})
    s.proc.wait(timeout=30)
    return completion_ms, (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "cache")
        one_run(0.0, Path(tmp), cache)  # the first start fills the server's user cache
        exits: list[float] = []
        for delay in (0.0, 1.0, 3.0):
            runs = [one_run(delay, Path(tmp), cache) for _ in range(args.runs)]
            exits += [e for _, e in runs]
            values = sorted(c for c, _ in runs)
            print(
                f"first completion {delay:.0f} s after the first diagnostics: median {statistics.median(values):.0f} ms, max {values[-1]:.0f} ms"
            )
        print(
            f"exit -> process gone: median {statistics.median(exits):.0f} ms, max {max(exits):.0f} ms "
            f"{goal(statistics.median(exits), 200, 'ms', 'median')}"
        )


if __name__ == "__main__":
    main()
