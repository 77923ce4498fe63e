"""The ``nki-studio`` command line: one sub-command module per front-end job."""
