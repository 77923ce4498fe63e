"""The embedded NumPy simulator of the ``nki`` API (``nki_studio.sim``).

Layers (data flows one way):

* ``dtypes`` — NKI dtypes (ml_dtypes), storage in precise / float32 mode, casting rules.
* ``tensor`` / ``views`` / ``access`` — ``NkiTensor`` = storage + strided view; ``allocate(...)``; indexing,
  ``nl.ds``, view methods, ``.ap()``; ``read(t)``, ``write(dst, values, accumulate=)``.
* ``memory`` — memory regions and the SBUF/PSUM capacity model; ``context`` — the current simulation
  (options, per-core state, ``issue()`` per instruction: check-in, budget, trace); ``scalars`` —
  registers / NkiScalar; ``checks`` — operand checks; ``errors`` — exceptions naming the kernel line.
* ``isa/``, ``alu``, ``collectives`` — ``nki.isa`` / operator tables / ``nki.collectives``;
  ``language/`` — ``nki.language``; ``dropin`` — the ``nki`` package for unmodified kernels;
  ``api`` — ``simulate(...)`` returning a ``SimResult``.

How an ISA instruction is written on top of this API::

    from nki_studio.sim import checks, context, untaken
    from nki_studio.sim.access import read, write

    @untaken.instruction  # in an untaken nl.if_else branch: checked up to issue, then its handle is returned
    def tensor_tensor(dst, data1, data2, op, engine=None, name=None):
        checks.same_partitions("nisa.tensor_tensor", dst=dst, data1=data1, data2=data2)  # checks first
        context.issue("nisa.tensor_tensor", "vector", reads={"data1": data1, "data2": data2},
                      writes={"dst": dst}, flops=dst.size)
        write(dst, OPS[op](read(data1), read(data2)))  # then the execution
        return NkiInstruction("nisa.tensor_tensor", name)

Kernel instances: one per (collective rank, logical core), in lockstep on one thread when there are several
(``schedule.py``). ``context.current_core()`` gives ``core_id``/``num_cores`` (LNC), ``rank``/``num_ranks``
(collectives) and ``registers`` (engine-private state). The shared ``context.current()`` has ``shared`` +
``lock`` (cross-instance state).
Under LNC=2 the n-th ``shared_hbm`` allocation of both cores is the same tensor.

Runtime-offset views (``.ap(scalar_offset=|vector_offset=)``) whose offset lands outside the storage are
created anyway; ``access.out_of_bounds(t)`` gives their out-of-range mask, ``read(t)`` / ``write(t, ...)``
raise on those elements unless ``read(t, oob_fill=0)`` / ``write(dst, v, where=~mask)`` skip them (how
``dma_copy(oob_mode=skip)`` is meant to be built).
"""

from typing import Any

__all__ = ["SimResult", "load_kernel_module", "simulate"]


def __getattr__(name: str) -> Any:
    # Lazy, so importing nki_studio.sim.trace (cost model, LSP) does not load the whole simulator.
    if name in __all__:
        from nki_studio.sim import api

        return getattr(api, name)
    raise AttributeError(name)
