"""``nl.int64`` (NKI 0.7): the wide NkiScalar dtype, loaded from and stored to 1x1 tensors without narrowing."""

import numpy as np
import pytest
from nki_studio.sim import context
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.tensor import from_array, to_array


def test_int64_is_its_own_dtype():
    assert nl.int64 == np.int64 and nl.int64 != nl.int32 and nl.int64 != nl.uint32


def test_int64_scalar_round_trip_keeps_values_beyond_32_bits():
    big = 3 * 2**40 + 5
    with context.session():
        src = from_array(np.array([[big]], np.int64), nl.shared_hbm)[0]
        s = nisa.scalar_load(src)
        assert s.dtype == "int64" and s.sim_value() == big
        out = nl.ndarray((1, 1), nl.int64, buffer=nl.shared_hbm)
        nisa.scalar_store(out, s * 2 - 1)
        assert to_array(out).tolist() == [[2 * big - 1]]
        narrow = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        with pytest.raises(HardwareLimitError, match="int64 scalar cannot be stored into a int32"):
            nisa.scalar_store(narrow, s)
        with pytest.raises(TypeError, match="cannot be compared"):
            _ = s < 3
