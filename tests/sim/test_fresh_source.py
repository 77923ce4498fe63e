"""User modules load from their current text, never from a stale ``__pycache__`` entry (``sim.fresh_source``):
CPython takes a .pyc as current when the source's size and whole-second mtime match, so text rewritten within
the same second to the same length would run the old code."""

from __future__ import annotations

import os
import py_compile
import sys
from pathlib import Path

from nki_studio.sim import dropin
from nki_studio.sim.fresh_source import fresh_sources
from nki_studio.verify.job import Job
from nki_studio.verify.runner import WorkerPool, run_job
from nki_studio.verify.spec import resolve

ADD_KERNEL = Path(__file__).resolve().parents[1] / "verify" / "data" / "add_kernel.py"


def stale_bytecode(path: Path, old: str, new: str) -> None:
    """Leave ``path`` holding ``new`` behind a valid-looking .pyc of ``old`` (same size, same mtime)."""
    assert len(old.encode()) == len(new.encode())
    path.write_text(old, encoding="utf-8")
    py_compile.compile(str(path), doraise=True)
    stat = path.stat()
    path.write_text(new, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_kernel_and_its_helper_run_their_current_text(tmp_path: Path) -> None:
    stale_bytecode(tmp_path / "helper_mod.py", "H = 1\n", "H = 2\n")
    stale_bytecode(tmp_path / "kern.py", "import helper_mod\nV = 1\n", "import helper_mod\nV = 2\n")
    module = dropin.load_module(str(tmp_path / "kern.py"))
    assert (module.V, module.helper_mod.H) == (2, 2)


def test_no_bytecode_is_written_next_to_user_files(tmp_path: Path) -> None:
    (tmp_path / "helper_mod.py").write_text("H = 1\n", encoding="utf-8")
    (tmp_path / "kern.py").write_text("import helper_mod\n", encoding="utf-8")
    writes = sys.dont_write_bytecode
    sys.dont_write_bytecode = False  # as in a plain interpreter; CI machines set PYTHONDONTWRITEBYTECODE
    try:
        dropin.load_module(str(tmp_path / "kern.py"))
    finally:
        sys.dont_write_bytecode = writes
    assert not (tmp_path / "__pycache__").exists()


def test_the_import_system_is_as_it_was_after_the_block(tmp_path: Path) -> None:
    hooks = list(sys.path_hooks)
    sys.path.insert(0, str(tmp_path))
    (tmp_path / "fresh_probe_mod.py").write_text("X = 1\n", encoding="utf-8")
    try:
        with fresh_sources():
            import fresh_probe_mod  # noqa: F401

            assert type(sys.path_importer_cache[str(tmp_path)]).__name__ == "_FreshFinder"
        assert sys.path_hooks == hooks
        assert str(tmp_path) not in sys.path_importer_cache
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fresh_probe_mod", None)


def test_the_sandboxed_worker_simulates_the_fixed_kernel_not_the_cached_wrong_one(tmp_path: Path) -> None:
    """The agent's loop: a wrong kernel simulated (its bytecode cached), fixed within the same second to text of
    the same length, simulated again in a warm worker -> the fix's verdict."""
    good = ADD_KERNEL.read_text(encoding="utf-8")
    wrong = good.replace("nl.add(ta, tb)", "nl.add(ta, ta)")
    path = tmp_path / "add_kernel.py"
    stale_bytecode(path, wrong, good)
    spec = resolve(good, str(path), None, use_pyproject=False).spec
    assert spec is not None
    pool = WorkerPool(warm=True)
    try:
        result = run_job(Job(path=str(path), spec=spec.to_json()), pool=pool, timeout_s=60)
    finally:
        pool.close()
    assert result["status"] == "passed", result["message"]
