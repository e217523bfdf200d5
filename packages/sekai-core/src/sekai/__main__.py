"""``python -m sekai``: run the CLI, or say how to install it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def _run() -> int:
    try:
        cli = importlib.import_module("sekai.cli")
    except ModuleNotFoundError as exc:
        if exc.name != "sekai.cli":
            raise
        # The hint finder's message names the distribution: "... pip install sekai-cli".
        print(f"error: {exc}", file=sys.stderr)
        return 2  # the CLI's code for an ImportError (1 means check found errors)
    main: Callable[[], int] = cli.main
    return main()


if __name__ == "__main__":
    sys.exit(_run())
