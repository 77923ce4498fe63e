"""Legacy ``neuronxcc.nki.language.constants``: ``sizeinbytes(dtype)``.

No Neuron documentation page lists this module; the meaning is inferred from its use in nki-samples'
``reference/rmsnorm_quant/rmsnorm_quant_constants.py`` (the bytes of one element: 4 for ``np.float32``, 1 for
``nl.float8_e4m3``, as its comment says) and from ``neuron_dtypes.sizeinbytes``, which nki-library's tests use the
same way.
"""

from __future__ import annotations

from nki_studio.sim.dtypes import to_dtype

__all__ = ["sizeinbytes"]


def sizeinbytes(dtype: object) -> int:
    """The size of one element of ``dtype`` in bytes."""
    return int(to_dtype(dtype).itemsize)
