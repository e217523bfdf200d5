#!/usr/bin/env bash
# Device run 2 (from the repository root, after prepare.sh): the learning results (PPO), within the budget given as $1 seconds.
# Exits with learning.py's status, or 124 when `timeout` stopped it (pipefail: not `tee`'s 0).
set -uo pipefail
start=$(date +%s)
elapsed() { echo "t=$(( $(date +%s) - start ))s"; }
python3 -m pip install -q --no-index --no-deps --no-compile --target .devsite .devwheels/*.whl \
  || { echo "== install: FAILED rc=$?"; exit 3; }
export PYTHONPATH=$PWD/.devsite PYTHONUNBUFFERED=1
mkdir -p "$OUT/learning"
timeout $(( ${1:-300} + 40 )) python3 benchmarks/learning.py --out "$OUT/learning" --budget-seconds ${1:-300} ${2:+--only $2} 2>&1 | tee "$OUT/learning.txt"
rc=$?
if [ "$rc" -ne 0 ]; then echo "== learning: FAILED rc=$rc ($(elapsed))"; exit "$rc"; fi
echo "== done ($(elapsed))"
