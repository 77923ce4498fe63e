"""The legacy ``neuronxcc.nki`` API (NKI "Beta 1", Neuron 2.26-2.29) in the embedded simulator.

Legacy kernels import ``neuronxcc.nki``; ``sim.dropin`` maps those imports to the modules of this package, which
reuse the current simulator and add what the legacy API had on top: index tiles (``index_tiles``), indexing with
them and block dimensions (``indexing``), ``mask=`` (``masks``), tile operators (``operators``), value-returning
ISA calls (``isa``), SPMD grids (``spmd``) and the legacy entry points (``entry``, ``compiler``,
``torch_neuronx``). Facts come from the versioned legacy pages (``/en/v2.26.1/nki/api/...``); the ones the pages
do not state are marked *inferred* where they are used.
"""
