#!/usr/bin/env bash
# Device run 2 (from the repository root, after prepare.sh): the learning results (PPO) within
# $1 seconds (default 420; a shorter budget shortens every row alike), optionally only rows $2
# (comma-separated, see benchmarks/learning.py). $OUT gets learning.txt, results.md and
# learning.tar.gz (the curves and pictures). Exits with learning.py's status, 124 on timeout.
source benchmarks/device/_common.sh
timeout $(( ${1:-420} + 40 )) python3 benchmarks/learning.py --out .devout/learning --budget-seconds ${1:-420} ${2:+--only $2} 2>&1 | tee .devout/learning.txt
rc=$?
cp .devout/learning.txt "$OUT"/
cp .devout/learning/results.md "$OUT"/ 2>/dev/null
tar czf "$OUT/learning.tar.gz" -C .devout learning 2>/dev/null
if [ "$rc" -ne 0 ]; then echo "== learning: FAILED rc=$rc ($(elapsed))"; exit "$rc"; fi
echo "== done ($(elapsed))"
