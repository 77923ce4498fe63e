"""Simulating text that is not the saved file (an editor's unsaved buffer, a coding agent's draft).

The worker imports the kernel from a file, the way it would be imported for real, so the text is written to
a staged copy: a file of the same name inside a private temporary folder (``mkdtemp``: mode 0700, removed
afterwards), with the caller's folder on the worker's import path after the staged one, so the kernel's
helper modules and a ``module:function`` reference import as they would next to the real file. The copy is
the text verbatim, so lines and columns are the caller's; every path the result (and the trace) names is
mapped from the copy back to the caller's path.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from nki_studio.sim.packages import package_module
from nki_studio.verify.job import Job

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Staged:
    """A job whose kernel file is a staged copy, and the path the caller knows it by."""

    job: Job
    original: str

    def restore(self, value: T) -> T:
        """``value`` (a result, any JSON) with the staged file's path replaced by the caller's."""
        return _replace(value, self.job.path, self.original)

    def restore_trace(self, trace_path: str | None) -> None:
        """Rewrite the trace file the worker wrote so its source locations name the caller's file."""
        if not trace_path or not os.path.isfile(trace_path):
            return
        with open(trace_path, encoding="utf-8") as fh:
            text = fh.read()
        # Paths appear as JSON strings in the trace lines: replace their escaped forms.
        staged, original = json.dumps(self.job.path)[1:-1], json.dumps(self.original)[1:-1]
        if staged in text:
            with open(trace_path, "w", encoding="utf-8") as fh:
                fh.write(text.replace(staged, original))


@contextmanager
def staged(job: Job, source: str) -> Iterator[Staged]:
    """``job`` with ``source`` standing in for the file at ``job.path`` (which need not exist); the staged
    copy is deleted when the block ends."""
    original = os.path.abspath(job.path)
    folder = tempfile.mkdtemp(prefix="nki-studio-unsaved-")
    try:
        copy = os.path.join(folder, os.path.basename(original) or "untitled.py")
        with open(copy, "w", encoding="utf-8") as fh:
            fh.write(source)
        search = (os.path.dirname(original), *job.search_path)
        # The copy is loaded as the original's module of its package, so its relative imports still work.
        location = package_module(original, job.search_path)
        if location is not None:
            job = dataclasses.replace(job, module_name=location.name, module_root=location.root)
        yield Staged(dataclasses.replace(job, path=copy, search_path=search), original)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _replace(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new) if old in value else value
    if isinstance(value, dict):
        return {k: _replace(v, old, new) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_replace(v, old, new) for v in value)
    return value
