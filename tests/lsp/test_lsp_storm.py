"""An edit storm against the real server (smaller than benchmarks/lsp_storm_bench.py, which prints the
latency and memory figures): every hover and code action is answered without error during it, the last
version of every document ends up linted, closing clears the diagnostics, and the server exits cleanly.
Only correctness and liveness are asserted; no timing."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import psutil

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    sys.path.insert(0, str(ROOT / "benchmarks"))  # its sibling modules (targets), as when it runs as a script
    spec = importlib.util.spec_from_file_location(
        "lsp_storm_bench", ROOT / "benchmarks" / "lsp_storm_bench.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_requests_are_answered_and_final_versions_linted_during_an_edit_storm(tmp_path: Path) -> None:
    bench = _bench()
    client = bench.start_server(tmp_path, {"logLevel": "debug"}, allocator="malloc")  # as the extension does
    try:
        storm = bench.Storm(client, tmp_path, 8)
        storm.open_all()
        assert client.wait_diagnostics(storm.uris)
        # The first hover loads jedi and the stubs (seconds on a loaded machine): outside the storm, so that
        # its 3 s see requests of both kinds (this test is about liveness, the benchmark about latency).
        client.request("textDocument/hover", storm.hover_params(bench.random.Random(2)))
        latencies, errors, edits = bench.run_storm(client, storm, seconds=3.0, rate=40.0)
        assert errors == []
        assert latencies["hover"] and latencies["codeAction"] and edits > 20
        # Liveness: every document's last version is linted, with its NKI301 on each kernel's 256-row tile.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(
            client.diagnostics.get(u, (None, []))[0] != storm.versions[u] for u in storm.uris
        ):
            time.sleep(0.05)
        for uri in storm.uris:
            version, diagnostics = client.diagnostics[uri]
            assert version == storm.versions[uri], uri
            assert sum(d.get("code") == "NKI301" for d in diagnostics) == 8
        # The server runs on the C allocator; its lint worker on CPython's default (cli/serve.py).
        (worker,) = psutil.Process(client.proc.pid).children()
        assert psutil.Process(client.proc.pid).environ().get("PYTHONMALLOC") == "malloc"
        assert "PYTHONMALLOC" not in worker.environ()
        response, _ = client.request("textDocument/hover", storm.hover_params(bench.random.Random(3)))
        assert "ndarray" in response["result"]["contents"]["value"]
        for uri in storm.uris:
            client.close(uri)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(client.diagnostics[u][1] for u in storm.uris):
            time.sleep(0.05)
        assert not any(client.diagnostics[u][1] for u in storm.uris)
        # No document open: the lint worker ends, and its memory goes back with it.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and worker.is_running() and worker.status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.05)
        assert not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE
        assert not [m for kind, m in client.logs if kind == 1]  # no ERROR (a JobCancelled traceback, say)
        assert any("cancelled" in m for _, m in client.logs)  # superseded runs were seen, at debug level
    finally:
        client.shutdown()
    assert client.proc.returncode == 0
