"""``nki-studio simulate --analyze``: the bounds and investigations of the simulation's *estimated* profile.

The worker writes the instruction trace (to ``--trace`` or a temporary file); this reads it back, schedules it
(``estimate.profile.estimate_profile``) and analyses the estimate exactly as a measured profile
(``profile.analyze.analyze_profile``). Every heading says "estimated".
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nki_studio.estimate.profile import estimate_profile
from nki_studio.model.targets import Target, parse_generation
from nki_studio.profile.analyze import ProfileReport, analyze_profile
from nki_studio.profile.model import Codes, Profile
from nki_studio.sim.trace import read_jsonl


def temporary_trace() -> str:
    """A fresh path for the worker's trace when ``--trace`` was not given (the caller removes it)."""
    fd, path = tempfile.mkstemp(prefix="nki-studio-trace-", suffix=".jsonl")
    os.close(fd)
    return path


_ARG = re.compile(r"^(?P<tag>.*?)arg(?P<i>\d+)$")


def with_argument_names(profile: Profile, names: Sequence[str]) -> Profile:
    """The profile with the simulator's positional tensor names (``arg0``, ``r1.arg0``) replaced by the kernel's
    parameter names, so findings say "input `b`"."""

    def rename(value: str) -> str:
        m = _ARG.match(value)
        i = int(m.group("i")) if m else -1
        return f"{m.group('tag')}{names[i]}" if m and i < len(names) else value

    dma = profile.dma
    tensors = [dataclasses.replace(t, name=rename(t.name)) for t in profile.tensors]
    renamed = Codes(tuple(rename(v) for v in dma.tensor.values), dma.tensor.codes)
    return dataclasses.replace(profile, tensors=tensors, dma=dataclasses.replace(dma, tensor=renamed))


def analyze_trace(
    trace_path: str, kernel_file: str, target: str, arg_names: Sequence[str] = ()
) -> ProfileReport | None:
    """The analysed estimated profile of a trace file; None when the run left no trace (it failed early).
    ``arg_names``: the kernel's parameters in call order (for tensor names)."""
    try:
        with open(trace_path, encoding="utf-8") as fh:
            events = list(read_jsonl(fh))
    except OSError:
        return None
    if not events:
        return None
    profile = estimate_profile(events, Target(parse_generation(target)), path=f"estimate of {kernel_file}")
    profile = with_argument_names(profile, arg_names)
    return analyze_profile(profile, explicit=[Path(kernel_file).resolve()])


def analysis_text(report: ProfileReport | None) -> str:
    """The text block printed after the simulation report."""
    from nki_studio.profile.bounds_text import bounds_text, investigations_text

    if report is None:
        return "Analysis: no instruction trace (the kernel did not run), so there is nothing to estimate."
    return "\n".join(
        [
            "Estimated profile (nki-studio scheduler, not a measurement):",
            *bounds_text(report.bounds),
            "",
            *investigations_text(report),
        ]
    )


def analysis_json(report: ProfileReport | None) -> dict[str, Any] | None:
    """The ``analysis`` object added to ``--json`` output (null when there was no trace)."""
    return None if report is None else {"provenance": "estimated", **report.analysis()}
