"""The wire protocol, declared once: the JSON shapes nki-studio sends to editors, agents and scripts (TypedDicts),
and the generator of their JSON Schema and TypeScript types. Imports nothing of ``nki_studio``."""
