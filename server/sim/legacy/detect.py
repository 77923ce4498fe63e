"""Whether a kernel is legacy code: its module's names refer to the legacy ``neuronxcc.nki`` modules."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from nki_studio.model.targets import LEGACY

LEGACY_NOTE = "legacy neuronxcc.nki semantics: the kernel's module imports neuronxcc.nki"
_PREFIX = "nki_studio.sim.legacy."


def uses_legacy_api(func: Callable[..., Any]) -> bool:
    """True when ``func``'s globals hold a legacy module or a name imported from one (``from neuronxcc.nki
    import language as nl``, ``from neuronxcc.nki.language import par_dim``, a legacy ``@nki.jit`` kernel)."""
    names = getattr(inspect.unwrap(func), "__globals__", None)
    if not isinstance(names, dict):
        return False
    for value in names.values():
        module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        if isinstance(module, str) and module.startswith(_PREFIX):
            return True
    return False


def legacy_semantics() -> bool:
    """Whether the running simulation (if any) has the legacy NKI version."""
    from nki_studio.sim import context

    ctx = context.current_or_none()
    return ctx is not None and ctx.options.nki_version <= LEGACY
