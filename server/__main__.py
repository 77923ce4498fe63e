"""``python -m nki_studio`` runs the CLI (used by the VS Code extension with a bundled interpreter)."""

import sys

from nki_studio.cli.main import main

sys.exit(main())
