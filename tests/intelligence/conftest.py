"""Make the helpers of this folder (``reference_api``) importable from its tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "lsp"))  # lsp_harness: the real server over stdio
