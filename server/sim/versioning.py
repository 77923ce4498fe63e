"""The NKI version a launched kernel is simulated with when no setting names one: inferred from its code.

Much code still runs 0.6 code (``nl.dynamic_range``) without saying so, while the default version is the
newest (0.7). Where nothing says otherwise, the kernel's own code decides: the user files it is made of
(its module and, transitively, the user modules and functions that module refers to; installed packages and
the standard library excluded) are scanned for APIs that pin a version (``model.version_signals``). A
0.6-only API gives 0.6 semantics unless a 0.7-only API is used too. A kernel whose module uses the legacy
``neuronxcc.nki`` modules gets the legacy semantics. The choice is reported as a note.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from nki_studio.model.targets import LEGACY, NkiVersion, frontend_asks_for_06
from nki_studio.model.version_signals import V06, VersionSignal, version_signals
from nki_studio.sim.legacy.detect import LEGACY_NOTE, uses_legacy_api
from nki_studio.sim.userframe import is_internal

_MAX_FILES = 500  # bound the scan of very large code bases (nothing pins a version past it)
_cache: dict[str, tuple[float, tuple[VersionSignal | None, VersionSignal | None]]] = {}


def _file_of(value: object) -> str | None:
    """The user source file defining a module, function or class (None for internal or unknown ones)."""
    if isinstance(value, types.FunctionType):
        file: object = value.__code__.co_filename
    elif isinstance(value, types.ModuleType):
        file = getattr(value, "__file__", None)
    else:
        module = sys.modules.get(getattr(value, "__module__", "") or "")
        file = getattr(module, "__file__", None) if module is not None else None
    return file if isinstance(file, str) and file.endswith(".py") and not is_internal(file) else None


def _names(value: object) -> dict[str, Any] | None:
    """The module namespace ``value`` was defined in (kernel modules leave ``sys.modules`` after loading)."""
    if isinstance(value, types.ModuleType):
        return vars(value)
    if isinstance(value, types.FunctionType):
        return value.__globals__
    module = sys.modules.get(getattr(value, "__module__", "") or "")
    return vars(module) if module is not None else None


def _user_files(func: Callable[..., Any], path: str | None) -> list[str]:
    """The kernel's file first, then the user files reachable from its module's names."""
    from nki_studio.sim.launch import JitKernel

    func = inspect.unwrap(func)
    start = path or _file_of(func) or ""
    files: list[str] = [os.path.abspath(start)] if start else []
    seen = set(files)
    pending = [names for names in (_names(func),) if names is not None]
    while pending and len(files) < _MAX_FILES:
        for value in list(pending.pop().values()):
            if isinstance(value, JitKernel):
                value = value.func
            if not isinstance(value, (types.ModuleType, types.FunctionType, type)):
                continue
            file = _file_of(value)
            if file is None or os.path.abspath(file) in seen:
                continue
            seen.add(os.path.abspath(file))
            files.append(os.path.abspath(file))
            names = _names(value)
            if names is not None:
                pending.append(names)
    return files


def _signals(file: str) -> tuple[VersionSignal | None, VersionSignal | None]:
    try:
        mtime = os.stat(file).st_mtime
        hit = _cache.get(file)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        with open(file, encoding="utf-8") as handle:
            found = version_signals(handle.read())
    except (OSError, UnicodeDecodeError):
        return None, None
    _cache[file] = (mtime, found)
    return found


def infer_nki_version(
    func: Callable[..., Any], default: NkiVersion, path: str | None = None
) -> tuple[NkiVersion, str | None]:
    """The version to simulate ``func`` (loaded from ``path``, when known) with, and a note saying why when it
    differs from ``default`` or when the code's signals conflict; ``(default, None)`` otherwise.
    ``NKI_COMPILER_FRONTEND=custom`` names 0.6 without looking at the code."""
    if uses_legacy_api(func):
        return LEGACY, LEGACY_NOTE
    if default > V06 and frontend_asks_for_06():
        return V06, "NKI version 0.6 from NKI_COMPILER_FRONTEND (0.6 semantics on a 0.7 toolchain)"
    old: tuple[str, VersionSignal] | None = None
    new: tuple[str, VersionSignal] | None = None
    for file in _user_files(func, path):
        file_old, file_new = _signals(file)
        old = old or ((file, file_old) if file_old else None)
        new = new or ((file, file_new) if file_new else None)
        if old and new:
            break
    if old is None:
        return default, None
    where = f"{old[1].api} at {old[0]}:{old[1].line}"
    if new is not None:
        return default, (
            f"NKI {default} kept although the code uses the 0.6-only {where}: it also uses the 0.7-only "
            f"{new[1].api} at {new[0]}:{new[1].line} (set the NKI version to choose)"
        )
    if old[1].version >= default:
        return default, None
    return old[
        1
    ].version, f"NKI version {old[1].version} inferred from {where} (no setting names the version)"
