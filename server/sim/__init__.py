"""The embedded NumPy simulator of the ``nki`` API (``nki_studio.sim``).

Layers (data flows one way):

* ``dtypes`` — NKI dtypes (ml_dtypes), storage in precise / float32 mode, casting rules.
* ``tensor`` / ``views`` — ``NkiTensor`` = storage + strided view; ``read(t)``, ``write(dst, values,
  accumulate=)``, ``allocate(...)``; indexing, ``nl.ds``, view methods, ``.ap()``.
* ``memory`` — memory regions and the SBUF/PSUM capacity model; ``context`` — the current simulation
  (options, per-core state, ``issue()`` per instruction: check-in, budget, trace); ``scalars`` —
  registers / NkiScalar; ``checks`` — operand checks; ``errors`` — exceptions naming the kernel line.
* ``isa/``, ``alu``, ``collectives`` — ``nki.isa`` / operator tables / ``nki.collectives``;
  ``language/`` — ``nki.language``; ``dropin`` — the ``nki`` package for unmodified kernels;
  ``api`` — ``simulate(...)`` returning a ``SimResult``.

How an ISA instruction is written on top of this API::

    from nki_studio.sim import checks, context
    from nki_studio.sim.tensor import read, write

    def tensor_tensor(dst, data1, data2, op, engine=None, name=None):
        context.issue("nisa.tensor_tensor", "vector", reads={"data1": data1, "data2": data2},
                      writes={"dst": dst}, flops=dst.size)
        checks.same_partitions("nisa.tensor_tensor", dst=dst, data1=data1, data2=data2)
        write(dst, OPS[op](read(data1), read(data2)))
"""
