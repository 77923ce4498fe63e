"""Adapter: ``nki_cpu_simulator.nki.compiler.frontend``, a stand-in for the NKI compiler's Python front end
(``nki.compiler.frontend``: ``NKIFrontend``, ``ParserFrontend``, ``TracerFrontend``) that checks a kernel by
running it on the embedded simulator instead of lowering it to MLIR.

Why it exists: nki-library's tests marked ``trace_only`` override ``--test-mode simulation`` (the harness's
``trace_mode`` fixture lets a marker win over the session mode) and go through ``test/utils/kernel_tracer.py``,
which does ``from nki.compiler.frontend import NKIFrontend, ParserFrontend`` after the harness aliased
``nki.compiler`` to the simulator package's ``compiler`` module; Python then looks the submodule up inside that
package (*inferred*: that AWS's package ships one is not published anywhere we could read; this module is what
answers the lookup here). What the harness needs of it, from ``kernel_tracer.trace_kernel`` (snapshot d2ad3a5):

- ``ParserFrontend()`` (an ``NKIFrontend``) and its ``compile(kernel, inputs=, target=, lnc=, artifacts_dir=,
  dump_python_ast=, output_names=)``, which must raise when the kernel is rejected (``kernel_assert``, shapes);
- in trace-only mode nothing of the result: the test passes when ``compile`` returns (or, for a negative test,
  when it raises an error whose text matches). ``result.module`` (the MLIR module) is printed only under
  ``--debug-kernels``; compile-and-infer modes also hand the result to the MLIR-to-NEFF driver. Neither exists
  here: ``module`` raises "not implemented".

The kernel runs once on the given inputs (``lnc`` logical cores, ``target`` generation): every check the
simulator makes (shapes, buffers, dtypes, capacity, the kernel's own asserts) is applied, which covers what a
front end rejects while specialising a kernel, and more where the simulator checks values. ``ParserFrontend``
is the "parser front end" of the NKI 0.7 docs, the 0.6 specialization (nki-0.7.md §2.1), so it simulates with
NKI 0.6 semantics; ``TracerFrontend`` with the version the kernel's code implies (``sim.versioning``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nki_studio.model.targets import NkiVersion, parse_generation
from nki_studio.model.version_signals import V06
from nki_studio.sim.errors import NotImplementedInSimulator
from nki_studio.sim.launch import run_dropin

STANDS_FOR = "nki.compiler.frontend"


class FrontendResult:
    """What ``compile`` returns: the kernel's simulated outputs; no MLIR module."""

    def __init__(self, outputs: Any, output_names: Sequence[str] | None) -> None:
        self.outputs = outputs
        self.output_names = list(output_names) if output_names is not None else None

    @property
    def module(self) -> Any:
        """The compiler's MLIR module: not produced by a simulation."""
        raise NotImplementedInSimulator(
            f"{STANDS_FOR} result.module",
            "the embedded simulator checks the kernel by running it; it produces no MLIR module",
        )


class NKIFrontend:
    """A front end: ``compile`` checks ``kernel`` on ``inputs`` (here: by simulating it)."""

    def _nki_version(self) -> tuple[NkiVersion, str] | None:
        """The NKI version this front end specialises with (and why), or None for the kernel's own."""
        return None

    def compile(
        self,
        kernel: Callable[..., Any],
        *,
        inputs: Mapping[str, Any],
        target: str,
        lnc: int,
        artifacts_dir: str | None = None,
        dump_python_ast: bool = False,
        output_names: Sequence[str] | None = None,
    ) -> FrontendResult:
        """Run ``kernel(**inputs)`` on ``lnc`` logical cores of ``target`` (``trn2``, ``trn3`` ...); raise what the
        simulation raises. ``artifacts_dir`` gets nothing (no compiler artifacts exist here)."""
        if dump_python_ast:  # accepted, as the harness passes it through; say it had no effect
            warnings.warn(
                f"{STANDS_FOR}: dump_python_ast ignored (the embedded simulator runs the kernel; no AST dump)",
                stacklevel=2,
            )
        outputs = run_dropin(
            kernel,
            (),
            dict(inputs),
            lnc,
            grid=True,
            generation=parse_generation(target),
            nki_version=self._nki_version(),
        )
        return FrontendResult(outputs, output_names)


class ParserFrontend(NKIFrontend):
    """The parser (0.6, ``NKI_COMPILER_FRONTEND=custom``) front end: simulated with NKI 0.6 semantics."""

    def _nki_version(self) -> tuple[NkiVersion, str] | None:
        return V06, f"NKI version 0.6: {STANDS_FOR}.ParserFrontend is the 0.6 (parser) specialization"


class TracerFrontend(NKIFrontend):
    """The tracer (0.7 default) front end: simulated with the version the kernel's code implies."""


__all__ = ["NKIFrontend", "ParserFrontend", "TracerFrontend"]
