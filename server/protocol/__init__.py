"""The wire protocol, declared once: the JSON shapes nki-studio sends to editors, agents and scripts (TypedDicts:
``simulation``, ``analysis``, ``profile``, ``heatmap``), every custom notification (``notifications``), command
(``commands``) and ``--json`` output (``outputs``), and the generator of their JSON Schema and TypeScript
(``schema``). Imports nothing of ``nki_studio`` outside itself, and only the standard library."""
