"""Simulate a kernel: input specs, the sandboxed worker runner, the correctness oracle and the estimated cost
model (``nki_studio.verify``). Front ends: ``nki_studio.cli.simulate`` and ``nki_studio.lsp.features.simulate``.
"""
