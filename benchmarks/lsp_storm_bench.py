"""Language-server responsiveness during an edit storm, and memory given back when the documents close.

Drives the real ``nki-studio serve`` process over stdio with raw JSON-RPC (``StormClient``, also used by
tests/lsp/test_lsp_storm.py): opens ``--docs`` generated kernel modules, then for ``--seconds`` sends
``--rate`` edits per second spread round-robin over them (typing inside a kernel body, so every edit costs a
real re-lint after the debounce) while one request at a time alternates hover and code action on random
documents. Prints, per request kind, p50/p95/max latency (send to response, measured in this client), and the
server's resident memory before the documents open, at the end of the storm and after they all closed.

Targets (issue 16): hover and code action p95 <= 150 ms, max <= 500 ms; memory after close within 10 MiB of
before. Figures depend heavily on what else the machine runs (the client shares it too).

Run: ``.venv/bin/python benchmarks/lsp_storm_bench.py [--docs 50] [--rate 100] [--seconds 20]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

import psutil
from targets import goal

_HEADER = '''"""Generated storm document {n}."""

import nki
import nki.isa as nisa
import nki.language as nl

TILE = 128
WIDTH = 512
'''

_KERNEL = """

@nki.jit
def kernel_{i}(a, b):
    out = nl.ndarray((TILE, WIDTH), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        # storm 0
        ta = nl.ndarray((TILE, WIDTH), dtype=a.dtype, buffer=nl.sbuf)
        tb = nl.ndarray((TILE, WIDTH), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ta, src=a[i * TILE:(i + 1) * TILE, 0:WIDTH])
        nisa.dma_copy(dst=tb, src=b[i * TILE:(i + 1) * TILE, 0:WIDTH])
        s = nl.ndarray((256, WIDTH), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=s, data1=ta, data2=tb, op=nl.add)
        for j in nl.affine_range(2):
            nisa.dma_copy(dst=out, src=s)
    return out
"""


def document(n: int, kernels: int = 8) -> str:
    """A module of ``kernels`` kernels; each has a ``# storm`` comment line edits rewrite, and an NKI301
    (256 partitions) so code actions have diagnostics to act on."""
    return _HEADER.format(n=n) + "".join(_KERNEL.format(i=i) for i in range(kernels))


def storm_lines(text: str) -> list[int]:
    """0-based line numbers of the ``# storm`` comments."""
    return [i for i, line in enumerate(text.split("\n")) if line.strip().startswith("# storm")]


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class StormClient:
    """A minimal LSP client over the server's stdio: requests with latency, notifications, diagnostics."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self._lock = threading.Lock()
        self._next_id = 0
        self._pending: dict[int, tuple[threading.Event, list[Any]]] = {}
        self.diagnostics: dict[str, tuple[int | None, list[dict[str, Any]]]] = {}  # uri -> (version, list)
        self.logs: list[tuple[int, str]] = []  # window/logMessage (type, message)
        self.closed = threading.Event()
        threading.Thread(target=self._read, name="storm-reader", daemon=True).start()

    # ---- wire ------------------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin: IO[bytes] | None = self.proc.stdin
        assert stdin is not None
        with self._lock:
            stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            stdin.flush()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while True:
                length = 0
                while (line := stream.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if not line:
                    return
                self._dispatch(json.loads(stream.read(length)))
        finally:
            self.closed.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" not in message:  # a response
            waiter = self._pending.pop(int(message["id"]), None)
            if waiter is not None:
                waiter[1].append(message)
                waiter[0].set()
            return
        method = message.get("method")
        if "id" in message:  # a request from the server: registrations, progress tokens
            self._send({"id": message["id"], "result": None})
        elif method == "textDocument/publishDiagnostics":
            params = message["params"]
            self.diagnostics[params["uri"]] = (params.get("version"), params["diagnostics"])
        elif method == "window/logMessage":
            self.logs.append((message["params"]["type"], message["params"]["message"]))

    # ---- API -------------------------------------------------------------------------------------------
    def request(self, method: str, params: Any, timeout: float = 60.0) -> tuple[dict[str, Any], float]:
        """Send a request, wait for its response; returns (response, seconds)."""
        with self._lock:
            self._next_id += 1
            rid = self._next_id
        event, box = threading.Event(), []  # type: ignore[var-annotated]
        self._pending[rid] = (event, box)
        started = time.perf_counter()
        self._send({"id": rid, "method": method, "params": params})
        if not event.wait(timeout):
            raise TimeoutError(f"{method}: no response within {timeout} s")
        return box[0], time.perf_counter() - started

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._send({"method": method, "params": params})

    def initialize(self, root: str, options: dict[str, Any]) -> None:
        """initialize + initialized."""
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": Path(root).as_uri(),
                "capabilities": {
                    "textDocument": {
                        "hover": {"contentFormat": ["markdown"]},
                        "codeAction": {},
                        "publishDiagnostics": {"versionSupport": True},
                    }
                },
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})

    def open(self, uri: str, text: str) -> None:
        """didOpen, version 1."""
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )

    def change_line(self, uri: str, version: int, line: int, old_len: int, new_text: str) -> None:
        """didChange replacing line ``line`` (``old_len`` characters) with ``new_text``."""
        edit = {
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": old_len}},
            "text": new_text,
        }
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]},
        )

    def close(self, uri: str) -> None:
        """didClose."""
        self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def wait_diagnostics(self, uris: list[str], timeout: float = 120.0) -> bool:
        """Whether every uri got a publish within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(u in self.diagnostics for u in uris):
                return True
            time.sleep(0.02)
        return False

    def rss(self) -> int:
        """The resident set size in bytes of the server and every process it started (its lint worker)."""
        server = psutil.Process(self.proc.pid)
        total = 0
        for proc in [server, *server.children(recursive=True)]:
            try:
                total += int(proc.memory_info().rss)
            except psutil.Error:  # ended meanwhile
                pass
        return total

    def children(self) -> list[psutil.Process]:
        """The server's running child processes (its lint worker)."""
        try:
            return [
                c
                for c in psutil.Process(self.proc.pid).children(recursive=True)
                if c.status() != psutil.STATUS_ZOMBIE
            ]
        except psutil.Error:
            return []

    def shutdown(self) -> None:
        """shutdown + exit, then wait for the process."""
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (TimeoutError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


class Storm:
    """The documents of a storm and their edit state."""

    def __init__(self, client: StormClient, folder: Path, docs: int) -> None:
        self.client = client
        self.uris: list[str] = []
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.edited: dict[str, list[tuple[int, str]]] = {}  # uri -> [(line, current text)]
        for n in range(docs):
            path = folder / f"storm_{n}.py"
            text = document(n)
            path.write_text(text)
            uri = path.as_uri()
            self.uris.append(uri)
            self.texts[uri] = text

    def open_all(self) -> None:
        """didOpen every document with its text as written (the edits of an earlier cycle start over)."""
        for uri in self.uris:
            text = self.texts[uri]
            self.versions[uri] = 1
            lines = text.split("\n")
            self.edited[uri] = [(i, lines[i]) for i in storm_lines(text)]
            self.client.open(uri, text)

    def edit(self, n: int) -> None:
        """The n-th edit of the storm: rewrite one ``# storm`` comment of one document (round-robin)."""
        uri = self.uris[n % len(self.uris)]
        slots = self.edited[uri]
        k = (n // len(self.uris)) % len(slots)
        line, old = slots[k]
        new = f"        # storm {n}"
        self.versions[uri] += 1
        self.client.change_line(uri, self.versions[uri], line, len(old), new)
        slots[k] = (line, new)

    def hover_params(self, rng: random.Random) -> dict[str, Any]:
        """A hover on ``nl.ndarray`` in a random document."""
        uri = rng.choice(self.uris)
        line = next(i for i, t in enumerate(self.texts[uri].split("\n")) if "nl.ndarray((TILE" in t)
        character = self.texts[uri].split("\n")[line].index("ndarray") + 2
        return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}

    def code_action_params(self, rng: random.Random) -> dict[str, Any]:
        """A code action on the line of a diagnostic (the last ones published) of a random document."""
        uri = rng.choice(self.uris)
        _, diagnostics = self.client.diagnostics.get(uri, (None, []))
        diagnostic = diagnostics[0] if diagnostics else None
        line = diagnostic["range"]["start"]["line"] if diagnostic else 0
        return {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
            "context": {"diagnostics": [diagnostic] if diagnostic else []},
        }


def run_storm(
    client: StormClient, storm: Storm, seconds: float, rate: float, seed: int = 0
) -> tuple[dict[str, list[float]], list[str], int]:
    """Edits at ``rate``/s for ``seconds`` while one request at a time alternates hover and code action.
    Returns latencies per kind, error responses and the number of edits sent."""
    rng = random.Random(seed)
    stop = threading.Event()
    sent = [0]

    def edits() -> None:
        start = time.perf_counter()
        while not stop.is_set():
            due = start + sent[0] / rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            storm.edit(sent[0])
            sent[0] += 1

    editor = threading.Thread(target=edits, name="storm-edits", daemon=True)
    latencies: dict[str, list[float]] = {"hover": [], "codeAction": []}
    errors: list[str] = []
    editor.start()
    deadline = time.perf_counter() + seconds
    turn = 0
    while time.perf_counter() < deadline:
        kind = "hover" if turn % 2 == 0 else "codeAction"
        params = storm.hover_params(rng) if kind == "hover" else storm.code_action_params(rng)
        response, took = client.request(f"textDocument/{kind}", params)
        if "error" in response:
            errors.append(f"{kind}: {response['error'].get('message')}")
        latencies[kind].append(took)
        turn += 1
        time.sleep(0.02)  # a user's requests come a little apart
    stop.set()
    editor.join()
    return latencies, errors, sent[0]


def start_server(
    folder: Path,
    options: dict[str, Any] | None = None,
    allocator: str | None = None,
    lint_process: bool = True,
) -> StormClient:
    """The real server, initialised on ``folder`` (its user cache inside the folder); ``allocator``: the
    server's ``PYTHONMALLOC`` (``malloc`` lets freed memory go back to the system; see lsp/memory.py);
    ``lint_process``: lint in the worker process (the default) or in the server's threads."""
    env = dict(
        os.environ,
        XDG_CACHE_HOME=str(folder / "cache"),
        NKI_STUDIO_FASTPATH="0",
        NKI_STUDIO_LINT_PROCESS="1" if lint_process else "0",
    )
    if allocator:
        env["PYTHONMALLOC"] = allocator
    client = StormClient([sys.executable, "-m", "nki_studio", "serve"], env)
    client.initialize(str(folder), {"trustedWorkspace": False, **(options or {})})
    return client


def measure(
    docs: int,
    rate: float,
    seconds: float,
    options: dict[str, Any],
    allocator: str | None,
    lint_process: bool,
    cycles: int = 1,
) -> dict[str, Any]:
    """``cycles`` storms on one fresh server (open all, storm, close all): latencies per kind (the first storm),
    memory before/peak/after the first close (bytes), after each close, and counts. More than one cycle tells
    a one-time fill of caches (later cycles add nothing) from growth."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        client = start_server(folder, options, allocator, lint_process)
        storm = Storm(client, folder, docs)
        # Warm-up outside the figures: jedi, the linter and the first hover's imports stay loaded for good.
        warm = storm.uris[0]
        client.open(warm, storm.texts[warm])
        client.wait_diagnostics([warm])
        client.request(
            "textDocument/hover", storm.hover_params(random.Random(1)) | {"textDocument": {"uri": warm}}
        )
        client.request(
            "textDocument/codeAction",
            storm.code_action_params(random.Random(1)) | {"textDocument": {"uri": warm}},
        )
        client.close(warm)
        client.diagnostics.clear()
        time.sleep(4)  # the server releases memory 2 s after the last close (and ends its lint worker)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and client.children():
            time.sleep(0.2)
        before = client.rss()
        afters: list[int] = []
        for cycle in range(cycles):
            t0 = time.perf_counter()
            storm.open_all()
            client.wait_diagnostics(storm.uris)
            if cycle == 0:
                opened = time.perf_counter() - t0
            server = psutil.Process(client.proc.pid)
            cpu0 = sum(server.cpu_times()[:2])
            figures = run_storm(client, storm, seconds, rate)
            if cycle == 0:
                latencies, errors, edits = figures
                server_cpu = sum(server.cpu_times()[:2]) - cpu0  # the server process alone, not its worker
                peak = client.rss()
            for uri in storm.uris:
                client.close(uri)
            client.diagnostics.clear()
            time.sleep(5)  # the server releases memory 2 s after the last close, and ends its lint worker
            deadline = time.monotonic() + 20  # a loaded machine may take longer
            while time.monotonic() < deadline and client.children():
                time.sleep(0.2)
            afters.append(client.rss())
        after = afters[0]
        cancelled_errors = [m for kind, m in client.logs if kind == 1 and "JobCancelled" in m]
        client.shutdown()
    return {
        "latencies": latencies,
        "errors": errors,
        "edits": edits,
        "opened": opened,
        "rss": (before, peak, after),
        "after_each": afters,
        "cancelled_errors": cancelled_errors,
        "server_cpu": server_cpu / seconds,
    }


def report(name: str, m: dict[str, Any], docs: int, seconds: float) -> dict[str, float]:
    """Print one measurement; returns p95/max per kind (ms) and the memory kept (MiB)."""
    mib = 1 << 20
    before, peak, after = m["rss"]
    print(f"--- {name}  (load average {os.getloadavg()[0]:.1f})")
    print(
        f"storm: {docs} documents of {document(0).count(chr(10))} lines, {m['edits']} edits in {seconds:g} s "
        f"({m['edits'] / seconds:.0f}/s); all opened and linted in {m['opened']:.1f} s"
    )
    out: dict[str, float] = {}
    for kind, values in m["latencies"].items():
        ms = [v * 1000 for v in values]
        p95, top = percentile(ms, 0.95), max(ms)
        out[f"{kind} p95"], out[f"{kind} max"] = p95, top
        print(
            f"{kind:>10}: {len(ms)} requests  p50 {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms"
            f"  max {top:6.1f} ms   {goal(p95, 150, 'ms', 'p95')} {goal(top, 500, 'ms', 'max')}"
        )
    print(f"error responses: {len(m['errors'])}  ERROR logs with JobCancelled: {len(m['cancelled_errors'])}")
    print(
        f"RSS (server and its worker): before open {before / mib:.1f} MiB, end of storm {peak / mib:.1f} MiB, "
        f"after close {after / mib:.1f} MiB (after - before {(after - before) / mib:+.1f} MiB) {goal((after - before) / mib, 10, 'MiB')}"
    )
    out["kept MiB"] = (after - before) / mib
    if len(m["after_each"]) > 1:
        kept = ", ".join(f"{(a - before) / mib:+.1f}" for a in m["after_each"])
        print(f"RSS kept after each close, cycle by cycle (MiB vs before open): {kept}")
    # CPU the server process itself used per second of storm: what competes with the requests for its GIL (less
    # disturbed by the machine's load than the latencies).
    print(f"server process CPU during the storm: {m['server_cpu']:.2f} s per second")
    out["server CPU s/s"] = m["server_cpu"]
    return out


def main() -> int:
    """Run the storm and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=50)
    ap.add_argument("--rate", type=float, default=100.0, help="edits per second, over all documents")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument(
        "--allocator",
        choices=["pymalloc", "malloc"],
        default="malloc",
        help="the server's PYTHONMALLOC (default malloc, as the extension starts it)",
    )
    ap.add_argument("--options", default="{}", help="initializationOptions as JSON, e.g. lintDebounceMs")
    ap.add_argument("--in-process", action="store_true", help="lint in the server's threads, not its worker")
    ap.add_argument(
        "--cycles",
        type=int,
        default=1,
        help="open/storm/close cycles on one server (memory after each close)",
    )
    ap.add_argument(
        "--ab",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="compare two configurations (--compare), alternating, ROUNDS each",
    )
    ap.add_argument(
        "--compare",
        choices=["process", "allocator"],
        default="process",
        help="process: lint in the worker vs in the server's threads; allocator: server PYTHONMALLOC malloc vs "
        "pymalloc (lint in the worker)",
    )
    args = ap.parse_args()
    options = json.loads(args.options)
    print(f"server allocator: {args.allocator}; options {args.options}")
    if not args.ab:
        name = "lint in the server's threads" if args.in_process else "lint in the worker process"
        m = measure(
            args.docs, args.rate, args.seconds, options, args.allocator, not args.in_process, args.cycles
        )
        report(name, m, args.docs, args.seconds)
        return 0
    arms: list[tuple[str, str | None, bool]] = (  # (name, server allocator, lint in the worker)
        [("worker", args.allocator, True), ("threads", args.allocator, False)]
        if args.compare == "process"
        else [("malloc", "malloc", True), ("pymalloc", "pymalloc", True)]
    )
    figures: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in arms}
    for _ in range(args.ab):
        for name, allocator, in_worker in arms:
            m = measure(args.docs, args.rate, args.seconds, options, allocator, in_worker)
            figures[name].append(report(name, m, args.docs, args.seconds))
    (a, _, _), (b, _, _) = arms
    print(f"--- A/B summary (medians over rounds; ratio {a} / {b})")
    for metric in figures[a][0]:
        x = statistics.median(f[metric] for f in figures[a])
        y = statistics.median(f[metric] for f in figures[b])
        ratio = f"{x / y:5.2f}" if y else "  n/a"
        print(f"{metric:>16}: {a} {x:8.1f}   {b} {y:8.1f}   ratio {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
