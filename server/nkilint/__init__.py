"""nkilint: NKI-aware lint rules over the analysis core. Public entry points live in ``api``."""
