"""Sub-kernels proven through their callers: a function of a migrated file with no inputs of its own (it is only
ever called by other kernels, with the tiles and helper objects they build) is proven when the proofs of the
kernels that call it ran it and held.

The rule: a function ran in a proof when one of its lines issued instructions, or made a call that did, in every
run of both versions (the simulation's per-line record, ``estimate.lines``, gives the instructions' own lines,
attributed to the innermost user frame; ``callSites`` the user's calls around them, a kernel's call of a
sub-kernel included). A function is proven through its callers when every function of the file that
calls it either has a proof of its own that ran it or is itself only called by such functions (followed up the
file's call graph), and all those proofs held; it fails when any of them failed. A caller with neither (no inputs,
no caller) leaves it unproven, and ``unproven_callers`` names them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from nki_studio.protocol.migration import KernelProof


def function_spans(text: str) -> dict[str, tuple[int, int]]:
    """Each function (nested ones too) of ``text`` -> its first line (its first decorator's) and last line."""
    return {
        f.name: (f.decorator_list[0].lineno if f.decorator_list else f.lineno, f.end_lineno or f.lineno)
        for f in ast.walk(ast.parse(text))
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def file_calls(text: str) -> dict[str, set[str]]:
    """Each function of ``text`` -> the functions of the file it calls by name."""
    tree = ast.parse(text)
    defs = {f.name: f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {
        name: {n.func.id for n in ast.walk(f) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        & set(defs)
        for name, f in defs.items()
    }


def ran(text: str, path: str, lines: Iterable[tuple[str, int]]) -> set[str]:
    """The functions of ``text`` (the file at ``path``) holding one of ``lines`` ((path, line) pairs: the lines
    that issued instructions in a run, and the calls around them)."""
    here = {line for where, line in lines if where == path}
    return {
        name for name, (first, last) in function_spans(text).items() if any(first <= n <= last for n in here)
    }


def _callers(calls: Mapping[str, set[str]], name: str) -> list[str]:
    return sorted(caller for caller, called in calls.items() if name in called and caller != name)


def _evidence(
    name: str,
    calls: Mapping[str, set[str]],
    own: Mapping[str, KernelProof],
    seen: frozenset[str] = frozenset(),
) -> tuple[list[KernelProof], list[str]]:
    """The proofs of its own of the functions through which ``name`` is called (followed up through callers
    without one), and the callers without either (no proof, no caller)."""
    proofs: list[KernelProof] = []
    missing: list[str] = []
    for caller in _callers(calls, name):
        if caller in own:
            proofs.append(own[caller])
        elif caller in seen:  # recursion: that path proves nothing
            missing.append(caller)
        elif _callers(calls, caller):
            found, lacking = _evidence(caller, calls, own, seen | {name})
            proofs.extend(found)
            missing.extend(lacking)
        else:
            missing.append(caller)
    return proofs, missing


def through_callers(text: str, proofs: list[KernelProof], kernels: Iterable[str]) -> list[KernelProof]:
    """The proofs through their callers of the ``kernels`` of ``text`` with no proof of their own: equivalent
    when every caller's proof held and ran the kernel, not equivalent when one failed (its message said)."""
    calls = file_calls(text)
    own = {p["kernel"]: p for p in proofs}
    out: list[KernelProof] = []
    for name in kernels:
        if name in own:
            continue
        found, missing = _evidence(name, calls, own)
        if not found:
            continue
        callers = list(dict.fromkeys(p["kernel"] for p in found))
        failed = next((p for p in found if not p["equivalent"]), None)
        if failed is not None:
            message = (
                f"{name}: not proven through {failed['kernel']}, whose proof failed: {failed['message']}"
            )
        elif missing or any(name not in p["ran"] for p in found):
            continue  # unproven: unproven_callers says why
        else:
            n = min(p["inputs"] for p in found)
            message = f"{name}: equivalent through {', '.join(callers)} on {n} inputs"
        out.append(
            {
                "kernel": name,
                "inputs": min(p["inputs"] for p in found),
                "equivalent": failed is None,
                "exact": all(p["exact"] for p in found),
                "message": message,
                "ran": [],
                "through": callers,
            }
        )
    return out


def unproven_callers(text: str, proofs: list[KernelProof], kernel: str) -> str | None:
    """Why ``kernel``, called by other functions of ``text`` and without a proof, is not proven through them
    (the callers not proven, or whose proofs did not run it); None when nothing of the file calls it."""
    calls = file_calls(text)
    if not _callers(calls, kernel):
        return None
    found, missing = _evidence(kernel, calls, {p["kernel"]: p for p in proofs})
    idle = [p["kernel"] for p in found if p["equivalent"] and kernel not in p["ran"]]
    parts = []
    if missing:
        parts.append(f"its callers are not proven: {', '.join(dict.fromkeys(missing))}")
    if idle:
        parts.append(f"its callers' proofs did not run it: {', '.join(dict.fromkeys(idle))}")
    return "; ".join(parts) or None
