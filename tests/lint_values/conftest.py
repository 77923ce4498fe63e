"""Helpers for the value-interpreter and NKI3xx-NKI5xx rule tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lint"))
