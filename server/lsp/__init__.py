"""The nki-studio language server (pygls 2): settings, jobs, diagnostics conversion and feature modules."""
