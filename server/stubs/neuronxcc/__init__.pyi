"""``neuronxcc``: the Neuron compiler package, as legacy kernels import NKI from it (``from neuronxcc import nki``).

Only its ``nki`` sub-package is stubbed (``neuronxcc.nki``: the legacy NKI API, Neuron <= 2.26).
"""

from . import nki as nki
