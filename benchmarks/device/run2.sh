#!/usr/bin/env bash
# Device run 2 (from the repository root, after prepare.sh): the learning results (PPO) within
# $1 seconds (default 420; a shorter budget shortens every row alike), optionally only rows $2
# (comma-separated, see benchmarks/learning.py). $OUT gets learning.txt as it is written, then
# results.md and learning.tar.gz (the curves and pictures; also when stopped by a signal).
# Exits with learning.py's status, 124 on timeout.
source benchmarks/device/_common.sh
pack() {
  cp .devout/learning/results.md "$OUT"/ 2>/dev/null
  tar czf "$OUT/learning.tar.gz" -C .devout learning 2>/dev/null
}
trap pack EXIT
trap "exit 143" TERM INT  # so that the EXIT trap packs what is there
timeout $(( ${1:-420} + 40 )) python3 benchmarks/learning.py --out .devout/learning --budget-seconds ${1:-420} ${2:+--only $2} 2>&1 | tee "$OUT/learning.txt"
rc=$?
if [ "$rc" -ne 0 ]; then echo "== learning: FAILED rc=$rc ($(elapsed))"; exit "$rc"; fi
echo "== done ($(elapsed))"
