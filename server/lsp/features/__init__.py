"""Language-server feature modules; each exposes ``register(server)`` and is listed in ``lsp.server.FEATURES``."""
