"""nki-studio: lint, simulate and profile AWS Trainium NKI kernels (CLI and language server)."""

__version__ = "0.1.0"
