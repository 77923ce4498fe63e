"""``nki-studio tune``: search a kernel's variants (module constants and keyword defaults), verify each in the
sandboxed simulator, rank the passing ones by the calibrated estimate (issue 31)."""
