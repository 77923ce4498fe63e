"""What every layer shares: the result model (``findings``), the catalogue of diagnostic codes (``codes``) and
the ``pyproject.toml`` lookup (``pyproject``). Standard library only; nothing here imports another layer."""
