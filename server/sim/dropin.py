"""Run unmodified kernel files: ``import nki`` / ``nki.language`` / ``nki.isa`` / ``nki.collectives``
resolve to the embedded simulator while a :func:`installed` block is active.

The aliasing is scoped: entries of ``sys.modules`` that existed before (e.g. a real SDK) are restored on
exit and ours are removed, so nothing leaks into the hosting process (language server). Kernel modules
loaded by :func:`load_module` keep working after the block, because they hold references to our modules.
Legacy ``neuronxcc.nki`` imports (and ``torch_neuronx.nki_jit``) resolve to the legacy API's modules
(``sim/legacy/``), which run legacy kernels with the legacy semantics. ``torch_xla``, unless installed, resolves
to ``sim.xla``, whose XLA device is the CPU, so PyTorch scripts run their kernels on torch tensors
(``sim.frameworks`` converts them at the kernel boundary, as it does JAX arrays).

The aliasing is process-wide, so blocks are serialised with a re-entrant lock (one simulation at a time
per process; the language server runs simulations in worker processes anyway).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
import types
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from nki_studio.model.targets import Generation, Target, generation_from_env
from nki_studio.sim import dtypes
from nki_studio.sim.context import SimOptions
from nki_studio.sim.errors import MissingName
from nki_studio.sim.fresh_source import FreshSourceLoader, fresh_sources
from nki_studio.sim.packages import ModuleLocation, package_module
from nki_studio.sim.userframe import is_internal
from nki_studio.sim.versioning import infer_nki_version

_ALIASES = {
    "nki": "nki_studio.sim.nki_module",
    "nki.language": "nki_studio.sim.language",
    "nki.isa": "nki_studio.sim.isa",
    "nki.isa.constants": "nki_studio.sim.isa",
    "nki.collectives": "nki_studio.sim.collectives",
    "nki.compiler": "nki_studio.sim.nki_compiler",
    "nki.dtype": "nki_studio.sim.nki_dtype",
    "nki.typing": "nki_studio.sim.nki_typing",  # `import nki.typing as nt` (nt.tensor), since NKI 0.3.0
}
_LEGACY_ALIASES = {  # the legacy API's own modules (sim/legacy/)
    "neuronxcc": "nki_studio.sim.legacy.package",
    "neuronxcc.nki": "nki_studio.sim.legacy.entry",
    "neuronxcc.nki.language": "nki_studio.sim.legacy.language",
    "neuronxcc.nki.language.constants": "nki_studio.sim.legacy.language_constants",
    "neuronxcc.nki.isa": "nki_studio.sim.legacy.isa",
    "neuronxcc.nki.compiler": "nki_studio.sim.legacy.compiler",
    # compiler internals some helpers import (sim/legacy/backends.py), their parents too: `import a.b.c` needs them
    **dict.fromkeys(
        (
            "neuronxcc.nki.compiler.backends",
            "neuronxcc.nki.compiler.backends.neuron",
            "neuronxcc.nki.compiler.backends.neuron.indexing",
            "neuronxcc.nki.compiler.backends.neuron.tensor",
        ),
        "nki_studio.sim.legacy.backends",
    ),
    "neuronxcc.nki.typing": "nki_studio.sim.nki_typing",
    "torch_neuronx": "nki_studio.sim.legacy.torch_neuronx",
}
# PyTorch scripts' device, when torch_xla is not installed: the XLA device stands in as the CPU (``sim.xla``).
_XLA_ALIASES = dict.fromkeys(
    ("torch_xla", "torch_xla.core", "torch_xla.core.xla_model"), "nki_studio.sim.xla"
)
_lock = threading.RLock()
# Per thread, not per kernel instance (context.py's context variable): only launchers read it (default_options),
# and they run before and outside a launch's instances.
_defaults = threading.local()


def module_or_unimplemented(name: str) -> types.ModuleType:
    """Import ``name``; when it does not exist, a module whose every attribute raises "not implemented"."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # a real import error inside the module: never hide it
        # A part not written yet (e.g. collectives): a module whose every attribute is "not implemented".
        stub = types.ModuleType(name)

        def missing(attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)
            raise MissingName(
                f"{name.rsplit('.', 1)[-1]}.{attr}", "no module for it in the embedded simulator"
            )

        stub.__getattr__ = missing  # type: ignore[method-assign]
        return stub


def provided(module: str) -> bool:
    """Whether importing ``module`` (a top-level name such as ``neuronxcc``) gives the simulator's module while a
    kernel file loads, whether or not a package of that name is installed."""
    return module in _ALIASES or module in _LEGACY_ALIASES


@contextmanager
def installed(options: SimOptions | None = None, *, legacy: bool = True) -> Iterator[None]:
    """Alias the ``nki`` package (and ``neuronxcc.nki`` when ``legacy``) to the embedded simulator.

    ``options`` become the defaults of ``nki.simulate``/direct kernel calls made inside the block.
    """
    names = dict(_ALIASES)
    if legacy:
        names.update(_LEGACY_ALIASES)
    if importlib.util.find_spec("torch_xla") is None:  # a real one keeps its device (tensors come back to it)
        names.update(_XLA_ALIASES)
    with _lock:
        saved = {n: sys.modules[n] for n in names if n in sys.modules}
        previous = getattr(_defaults, "options", None)
        try:
            for alias, target in names.items():
                sys.modules[alias] = module_or_unimplemented(target)
            isa = sys.modules["nki.isa"]
            if not hasattr(isa, "constants"):
                isa.__dict__["constants"] = sys.modules[
                    "nki.isa.constants"
                ]  # `from nki.isa import constants`
            top = sys.modules["nki"]
            for sub in ("language", "isa", "collectives", "compiler", "dtype", "typing"):
                setattr(top, sub, sys.modules[f"nki.{sub}"])
            _defaults.options = options
            yield
        finally:
            _defaults.options = previous
            for alias in names:
                if alias in saved:
                    sys.modules[alias] = saved[alias]
                else:
                    sys.modules.pop(alias, None)


def default_options(lnc: int = 1, func: Callable[..., Any] | None = None) -> SimOptions:
    """Options for a kernel launched through ``nki.simulate``/``kernel(...)``: the active block's options,
    else the official simulator's environment (NKI_NC_VERSION or NEURON_PLATFORM_TARGET_OVERRIDE, default
    trn3; NKI_PRECISE_FP) and the NKI version ``func``'s code implies (``sim.versioning``).
    """
    base: SimOptions | None = getattr(_defaults, "options", None)
    if base is None:
        gen = generation_from_env() or Generation.GEN4
        base = SimOptions(target=Target(generation=gen), precise=dtypes.precise_default())
        if func is not None:
            version, base.nki_version_note = infer_nki_version(func, base.nki_version)
            base.target = Target(gen, version)
    opts = SimOptions(**{f: getattr(base, f) for f in base.__dataclass_fields__})
    opts.lnc = lnc
    return opts


def load_module(
    path: str,
    options: SimOptions | None = None,
    sys_path: tuple[str, ...] = (),
    location: ModuleLocation | None = None,
) -> types.ModuleType:
    """Execute a kernel file as a fresh module (its folder and ``sys_path`` on ``sys.path`` while it loads).

    A file inside a package is loaded as its module of that package (``sim.packages``: ``location``, else
    found from the ``__init__.py`` files above ``path`` and the source roots), its package root on
    ``sys.path``, so its relative imports work; a loose file gets a private name. User modules it imports are
    dropped from ``sys.modules`` afterwards, so an edited helper is re-read by the next simulation in the
    same process.
    """
    path = os.path.abspath(path)
    location = location or package_module(path, sys_path)
    name = location.name if location else f"nki_studio_kernel_{uuid.uuid4().hex[:12]}"
    spec = importlib.util.spec_from_file_location(name, path, loader=FreshSourceLoader(name, path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    roots = [location.root] if location else []
    extra = [os.path.dirname(path), *roots, *(os.path.abspath(p) for p in sys_path)]
    with installed(options), fresh_sources():
        before = set(sys.modules)
        sys.path[:0] = extra
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        finally:
            for added in set(sys.modules) - before:
                file = getattr(sys.modules[added], "__file__", None)
                if file and not is_internal(file):
                    sys.modules.pop(added, None)
            sys.modules.pop(name, None)
            for p in extra:
                if p in sys.path:
                    sys.path.remove(p)
    return module
