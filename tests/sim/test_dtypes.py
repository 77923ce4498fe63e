"""dtypes: names, storage in precise / float32 mode, RNE + saturating casts (hardware.md §8)."""

import ml_dtypes
import numpy as np
import pytest
from nki_studio.sim import dtypes


def test_every_nki_dtype_round_trips_its_name():
    for name, dt in dtypes.NKI_DTYPES.items():
        assert dtypes.dtype_name(dt) == name
        assert dtypes.to_dtype(name) is dt or dtypes.to_dtype(name) == dt


def test_to_dtype_accepts_numpy_types_torch_names_and_rejects_junk():
    assert dtypes.to_dtype(np.float32) == np.float32
    assert dtypes.to_dtype("torch.bfloat16") == ml_dtypes.bfloat16
    assert dtypes.to_dtype("bool") == np.bool_
    with pytest.raises(TypeError):
        dtypes.to_dtype("float128x")


def test_float_to_int_rounds_half_to_even_and_saturates():
    vals = np.array([2.5, 3.5, -2.5, 1e10, -1e10, np.nan, 127.4], np.float32)
    assert dtypes.cast(vals, np.dtype(np.int8)).tolist() == [2, 4, -2, 127, -128, 0, 127]
    assert dtypes.cast(np.array([-3.0, 70000.0], np.float32), np.dtype(np.uint16)).tolist() == [0, 65535]


def test_bfloat16_rounding_is_nearest_even():
    # 1 + 2^-8 is exactly halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
    v = np.array([1 + 2**-8, 1 + 3 * 2**-8], np.float32)
    out = dtypes.cast(v, dtypes.NKI_DTYPES["bfloat16"]).astype(np.float32)
    assert out.tolist() == [1.0, 1 + 2**-6]


def test_float32_mode_keeps_full_precision_for_low_precision_types():
    bf16 = dtypes.NKI_DTYPES["bfloat16"]
    assert dtypes.storage_dtype(bf16, precise=False) == np.float32
    out = dtypes.cast(np.array([1 + 2**-8], np.float32), bf16, precise=False)
    assert out.dtype == np.float32 and out[0] == np.float32(1 + 2**-8)


def test_tfloat32_keeps_ten_mantissa_bits():
    tf32 = dtypes.NKI_DTYPES["tfloat32"]
    v = np.array([1 + 2**-10, 1 + 2**-11, 1 + 3 * 2**-11], np.float32)
    assert dtypes.cast(v, tf32).tolist() == [1 + 2**-10, 1.0, 1 + 2**-9]


def test_sentinels_match_the_official_simulator():
    assert np.isnan(dtypes.sentinel(dtypes.NKI_DTYPES["bfloat16"]))
    assert dtypes.sentinel(dtypes.NKI_DTYPES["int32"]) == 4


def test_precise_default_follows_environment(monkeypatch):
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    assert dtypes.precise_default() is False
    monkeypatch.delenv("NKI_PRECISE_FP")
    assert dtypes.precise_default() is True


def test_every_nki_dtype_compares_and_hashes_as_itself():
    """Dicts keyed by dtypes keep every dtype apart; no dtype equals another (nor its storage word)."""
    values = list(dtypes.NKI_DTYPES.values())
    assert len(set(values)) == len(values)
    for name, dt in dtypes.NKI_DTYPES.items():
        others = [o for n, o in dtypes.NKI_DTYPES.items() if n != name]
        assert all(dt != o for o in others), name
    for name in ("float8_e4m3fn_x4", "float8_e5m2_x4"):
        assert dtypes.NKI_DTYPES[name] != np.uint32
        assert dtypes.storage_dtype(dtypes.NKI_DTYPES[name], True) == np.uint32
    assert dtypes.NKI_DTYPES["tfloat32"] != np.float32
