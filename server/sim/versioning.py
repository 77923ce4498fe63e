"""The NKI version a launched kernel is simulated with when no setting names one: inferred from its code.

A kernel written for the legacy ``neuronxcc.nki`` API (its file's imports say so, as the linter reads them:
``model.api_version``) is simulated as legacy code. Much code still runs 0.6 code (``nl.dynamic_range``)
without saying so, while the default version is the newest (0.7). Where nothing says otherwise, the kernel's own code decides: the user files it is made of
(its module and, transitively, the user modules and functions that module refers to; installed packages and
the standard library excluded) are scanned for APIs that pin a version (``model.version_signals``). A
0.6-only API gives 0.6 semantics unless a 0.7-only API is used too. A kernel whose module uses the legacy
``neuronxcc.nki`` modules gets the legacy semantics. The choice is reported as a note.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from nki_studio.core.file_stamp import Stamp, file_stamp
from nki_studio.model.api_version import ApiEvidence, FileApi, file_api
from nki_studio.model.kernels import discover
from nki_studio.model.targets import LEGACY, NkiVersion, frontend_asks_for_06
from nki_studio.model.version_signals import V06, VersionSignal, version_signals
from nki_studio.sim.legacy.detect import LEGACY_NOTE, uses_legacy_api
from nki_studio.sim.userframe import is_internal

_MAX_FILES = 500  # bound the scan of very large code bases (nothing pins a version past it)
_cache: dict[str, tuple[Stamp, tuple[VersionSignal | None, VersionSignal | None]]] = {}
_legacy_cache: dict[str, tuple[Stamp, tuple[FileApi, frozenset[str]]]] = {}


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
    func = inspect.unwrap(func)
    start = path or _file_of(func) or ""
    files: list[str] = [os.path.abspath(start)] if start else []
    seen = set(files)
    pending = [names for names in (_names(func),) if names is not None]
    while pending and len(files) < _MAX_FILES:
        for value in list(pending.pop().values()):
            if not isinstance(value, (types.ModuleType, types.FunctionType, type)):
                # a wrapper object (an ``@nki.jit`` kernel, whose ``functools.update_wrapper`` sets it): its function
                value = getattr(value, "__wrapped__", value)
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
        stamp = file_stamp(file)
        hit = _cache.get(file)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        with open(file, encoding="utf-8") as handle:
            found = version_signals(handle.read())
    except (OSError, UnicodeDecodeError):
        return None, None
    _cache[file] = (stamp, found)
    return found


def _legacy_evidence(file: str, qualname: str) -> ApiEvidence | None:
    """The legacy import that makes the kernel ``qualname`` of ``file`` legacy code, as the linter decides it
    (``model.api_version``: a file of legacy imports only; in a file importing both APIs, a legacy-decorated
    kernel), else None."""
    try:
        stamp = file_stamp(file)
        hit = _legacy_cache.get(file)
        if hit is not None and hit[0] == stamp:
            api, legacy_names = hit[1]
        else:
            with open(file, encoding="utf-8") as handle:
                source = handle.read()
            discovery = discover(source, file, ast.parse(source))
            api = file_api(discovery)
            legacy_names = frozenset(
                q for q, f in discovery.module.functions.items() if api.is_legacy(f.node)
            )
            _legacy_cache[file] = (stamp, (api, legacy_names))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return None
    return api.legacy if api.all_legacy or qualname in legacy_names else None


def infer_nki_version(
    func: Callable[..., Any], default: NkiVersion, path: str | None = None
) -> tuple[NkiVersion, str | None]:
    """The version to simulate ``func`` (loaded from ``path``, when known) with, and a note saying why when it
    differs from ``default`` or when the code's signals conflict; ``(default, None)`` otherwise.
    ``NKI_COMPILER_FRONTEND=custom`` names 0.6 without looking at the code."""
    start = path or _file_of(inspect.unwrap(func))
    legacy = _legacy_evidence(start, getattr(inspect.unwrap(func), "__qualname__", "")) if start else None
    if legacy is not None and default > LEGACY:
        return LEGACY, (
            f"NKI version legacy (neuronxcc.nki) inferred from `{legacy.statement}` at {start}:{legacy.line} "
            "(no setting names the version)"
        )
    if not start and uses_legacy_api(func):  # no file to read: the kernel's module names legacy modules
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
