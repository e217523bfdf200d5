#!/usr/bin/env bash
# Build .devwheels/ for the GPU host (no network there): our wheels and the pure-Python
# dependencies the host lacks (it has matplotlib, seaborn, six and pillow, which gymnax imports).
# Run from the repository root on the CPU machine right before the device call, then ship it with
# the device tool's `carry: [".devwheels"]` and run benchmarks/device/run*.sh, which refuse
# wheels built from other sources than the tree that travels with them (.devwheels/SOURCES).
set -euo pipefail
exclude=$(git rev-parse --git-path info/exclude)  # also right in a git worktree
mkdir -p "$(dirname "$exclude")"
for ignored in /.devwheels/ /.devsite/ /.devout/; do
  grep -qx "$ignored" "$exclude" 2>/dev/null || echo "$ignored" >> "$exclude"
done
rm -rf .devwheels && mkdir -p .devwheels
.venv/bin/python -m nox -s wheels
cp .nox/_wheelhouse/sekai_*.whl .devwheels/
rm -f .devwheels/sekai_ray-*.whl .devwheels/sekai_broken_pack-*.whl  # no Ray there; a test fixture
get() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --platform any "$@"; }
get -d .devwheels importlib_metadata lazy-importer "gymnax==1.0.1" gymnasium \
  farama-notifications array-api-compat
bash benchmarks/device/sources_hash.sh > .devwheels/SOURCES
du -sh .devwheels
