"""``migrate`` for every front end: rewrite a file to NKI 0.7 (``nki_studio.migrate``) and prove it, by
simulating the original with its own version's semantics and the migrated text with 0.7's on the same seeded
inputs, then comparing every output.

Outputs must be bit-identical, or equal within the rounding of their dtype (a few units in the last place) where
the rewrite changed which instructions compute them (an in-place ``+=`` became ``nisa.tensor_tensor``): the proof
says which. The file is written only after a successful proof (or with ``force``); an unparsable or half-migrated
file, or one with manual steps left, is never written. The proof runs the user's kernel: it is refused in an
untrusted workspace (``simulation.require_trust``, the one trust decision).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import os
import tempfile
from pathlib import Path
from typing import Any

from nki_studio.migrate.rewrite import TARGET, Migration, NotMigratable, migrate_source
from nki_studio.migrate.spmd_grids import grid_parameters, launch_grids
from nki_studio.model.targets import LEGACY
from nki_studio.protocol.migration import KernelProof, MigrationResult, MigrationStatus
from nki_studio.protocol.simulation import SimulationResult
from nki_studio.service import simulation
from nki_studio.service.absent_imports import stand_in
from nki_studio.service.migration_callers import file_calls, function_spans, ran, through_callers
from nki_studio.service.settings import Settings, file_target
from nki_studio.sim.packages import package_module

SEEDS = 3  # input sets per kernel when the spec generates them (a spec's inputs= function gives one)
_ULPS = 4  # "within the dtype's rounding": this many units in the last place, relative
_PACKAGE_FILES = 500  # the most modules of a package read for the helpers its masks call


def migrate(
    path: str,
    settings: Settings,
    *,
    to: str = TARGET,
    inputs: str | None = None,
    write: bool = False,
    force: bool = False,
    source: str | None = None,
) -> MigrationResult:
    """Migrate ``path`` (or its unsaved ``source``), prove it, and write it when asked and proven (or
    ``force``). Raises ``simulation.SpecProblem`` for malformed ``inputs``."""
    original = source if source is not None else Path(path).read_text(encoding="utf-8")
    override = simulation.overrides(inputs)
    try:
        migration = migrate_source(
            original, to, package_sources(path), platform=file_target(path, settings).generation
        )
    except NotMigratable as exc:
        return _result(path, "not_migratable", str(exc), None, [])
    if not migration.changed:
        return _result(
            path, "unchanged", "nothing to migrate: already NKI 0.7 (equivalent trivially)", migration, []
        )
    manual = f"{len(migration.manual)} construct(s) need migrating by hand (listed)"
    if not settings.trusted_workspace:
        if migration.manual:
            result = _result(path, "manual_steps", f"{manual}; no proof run", migration, [])
            return _write(result, path, migration) if write and force else result
        return _result(path, "refused", simulation.REFUSAL, migration, [])
    clean = _clean_kernels(migration)
    proofs = _prove(path, migration, settings, override, clean)
    kernels = [k.name for k in simulation.kernels(migration.original, path) if k.name in clean]
    proofs += through_callers(migration.original, proofs, kernels)
    if migration.manual:
        # The kernels none of whose lines (nor those of the functions they call) need a manual step are proven
        # on their own; the file is not written (other kernels still hold legacy code) unless forced.
        proven = ", ".join(p["kernel"] for p in proofs if p["equivalent"]) or "none"
        message = f"{manual}; kernels proven on their own: {proven}" if proofs else f"{manual}; no proof run"
        result = _result(path, "manual_steps", message, migration, proofs)
        return _write(result, path, migration) if write and force else result
    if not proofs:
        status: MigrationStatus = "not_proven"
        message = (
            "migrated, not proven: no kernel has inputs (add a simulate spec comment, asserts, or --inputs)"
        )
    elif all(p["equivalent"] for p in proofs):
        status = "proven"
        n = min(p["inputs"] for p in proofs)
        exact = "" if all(p["exact"] for p in proofs) else " (some outputs within their dtype's rounding)"
        message = f"migrated to NKI {TARGET}: equivalent on {n} inputs{exact}"
    else:
        status = "proof_failed"
        message = next(p["message"] for p in proofs if not p["equivalent"])
    result = _result(path, status, message, migration, proofs)
    if write and (status == "proven" or force):
        return _write(result, path, migration)
    return result


def package_sources(path: str) -> tuple[str, ...]:
    """The texts of the other modules of the package ``path`` belongs to (its top package, as the simulator loads
    it: ``sim.packages``), where the helpers its masks and indices call may live; none for a loose file."""
    location = package_module(path)
    if location is not None:
        top = Path(location.root, location.name.split(".")[0])
    else:  # a folder without __init__.py inside a package (nki-samples' reference/rmsnorm_quant): that package
        top = Path(path).resolve().parent
        while (top.parent / "__init__.py").is_file():
            top = top.parent
        if top == Path(path).resolve().parent:
            return ()
    found = sorted(p for p in top.rglob("*.py") if p.resolve() != Path(path).resolve())[:_PACKAGE_FILES]
    return tuple(p.read_text(encoding="utf-8", errors="replace") for p in found)


def needs_migration(text: str) -> bool:
    """Whether ``text`` has something to migrate (the editor offers "Migrate kernel to NKI 0.7" then); no
    simulation runs."""
    try:
        return migrate_source(text, first_change=True).changed
    except NotMigratable:
        return False


def _write(result: MigrationResult, path: str, migration: Migration) -> MigrationResult:
    Path(path).write_text(migration.text, encoding="utf-8")
    return {**result, "written": True}


def _result(
    path: str, status: MigrationStatus, message: str, migration: Migration | None, proofs: list[KernelProof]
) -> MigrationResult:
    if migration is None:
        return {
            "path": path, "status": status, "message": message, "source_version": "unknown", "changes": [],
            "manual": [], "proofs": [], "diff": "", "migrated": "", "written": False,
        }  # fmt: skip
    name = os.path.basename(path)
    diff = difflib.unified_diff(
        migration.original.splitlines(keepends=True),
        migration.text.splitlines(keepends=True),
        f"a/{name}",
        f"b/{name}",
    )
    return {
        "path": path,
        "status": status,
        "message": message,
        "source_version": migration.source_version,
        "changes": [
            {"line": c.line, "construct": c.construct, "detail": c.detail} for c in migration.changes
        ],
        "manual": [{"line": s.line, "construct": s.construct, "recipe": s.recipe} for s in migration.manual],
        "proofs": proofs,
        "diff": "".join(diff),
        "migrated": migration.text,
        "written": False,
    }


def _clean_kernels(migration: Migration) -> set[str]:
    """The functions of the original none of whose lines, nor those of the file's functions they call
    (transitively), hold a manual step: migrated completely, so their proof can run."""
    spans = function_spans(migration.original)
    calls = file_calls(migration.original)
    dirty = {
        name
        for name, (first, last) in spans.items()
        if any(first <= s.line <= last for s in migration.manual)
    }
    changed = True
    while changed:  # a caller of a dirty function is dirty
        grown = {name for name, called in calls.items() if called & dirty}
        changed = not grown <= dirty
        dirty |= grown
    return set(spans) - dirty


def _prove(
    path: str, migration: Migration, settings: Settings, override: dict[str, object], clean: set[str]
) -> list[KernelProof]:
    """One proof per kernel of the original that is migrated completely (``clean``) and whose inputs are known."""
    proofs: list[KernelProof] = []
    runner = simulation.Simulator()

    def prepared(text: str, kernel: str, fields: dict[str, object] = override) -> simulation.Kernel:
        return simulation.prepare(
            path, text, settings, kernel=kernel, override=fields, unsaved=True, lenient=True
        )

    legacy = migration.source_version == "legacy"
    grids = launch_grids(migration.original) if legacy else {}
    extent_parameters = grid_parameters(migration.original) if legacy else {}
    for info in simulation.kernels(migration.original, path):
        if info.name not in clean:
            continue
        original = _on_grid(migration.original, info.name, grids[info.name]) if info.name in grids else None
        # imports of modules not installed here that the kernel does not use are stand-ins in both versions
        original, absent = stand_in(original or migration.original, path, info.name)
        migrated, _ = stand_in(migration.text, path, info.name)
        try:
            after = prepared(migrated, info.name)
            fields = override
            if info.name in extent_parameters:
                # the migrated kernel takes its grid as parameters: the original runs on the grid their values say
                names = extent_parameters[info.name]
                extents = dict(after.spec.args)
                grid = tuple(str(extents[n]) for n in names)
                original, _ = stand_in(
                    _on_grid(migration.original, info.name, (("**_",), grid)), path, info.name
                )
                fields = {k: v for k, v in override.items() if k not in names}
            before = prepared(original, info.name, fields)
        except simulation.SpecProblem:
            continue
        if before.spec.kernel != info.name:
            continue
        original_version = str(LEGACY) if migration.source_version == "legacy" else before.nki_version
        before = dataclasses.replace(before, nki_version=original_version)
        after = dataclasses.replace(after, nki_version=TARGET)
        where = _return_line(migration.original, info.name)
        proof = _prove_kernel(runner, before, after, settings, where)
        if absent:
            proof["message"] += (
                f" (stand-ins for {', '.join(absent)}: not installed here, unused by the kernel)"
            )
        proofs.append(proof)
    return proofs


def _on_grid(text: str, kernel: str, grid: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    """The original with ``kernel`` launched on the multi-axis grid its launch sites give (``grid``: its parameters
    and extents), as the migrated kernel's loops run it: the proof's first run. Lines are appended, so the
    kernel's line numbers hold."""
    parameters, extents = grid
    return text.rstrip("\n") + (
        "\n\nimport nki_studio.sim.legacy.spmd as nki_studio_spmd\n"
        f"{kernel} = nki_studio_spmd.ArgumentGrid({kernel}, lambda {', '.join(parameters)}: ({', '.join(extents)},))\n"
    )


def _return_line(text: str, kernel: str) -> int | None:
    """The line of the kernel's last ``return`` (where its outputs leave it) in ``text``."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            returns = [n.lineno for n in ast.walk(node) if isinstance(n, ast.Return)]
            return max(returns, default=None)
    return None


def _prove_kernel(
    runner: simulation.Simulator,
    before: simulation.Kernel,
    after: simulation.Kernel,
    settings: Settings,
    returned_at: int | None,
) -> KernelProof:
    import numpy as np

    name = before.spec.kernel
    seeds = [before.spec.seed] if before.spec.inputs else [before.spec.seed + i for i in range(SEEDS)]
    exact = True
    executed: set[str] | None = None  # the functions that issued instructions in every run so far
    with tempfile.TemporaryDirectory(prefix="nki-migrate-") as folder:
        for seed in seeds:
            arrays = []
            for label, kernel in (("original", before), ("migrated", after)):
                out = os.path.join(folder, f"{label}-{seed}.npz")
                spec = dataclasses.replace(kernel.spec, seed=seed)
                run = runner.run(
                    dataclasses.replace(kernel, spec=spec),
                    settings,
                    simulation.RunOptions(backend="embedded", outputs_path=out),
                    warm=False,
                )
                if run.get("status") not in ("passed", "no_reference", "failed") or not os.path.exists(out):
                    where = run.get("message", run.get("status"))
                    message = f"{name}: the {label} kernel did not run (seed {seed}): {where}"
                    return _proof(name, seeds, False, exact, message, executed)
                with np.load(out) as saved:
                    arrays.append(_saved_outputs(saved))
                here = ran(kernel.source or "", os.path.abspath(kernel.path), _instruction_lines(run))
                executed = here if executed is None else executed & here
            verdict = _compare(arrays[0], arrays[1])
            if verdict is None:
                continue
            if verdict == "rounding":
                exact = False
                continue
            where = f" (returned at line {returned_at} of the original)" if returned_at else ""
            message = f"{name}: not equivalent (seed {seed}): {verdict}{where}"
            return _proof(name, seeds, False, exact, message, executed)
    return _proof(name, seeds, True, exact, f"{name}: equivalent on {len(seeds)} inputs", executed)


def _instruction_lines(run: SimulationResult) -> list[tuple[str, int]]:
    """The (path, line) pairs that issued instructions in ``run``, or called a function of the user's that did."""
    estimate = run.get("estimate")
    own = [(line["path"], line["line"]) for line in estimate["lines"]] if estimate else []
    calls = [site.rpartition(":") for site in run.get("callSites", [])]
    return own + [(where, int(line)) for where, _, line in calls]


def _proof(
    name: str, seeds: list[int], equivalent: bool, exact: bool, message: str, executed: set[str] | None
) -> KernelProof:
    return {
        "kernel": name,
        "inputs": len(seeds),
        "equivalent": equivalent,
        "exact": exact,
        "message": message,
        "ran": sorted(executed or ()),
        "through": [],
    }


def _saved_outputs(saved: Any) -> list[Any]:
    """The outputs of a run's ``.npz`` in order, each in its dtype (raw bytes viewed as the dtype named beside)."""
    from nki_studio.sim.dtypes import to_dtype

    keys = sorted((k for k in saved.files if k.startswith("arr_")), key=lambda k: int(k[4:]))
    names = [str(n) for n in saved["dtypes"]] if "dtypes" in saved.files else []
    arrays = [saved[k] for k in keys]
    return [
        a.view(to_dtype(n)) if a.dtype.kind == "V" else a for a, n in zip(arrays, names, strict=True)
    ] or arrays


def _compare(before: list[object], after: list[object]) -> str | None:
    """None: bit-identical; ``"rounding"``: equal within the dtype's rounding; else the first difference."""
    import ml_dtypes
    import numpy as np
    from nki_studio.sim.dtypes import is_float

    if len(before) != len(after):
        return f"{len(before)} outputs before, {len(after)} after"
    verdict: str | None = None
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"output {i}: {x.dtype}{list(x.shape)} before, {y.dtype}{list(y.shape)} after"
        floating = x.dtype.kind == "c" or is_float(x.dtype)
        if np.array_equal(x, y, equal_nan=floating):
            continue
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        eps = float(ml_dtypes.finfo(x.dtype).eps) if floating and x.dtype.kind != "c" else 0.0
        close = np.isclose(xf, yf, rtol=_ULPS * eps, atol=0.0, equal_nan=True)
        if eps and close.all():
            verdict = "rounding"
            continue
        first = tuple(int(v) for v in np.argwhere(~close)[0])
        return f"output {i} first differs at {list(first)}: {float(xf[first])!r} before, {float(yf[first])!r} after"
    return verdict


def migration_text(result: MigrationResult, *, diff: bool = True) -> str:
    """The result as the command line prints it: the diff, the changes, the manual steps, the proof."""
    lines: list[str] = []
    if diff and result["diff"]:
        lines.append(result["diff"].rstrip("\n"))
    for step in result["manual"]:
        lines.append(f"{result['path']}:{step['line']}: manual: {step['construct']}: {step['recipe']}")
    for proof in result["proofs"]:
        exact = "" if proof["exact"] or not proof["equivalent"] else " (within the dtype's rounding)"
        lines.append(f"proof: {proof['message']}{exact}")
    written = " (written)" if result["written"] else ""
    lines.append(f"{result['path']}: {result['status']}: {result['message']}{written}")
    return "\n".join(lines)


def exit_code(result: MigrationResult) -> int:
    """0: proven or nothing to do; 1: not proven, proof failed or manual steps left; 2: cannot migrate."""
    if result["status"] in ("proven", "unchanged"):
        return 0
    return 2 if result["status"] in ("not_migratable", "refused") else 1
