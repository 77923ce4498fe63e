"""Editor and language-server settings: the one declaration (``declaration``) and what is generated from it
(``generate``: package.json, the extension's key lists, the table of docs/settings.md)."""
