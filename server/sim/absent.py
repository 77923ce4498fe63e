"""Stand-ins for modules a kernel's file imports that are not installed here, bound by the migration proof
(``service.absent_imports``) in place of those imports when the kernel itself never uses them.

nki-samples' tutorial kernels import what only their scripts use at module level (``import
torch_xla.core.xla_model as xm`` beside the softmax kernel, ``from scipy.special import softmax`` for the SD
attention tutorial's NumPy reference): without the module the file cannot even load, so the kernel could not be
simulated. A stand-in lets the file load; any use of it (a call, or an attribute of a called name) fails naming
the module, so a kernel that did use it fails instead of computing something else.
"""

from __future__ import annotations

from typing import Any, NoReturn

from nki_studio.sim.errors import SimulationError


class Absent:
    """``name`` (a module or a name imported from one) that is not installed here: its attributes are stand-ins
    too, and calling one fails."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Absent:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Absent(f"{self._name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise SimulationError(
            f"{self._name} was called, but {self._name.split('.')[0]} is not installed here: the migration "
            "proof stood in for it because the kernel does not use it"
        )

    def __repr__(self) -> str:
        return f"<absent {self._name}>"
