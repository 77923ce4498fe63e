"""Adapter: the embedded simulator under the import name of AWS's NkiCpuSimulator package, ``nki_cpu_simulator``.

nki-library's test harness (``test/utils/simulation_setup.py``, ``--test-mode simulation``) imports
``nki_cpu_simulator.nki`` and its ``language``, ``language.dtypes``, ``isa``, ``isa.constants``, ``typing``,
``compiler``, ``tensor`` and ``builtin`` submodules, aliases them as ``nki.*`` itself, and launches kernels
with ``nki.cpu_simulate(kernel)[lnc](**inputs)``; its ``trace_only`` tests import ``nki.compiler.frontend``
through that alias (:mod:`compiler_frontend_adapter`). While :func:`installed` is active a module finder
answers those names with the embedded simulator's modules, so that suite runs here unchanged.

Each name is a *facade*: a fresh module holding the same objects as the module :mod:`dropin` aliases for the
matching ``nki`` name (``nki.language`` ...), plus its submodules as attributes. Facades, not our modules
themselves, because the import system writes ``__spec__``/``__loader__`` and child attributes into what a
finder returns, and ``import a.b.c as x`` walks attributes (an unknown name must raise AttributeError there):
neither may change the modules other simulations use. A name the simulator has no module for (e.g.
``tensor``) is a module whose attributes raise "not implemented" where they are used, never at import.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from nki_studio.sim import dropin
from nki_studio.sim.launch import jit
from nki_studio.sim.nki_module import simulate

PACKAGE = "nki_cpu_simulator"

# Every module of the package nki-library imports -> the `nki` name dropin serves it under (or our module).
_STANDS_FOR = {
    "nki": "nki",
    "nki.language": "nki.language",
    "nki.language.dtypes": "nki.dtype",  # the harness aliases it as nki.dtype
    "nki.isa": "nki.isa",
    "nki.isa.constants": "nki.isa.constants",
    "nki.collectives": "nki.collectives",
    "nki.dtype": "nki.dtype",
    "nki.typing": "neuronxcc.nki.typing",
    "nki.compiler": "nki.compiler",
    # No `nki` module of ours: the compiler front end the harness's trace-only tests import through its own
    # `nki.compiler` alias (sim/compiler_frontend_adapter.py says why and what it stands in for).
    "nki.compiler.frontend": "nki_studio.sim.compiler_frontend_adapter",
    "nki.tensor": "nki.tensor",
    "nki.builtin": "nki.builtin",
}


class _Launch:
    """``cpu_simulate(kernel)``: call it to run the kernel at LNC=1, or pick the degree first with ``[lnc]``."""

    def __init__(self, kernel: Callable[..., Any]) -> None:
        self.kernel = kernel

    def __getitem__(self, lnc: int) -> Any:
        return simulate(jit(self.kernel)[lnc])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return simulate(self.kernel)(*args, **kwargs)


def cpu_simulate(kernel: Callable[..., Any]) -> _Launch:
    """NkiCpuSimulator's launcher, ``nki.cpu_simulate(kernel)[lnc](*args, **kwargs)``, on the embedded simulator."""
    return _Launch(kernel)


def _facade(name: str, source: types.ModuleType) -> types.ModuleType:
    module = types.ModuleType(name, source.__doc__)
    module.__dict__.update({k: v for k, v in vars(source).items() if not k.startswith("__")})
    for dunder in ("__getattr__", "__all__"):  # lazy / not-implemented names answer as in the source
        if dunder in vars(source):
            module.__dict__[dunder] = vars(source)[dunder]
    return module


def _build() -> dict[str, types.ModuleType]:
    """Every module of the stand-in package, by full name, children set as attributes of their parents."""
    root = types.ModuleType(
        PACKAGE, f"Stand-in for AWS's {PACKAGE} package: the nki-studio embedded simulator."
    )
    modules = {PACKAGE: root}
    for sub, nki_name in _STANDS_FOR.items():
        modules[f"{PACKAGE}.{sub}"] = _facade(f"{PACKAGE}.{sub}", dropin.module_or_unimplemented(nki_name))
    modules[f"{PACKAGE}.nki"].cpu_simulate = cpu_simulate  # type: ignore[attr-defined]
    for name, module in modules.items():
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(modules[parent], child, module)
    return modules


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers the stand-in package's names with the prebuilt facades (and nothing else).

    Also a submodule imported through an alias of a facade package: after ``sys.modules["nki.compiler"] =
    nki_cpu_simulator.nki.compiler`` (the harness's aliasing), ``import nki.compiler.frontend`` finds the
    package's ``frontend`` as an on-disk package's submodule would be found through its parent's ``__path__``.
    """

    def __init__(self, modules: dict[str, types.ModuleType]) -> None:
        self.modules = modules
        self.packages = {name.rpartition(".")[0] for name in modules}
        self.facades = {id(m) for m in modules.values()}

    def _facade_name(self, fullname: str) -> str | None:
        if fullname in self.modules:
            return fullname
        parent, _, child = fullname.rpartition(".")
        module = sys.modules.get(parent)
        if module is None or id(module) not in self.facades:
            return None
        name = f"{module.__name__}.{child}"
        return name if name in self.modules else None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        name = self._facade_name(fullname)
        if name is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, is_package=name in self.packages)
        if spec is not None:
            spec.loader_state = name
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.modules[spec.loader_state]

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the facade was filled when it was built."""


@contextmanager
def installed() -> Iterator[None]:
    """Inside a :func:`dropin.installed` block, make ``import nki_cpu_simulator...`` resolve to the facades.

    On exit the finder and every ``nki_cpu_simulator`` module are removed again, also where the harness
    aliased them under other names (``nki.compiler.frontend`` ...).
    """
    with dropin.installed():
        finder = _Finder(_build())
        sys.meta_path.insert(0, finder)
        try:
            yield
        finally:
            sys.meta_path.remove(finder)
            for name in [n for n, m in sys.modules.items() if id(m) in finder.facades]:
                del sys.modules[name]
