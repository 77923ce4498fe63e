"""``nki.dtype``: the NKI dtypes as a module (``import nki.dtype as nt; nt.float8_e4m3``), used by
nki-library tests and annotations (``dtype: nki.dtype``)."""

from nki_studio.sim.dtypes import NKI_DTYPES

globals().update(NKI_DTYPES)
__all__ = sorted(NKI_DTYPES)
