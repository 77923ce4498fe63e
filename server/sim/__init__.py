"""The embedded NumPy simulator of the ``nki`` API (``nki_studio.sim``)."""
