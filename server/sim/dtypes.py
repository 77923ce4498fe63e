"""NKI data types as NumPy dtypes (ml_dtypes for the low-precision formats) and the casting rules.

Model (language.md §2, isa.md §0.4, simulator.md §2, hardware.md §8):

* Every NKI dtype is a ``numpy.dtype``. Formats NumPy lacks come from ``ml_dtypes``. ``tfloat32`` and the
  packed MX types have no NumPy twin: each is a one-field structured dtype named after itself over its
  storage word (float32 / uint32 / uint16), tagged ``metadata={"nki": name}``. The field name makes each
  compare and hash as itself (``nl.float8_e4m3fn_x4 != nl.uint32``, and dicts keyed by dtypes keep them
  apart), which metadata alone does not (NumPy ignores it in ``==`` and ``hash``); :func:`storage_dtype`
  gives the word arrays are stored in.
* Precise mode (default, ``NKI_PRECISE_FP=1`` like the official simulator) stores each tensor in its own
  dtype, so every write rounds like hardware (round-to-nearest-even). Float32 mode (``NKI_PRECISE_FP=0``)
  stores low-precision floats as float32 with no rounding.
* Engines compute in float32; :func:`cast` converts float32 results to the destination: floats with RNE
  (ml_dtypes; an overflow of an fp8 format without infinity gives NaN, ml_dtypes' behaviour, hardware
  saturation is undocumented), integers by round-to-nearest-even then saturation (0.6.0 rule), NaN -> 0
  (inferred), bool as "non-zero".
"""

from __future__ import annotations

import os
from typing import Any

import ml_dtypes
import numpy as np


def _tagged(name: str, word: type[np.generic]) -> np.dtype[Any]:
    """A dtype with no NumPy twin: its own identity (the field name) over its storage ``word``."""
    return np.dtype([(name, word)], metadata={"nki": name})


TFLOAT32 = _tagged("tfloat32", np.float32)
FLOAT8_E5M2_X4 = _tagged("float8_e5m2_x4", np.uint32)
FLOAT8_E4M3FN_X4 = _tagged("float8_e4m3fn_x4", np.uint32)
FLOAT4_E2M1FN_X4 = _tagged("float4_e2m1fn_x4", np.uint16)

#: Every NKI dtype by its ``nl`` attribute name (language.md §2).
NKI_DTYPES: dict[str, np.dtype[Any]] = {
    "bool_": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    # 0.7: the wide NkiScalar dtype (1x1 sources of nisa.scalar_load, HBM offsets beyond 4 GB; nki-0.7.md §2.4).
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "tfloat32": TFLOAT32,
    "float32": np.dtype(np.float32),
    "float8_e4m3": np.dtype(ml_dtypes.float8_e4m3),
    "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "float8_e8m0fnu": np.dtype(ml_dtypes.float8_e8m0fnu),
    "float8_e5m2_x4": FLOAT8_E5M2_X4,
    "float8_e4m3fn_x4": FLOAT8_E4M3FN_X4,
    "float4_e2m1fn_x4": FLOAT4_E2M1FN_X4,
}
PACKED_X4 = frozenset({"float8_e5m2_x4", "float8_e4m3fn_x4", "float4_e2m1fn_x4"})
# Accepted spellings beyond the canonical names: numpy's names, torch's str(), legacy nl.bool.
_ALIASES = {
    "bool": "bool_",
    "float": "float32",
    "half": "float16",
    "int": "int32",
    "torch.bfloat16": "bfloat16",
}
FLOAT32 = np.dtype(np.float32)


_NAMES: dict[int, tuple[np.dtype[Any], str]] = {}  # id -> (dtype kept alive, name): hot path of every check


def dtype_name(dt: np.dtype[Any]) -> str:
    """The NKI name of a dtype (``bfloat16``, ``tfloat32``, ``float8_e4m3fn_x4``...)."""
    hit = _NAMES.get(id(dt))
    if hit is not None and hit[0] is dt:
        return hit[1]
    meta = dt.metadata
    if meta and "nki" in meta:
        name = str(meta["nki"])
    else:
        name = "bool_" if dt == np.bool_ else dt.name
    if len(_NAMES) < 1024:  # keyed by identity: metadata-tagged dtypes compare equal to their storage type
        _NAMES[id(dt)] = (dt, name)
    return name


def to_dtype(value: object) -> np.dtype[Any]:
    """Normalise a dtype given as an ``nl`` dtype, NumPy/ml_dtypes type, torch dtype or name string.

    Raises ``TypeError`` for anything else (e.g. a tensor passed where a dtype belongs).
    """
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, str) or type(value).__module__ == "torch":
        name = str(value)
        name = _ALIASES.get(name, name.removeprefix("torch."))
        if name in NKI_DTYPES:
            return NKI_DTYPES[name]
        raise TypeError(f"unknown dtype {value!r}")
    try:
        return np.dtype(value)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"not a dtype: {value!r}") from None


def is_float(dt: np.dtype[Any]) -> bool:
    """True for floating-point formats (ml_dtypes formats included, packed x4 types excluded)."""
    name = dtype_name(dt)
    if name in PACKED_X4:
        return False
    if name == "tfloat32":
        return True
    return dt.kind == "f" or (dt.kind == "V" and dt.itemsize <= 2) or _is_ml_float(dt)


def _is_ml_float(dt: np.dtype[Any]) -> bool:
    try:
        ml_dtypes.finfo(dt)
    except (ValueError, TypeError):
        return False
    return dt.kind not in "iub"


def is_int(dt: np.dtype[Any]) -> bool:
    """True for signed/unsigned integer dtypes (bool and packed x4 excluded)."""
    return dt.kind in "iu" and dtype_name(dt) not in PACKED_X4


def precise_default() -> bool:
    """Precise mode unless ``NKI_PRECISE_FP=0`` (simulator.md §2)."""
    return os.environ.get("NKI_PRECISE_FP", "1").strip() not in ("0", "false", "False")


def storage_dtype(dt: np.dtype[Any], precise: bool) -> np.dtype[Any]:
    """The dtype the simulator stores ``dt`` in: itself, or float32 for low-precision floats in float32 mode."""
    if dtype_name(dt) == "tfloat32":
        return FLOAT32
    if not precise and is_float(dt):
        return FLOAT32
    if dt.metadata:
        return dt[0]  # the storage word of a tagged type: packed types are raw unsigned words
    return dt


def sentinel(dt: np.dtype[Any]) -> float:
    """Fill value of fresh allocations: NaN for floats, 4 for integers (simulator.md §4)."""
    return float("nan") if is_float(dt) else 4


def _round_tf32(values: np.ndarray) -> np.ndarray:
    """Round float32 to tfloat32 precision (10 mantissa bits) with ties-to-even, kept in float32 storage."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    lsb = (bits >> 13) & 1
    rounded = (bits + np.uint32(0xFFF) + lsb) & np.uint32(0xFFFFE000)
    finite = np.isfinite(values)
    return np.where(finite, rounded, bits).view(np.float32)


def _float_to_int() -> Any:
    """Float -> integer rounding: nearest-even since the 0.6.0 simulator, NumPy's truncation before it (the legacy
    ``neuronxcc.nki`` simulator; simulator.md §7, 0.6.0 release notes)."""
    from nki_studio.sim.legacy.detect import legacy_semantics  # the run's NKI version lives in sim.context

    return np.trunc if legacy_semantics() else np.rint


def cast(values: np.ndarray, dt: np.dtype[Any], precise: bool = True) -> np.ndarray:
    """Convert computed values to the storage of NKI dtype ``dt`` with the hardware rounding rules.

    Float targets round to nearest even; integer targets round to nearest even (truncate under legacy
    semantics) then saturate (NaN becomes 0); bool is "non-zero". Returns an array in ``storage_dtype(dt, precise)``.
    """
    store = storage_dtype(dt, precise)
    if values.dtype == store and dtype_name(dt) != "tfloat32":
        return values
    if store == np.bool_:
        return np.asarray(values != 0)
    if store.kind in "iu":
        if values.dtype.kind in "iub":
            info = np.iinfo(store)
            return np.clip(values, info.min, info.max).astype(store)
        info = np.iinfo(store)
        rounded = _float_to_int()(np.asarray(values, dtype=np.float64))
        rounded = np.nan_to_num(rounded, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(rounded, info.min, info.max).astype(store)
    if dtype_name(dt) == "tfloat32":
        return _round_tf32(np.asarray(values, dtype=np.float32))
    if values.dtype.kind in "iu" and store.itemsize < 4:
        values = values.astype(
            np.float32
        )  # ml_dtypes converts ints directly; go through fp32 like the engines
    return values.astype(store)


def compute_values(raw: np.ndarray) -> np.ndarray:
    """Stored values as the engines see them: float32 (integers converted exactly where they fit)."""
    if raw.dtype == np.float32:
        return raw
    return raw.astype(np.float32)


def itemsize(dt: np.dtype[Any]) -> int:
    """Bytes per element on the device (the NKI dtype's size, not the float32-mode storage size)."""
    return dt.itemsize
