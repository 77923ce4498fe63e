"""The parts of the official ``mcp`` SDK the stdio server uses, imported without the SDK's eager package
initialisers.

``import mcp.server.lowlevel`` first runs ``mcp/__init__.py`` and ``mcp/server/__init__.py``, which import the
client (``ClientSession``, ``Client`` and, through the in-memory transport, the high-level ``MCPServer`` with
its resource templates, the uvicorn CLI, httpx and the OAuth client): about a fifth of the SDK's import time
(``benchmarks/mcp_bench.py`` prints the split), none of it used by a server on stdio. :func:`load` registers
those two packages as *lazy* package objects first (the real ``__path__``, so every submodule imports as
usual) and imports the submodules directly. The first access to a name the real initialiser defines (``from
mcp import ClientSession``, ``mcp.server.MCPServer``) runs that initialiser into the same module object, so
the packages behave as the SDK's own to any later importer in the process.

:mod:`nki_studio.mcp.server` calls :func:`load` as it is imported; when ``mcp`` is already imported (the tests'
client, an embedding process) nothing changes.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types as pytypes
from typing import Any

# The packages whose ``__init__`` the stdio server does not need (the lowlevel server, stdio transport, types
# and exceptions are submodules of these).
_LAZY_PACKAGES = ("mcp", "mcp.server")
_lock = threading.RLock()


def load() -> None:
    """Import the submodules :mod:`nki_studio.mcp.server` uses, skipping the packages' eager initialisers when
    ``mcp`` is not imported yet. Safe to call more than once."""
    with _lock:
        if "mcp" not in sys.modules:
            _defer_pydantic_builds()
            for name in _LAZY_PACKAGES:
                _register_lazy(name)
    for name in ("mcp.types", "mcp.shared.exceptions", "mcp.server.lowlevel.server", "mcp.server.stdio"):
        importlib.import_module(name)


def _defer_pydantic_builds() -> None:
    """Let pydantic build a model's validator when it is first used, not when its class is defined: the SDK
    defines some 550 protocol models (two protocol versions) and a server uses a few dozen; measured, 15 % of
    the server's CPU time from start to its first answer (``mcp_bench.py --compare-with``). Behaviour is
    unchanged (``defer_build`` is pydantic's documented model setting; this sets its default for the models
    defined after this point, in this process only: the ``nki-studio mcp`` server, nothing of ours uses
    pydantic). The default lives in a private module: if a pydantic release moves it, models build eagerly
    as before."""
    try:
        from pydantic._internal import _config

        if (
            isinstance(getattr(_config, "config_defaults", None), dict)
            and "defer_build" in _config.config_defaults
        ):
            _config.config_defaults["defer_build"] = True
    except ImportError:
        pass


def is_lazy(name: str) -> bool:
    """Whether package ``name`` is still a lazy package whose initialiser has not run (for tests)."""
    module = sys.modules.get(name)
    return module is not None and getattr(module, "__nki_studio_lazy__", False) is True


def _register_lazy(name: str) -> None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not an ordinary package: leave the import to Python
    module = importlib.util.module_from_spec(spec)
    module.__nki_studio_lazy__ = True  # type: ignore[attr-defined]
    setattr(module, "__getattr__", _completer(module, spec))  # noqa: B010 (mypy: a module's __getattr__)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def _completer(module: pytypes.ModuleType, spec: Any) -> Any:
    """The module ``__getattr__`` (PEP 562) of a lazy package: a submodule is imported on its own; any other
    name runs the package's real initialiser into the module, once, and is then looked up as usual."""

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):  # dunder probes (copy, pickle, inspect) must not run the initialiser
            raise AttributeError(attr)
        full = f"{module.__name__}.{attr}"
        if full in sys.modules or importlib.util.find_spec(full) is not None:
            return importlib.import_module(full)
        with _lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                module.__nki_studio_lazy__ = False  # type: ignore[attr-defined]
                spec.loader.exec_module(module)
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}") from None

    return __getattr__
