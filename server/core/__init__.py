"""What every layer shares: the result model (``findings``), the catalogue of diagnostic codes (``codes``), the
``pyproject.toml`` lookup (``pyproject``), code-unit column counting (``text_units``) and what the installed
distribution says about itself (``distribution``: project URLs, rule pages). Standard library only; nothing
here imports another layer."""
