"""The MCP server (``nki-studio mcp``): lint, simulate, estimate, profile analysis and documentation as Model
Context Protocol tools, resources and a prompt, for coding agents.

Layer 8, a front end beside ``lsp``: it speaks the protocol through the official ``mcp`` SDK (imported by
absolute name; this package is ``nki_studio.mcp`` and never shadows it) and calls the core for everything it
answers. ``server`` wires the protocol; one module per tool family does the work and returns plain JSON.
"""
