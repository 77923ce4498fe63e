"""``tune --confirm-remote K``, decided once for every front end: the top K ranked candidates of a search
profiled on the configured Trn2 host through the remote round trip (``service.remote_profile``), their
measured times next to their estimates, and the ``nki-studio calibrate`` command that fits the estimate to
those profiles (run too when asked).

Each candidate is profiled from its own copy: the kernel's source with the candidate's values substituted
(what ``--apply`` would write), in ``.nki-studio/tune-confirm/<file>.<kernel>-<UTC time>/`` of the project
(next to the tune cache) with the helper modules of the kernel's folder, never the user's file. The copies
are kept, each under its own name (``<file>_tune<rank>.py``), because ``calibrate`` simulates the kernel a
profile's lines point into. The profiles go where every remote profile goes (``remote.cacheDir``).
"""

from __future__ import annotations

import dataclasses
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nki_studio.protocol.calibration import CalibrateResult
from nki_studio.protocol.tune import ConfirmedCandidate, RemoteConfirmation, TuneReport
from nki_studio.remote.config import settings_from
from nki_studio.service import calibration, remote_profile
from nki_studio.service.profiles import LoadOptions
from nki_studio.service.remote_profile import RemoteConfigError, RemoteError
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import Kernel, prepare, require_trust
from nki_studio.tune.cache import cache_dir
from nki_studio.tune.confirmation import compare_order, measured, pending, select
from nki_studio.tune.substitute import substitute

__all__ = ["ConfirmOptions", "RemoteConfigError", "check", "confirm"]

CONFIRM_DIR = "tune-confirm"  # next to the tune cache, in the project's .nki-studio/


@dataclass(frozen=True)
class ConfirmOptions:
    """How many ranked candidates to profile, and whether to calibrate on their profiles afterwards."""

    count: int
    calibrate: bool = False


def check(settings: Settings) -> str:
    """The host the candidates will be profiled on, checked before a search starts. Raises ``Refused`` in an
    untrusted workspace (it runs the user's kernel on their host), ``RemoteConfigError`` naming the setting
    (``remote.host`` not set, or another unusable ``remote.*`` value)."""
    require_trust(settings)
    return str(settings_from(settings.remote).host)


def confirm(
    path: str,
    source: str,
    report: TuneReport,
    settings: Settings,
    options: ConfirmOptions,
    *,
    log: Callable[[str], None] = lambda _: None,
    on_progress: Callable[[str], None] = lambda _: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> RemoteConfirmation:
    """Profile the top ``options.count`` ranked candidates of ``report`` (the search of ``source``, the text
    of ``path``) on the host. A candidate whose profile fails (host unreachable, compile error, ...) carries
    the reason; the others go on. Raises what ``check`` raises, and ``SpecProblem``/``ConfigError`` when the
    kernel's spec no longer resolves."""
    host = check(settings)
    kernel = prepare(path, source, settings, kernel=report["kernel"])
    selection = select(report["candidates"], options.count)
    directory = _directory(path, report["kernel"])
    rows: list[ConfirmedCandidate] = []
    for row in selection.chosen:
        copy = _write_candidate(
            directory, path, substitute(source, report["kernel"], row["values"]), row["rank"]
        )
        out = pending(row, str(copy))
        rows.append(out)
        label = f"confirm #{out['rank']} ({len(rows)}/{len(selection.chosen)})"
        if cancelled():
            out["error"] = "cancelled"
            continue
        try:
            _profile(
                out,
                dataclasses.replace(kernel, path=str(copy)),
                settings,
                directory,
                log,
                cancelled,
                _prefixed(on_progress, label),
            )
        except (RemoteError, RemoteConfigError) as exc:
            out["error"] = str(exc)
    agrees = compare_order(rows, {r["rank"] or 0: r["tiedWith"] for r in selection.chosen})
    done = [r for r in rows if r["profile"]]
    result: CalibrateResult | None = None
    if options.calibrate and done:
        on_progress("calibrate: fitting the estimate to the profiles")
        result = calibration.calibrate(
            [r["profile"] for r in done],
            settings,
            calibration.CalibrateOptions(load=LoadOptions(explicit=[Path(r["source"]) for r in done])),
            on_progress=on_progress,
        )
    return {
        "host": host,
        "requested": options.count,
        "candidates": rows,
        "orderAgrees": agrees,
        "tiedNotSent": selection.tied_not_sent,
        "directory": str(directory),
        "calibrateCommand": calibrate_command(done),
        "calibration": result,
    }


def _profile(
    row: ConfirmedCandidate,
    kernel: Kernel,
    settings: Settings,
    root: Path,
    log: Callable[[str], None],
    cancelled: Callable[[], bool],
    on_progress: Callable[[str], None],
) -> None:
    """Profile one candidate's copy and fill in its measurement; raises ``RemoteError``."""

    def progress(stage: str, message: str) -> None:
        on_progress(f"[{stage}] {message}")

    job = remote_profile.job_for(kernel, settings, root)
    profile = remote_profile.run(job, log=log, progress=progress, cancelled=cancelled)
    progress("load", f"reading {profile.path}")
    measured(row, remote_profile.load(profile).metrics.kernel.latency_ns, str(profile.path))


def _prefixed(on_progress: Callable[[str], None], label: str) -> Callable[[str], None]:
    return lambda line: on_progress(f"{label} {line}")


def calibrate_command(rows: list[ConfirmedCandidate]) -> str:
    """``nki-studio calibrate PROFILE... --source COPY...`` for the measured rows ('' when none): each profile's
    lines point into its candidate's copy, which ``--source`` names."""
    if not rows:
        return ""
    sources = [arg for r in rows for arg in ("--source", r["source"])]
    return shlex.join(["nki-studio", "calibrate", *(r["profile"] for r in rows), *sources])


def _directory(path: str, kernel: str) -> Path:
    """A new folder for this confirmation's candidate copies (a same-second rerun gets a suffix)."""
    base = Path(cache_dir(path)).parent / CONFIRM_DIR
    stem = f"{Path(path).stem}.{kernel}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    target, n = base / stem, 1
    while target.exists():
        n += 1
        target = base / f"{stem}-{n}"
    target.mkdir(parents=True)
    return target


def _write_candidate(directory: Path, path: str, text: str, rank: int | None) -> Path:
    """``<file>_tune<rank>.py`` in ``directory`` holding ``text``, with the helper modules of the kernel's folder
    beside it (kernels import their helpers; the remote upload takes the folder's ``.py`` files)."""
    original = Path(path).resolve()
    for helper in original.parent.glob("*.py"):
        if helper.is_file() and helper != original and not (directory / helper.name).exists():
            shutil.copyfile(helper, directory / helper.name)
    copy = directory / f"{original.stem}_tune{rank}.py"
    copy.write_text(text, encoding="utf-8")
    return copy
