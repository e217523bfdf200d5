#!/usr/bin/env bash
# Print one hash of the distributions' sources (packages/*/src), from the repository root:
# prepare.sh stores it in .devwheels/SOURCES, and the device runs compare the tree they got.
set -euo pipefail
find packages -path '*/src/*' -type f \( -name '*.py' -o -name 'py.typed' \) -not -path '*/__pycache__/*' \
  | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1
