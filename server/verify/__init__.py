"""Simulate a kernel: input specs, the sandboxed worker runner, the correctness oracle and the text report of
the result, the estimate included (``nki_studio.verify``; the estimate itself is ``nki_studio.estimate``). Front
ends: ``nki_studio.cli.simulate`` and ``nki_studio.lsp.features.simulate``.
"""
