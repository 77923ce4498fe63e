"""The simulator's side of ``model.toolchain_rejections``: refuse or warn where the toolchain rejects a construct."""

from __future__ import annotations

from nki_studio.model.toolchain_rejections import Behaviour, Rejection
from nki_studio.sim import context
from nki_studio.sim.errors import SimulationError


def _message(entry: Rejection, api: str | None, detail: str | None) -> str:
    message = f"{api}: {entry.message}" if api else entry.message
    return f"{message}, {detail}" if detail else message


def refusal(entry: Rejection, api: str | None = None, detail: str | None = None) -> SimulationError:
    """The error of an entry the simulation cannot run past (its behaviour must be an error), to raise."""
    assert entry.simulation is Behaviour.ERROR, f"{entry.code}: the simulator cannot run past it"
    return SimulationError(_message(entry, api, detail))


def toolchain_rejects(entry: Rejection, api: str | None = None, detail: str | None = None) -> None:
    """Apply ``entry`` to the running simulation when its NKI version rejects the construct: raise its message
    (prefixed with ``api``, followed by ``detail``) for an error; for a warning, record it and carry on."""
    ctx = context.current()
    if not entry.applies(ctx.options.nki_version):
        return
    if entry.simulation is Behaviour.ERROR:
        raise refusal(entry, api, detail)
    ctx.warn(_message(entry, api, detail))
