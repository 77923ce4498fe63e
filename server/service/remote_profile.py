"""Profile a kernel on a remote Trainium host (``nki_studio.remote``), decided once for every front end: the
trust decision (``service.simulation``'s refusal: it runs the user's kernel on their host), the job from the
kernel the simulation resolves (same spec, same target) and the ``remote`` settings object, the round trip,
and reading the downloaded profile.

The flow pulls the profile readers (NumPy): imported when a run starts, not when a front end imports this.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nki_studio.remote.cache import default_root
from nki_studio.remote.config import RemoteConfigError, settings_from
from nki_studio.remote.errors import RemoteError
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import Kernel, require_trust

if TYPE_CHECKING:
    from nki_studio.profile.analyze import ProfileReport
    from nki_studio.remote.flow import RemoteJob, RemoteProfile

__all__ = ["RemoteConfigError", "RemoteError", "job_for", "load", "run", "stage_share"]


def job_for(kernel: Kernel, settings: Settings, root: Path | None, *, target: str | None = None) -> RemoteJob:
    """The remote job of ``kernel`` under the settings' ``remote`` object (``cacheDir``: the local profile
    cache); ``root``: the folder whose layout is mirrored on the host; ``target``: the platform target,
    default the kernel's generation. Raises ``Refused`` in an untrusted workspace, ``RemoteConfigError``
    (a ValueError naming the setting) for unusable settings."""
    from nki_studio.remote.flow import RemoteJob

    require_trust(settings)
    raw = settings.remote
    config = settings_from(raw, target=target or kernel.generation.value)
    cache = raw.get("cacheDir")
    return RemoteJob(
        Path(kernel.path).resolve(),
        kernel.spec,
        config,
        Path(cache) if isinstance(cache, str) and cache else default_root(),
        root,
    )


def run(
    job: RemoteJob,
    *,
    log: Callable[[str], None],
    progress: Callable[[str, str], None],
    cancelled: Callable[[], bool] = lambda: False,
) -> RemoteProfile:
    """Upload, compile, capture, view and download; raises ``RemoteError`` whose message says what to do."""
    from nki_studio.remote.flow import fetch_profile

    return fetch_profile(job, log=log, progress=progress, cancelled=cancelled)


def load(profile: RemoteProfile) -> ProfileReport:
    """The downloaded profile read and mapped onto the local files; raises ``RemoteError``."""
    from nki_studio.remote.flow import load_report

    return load_report(profile)


def stage_share(stage: str) -> int:
    """How far along the round trip a stage is, in percent (for progress bars)."""
    from nki_studio.remote.flow import STAGES

    return int(100 * STAGES.index(stage) / len(STAGES))
