"""Names NKI documents but the embedded simulator lacks: importing them works, *using* them raises
``NotImplementedInSimulator`` at the kernel line that uses them (never at import).

Module ``__getattr__`` hooks come from :func:`module_getattr`: a listed name answers with an :class:`Unimplemented`
placeholder; any other unknown name raises :class:`~nki_studio.sim.errors.MissingName` (an ``AttributeError`` too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from nki_studio.sim.errors import MissingName, NotImplementedInSimulator


class Unimplemented:
    """Stands for a documented name the simulator lacks; calling, indexing, iterating or reading an attribute
    raises ``NotImplementedInSimulator`` naming the API, the reason and the kernel line."""

    __slots__ = ("_api", "_detail")

    def __init__(self, api: str, detail: str) -> None:
        self._api = api
        self._detail = detail

    def _fail(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise NotImplementedInSimulator(self._api, self._detail)

    __call__ = _fail
    __getitem__ = _fail
    __iter__ = _fail
    __enter__ = _fail

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._fail()

    def __repr__(self) -> str:
        return f"<not implemented in the embedded simulator: {self._api}>"


def module_getattr(prefix: str, reasons: Mapping[str, str], unknown: str) -> Callable[[str], Any]:
    """A module ``__getattr__``: ``reasons`` names documented/legacy names (placeholder), others raise
    ``MissingName`` with ``unknown`` as the detail."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in reasons:
            return Unimplemented(f"{prefix}.{name}", reasons[name])
        raise MissingName(f"{prefix}.{name}", unknown)

    return __getattr__
