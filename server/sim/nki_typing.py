"""Legacy ``neuronxcc.nki.typing`` (``nt``): annotation-only names such as ``nt.tensor[shape, dtype]``."""

from __future__ import annotations

from typing import Any


class _Annotation:
    """Subscriptable placeholder: ``nt.tensor[...]`` evaluates to itself (annotations carry no semantics)."""

    def __class_getitem__(cls, item: Any) -> type[_Annotation]:
        return cls


tensor = mutable_tensor = scalar = _Annotation
