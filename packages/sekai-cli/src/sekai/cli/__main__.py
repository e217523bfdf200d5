"""``python -m sekai.cli``: the same command line as the ``sekai`` console script."""

from __future__ import annotations

import sys

from sekai.cli import main

if __name__ == "__main__":
    sys.exit(main())
