#!/usr/bin/env bash
# Device run 1 (from the repository root, after prepare.sh): install our wheels, then the accelerator and scaling benchmarks.
# Every step reports its status; a failed or timed-out benchmark does not stop the next one, but
# the script then exits non-zero after the last (pipefail: the status of `timeout`, not of `tee`).
set -uo pipefail
start=$(date +%s)
failed=0
elapsed() { echo "t=$(( $(date +%s) - start ))s"; }
# report NAME RC: print the step's status and remember a failure.
report() {
  if [ "$2" -eq 0 ]; then echo "== $1: ok ($(elapsed))"; else echo "== $1: FAILED rc=$2 ($(elapsed))"; failed=1; fi
}
python3 -m pip install -q --no-index --no-deps --no-compile --target .devsite .devwheels/*.whl \
  || { echo "== install: FAILED rc=$?"; exit 3; }
export PYTHONPATH=$PWD/.devsite PYTHONUNBUFFERED=1
# gymnax imports matplotlib and six at import: bring them (not numpy) when the host has none.
if ! python3 -c "import matplotlib, six, seaborn" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target .devsite .devwheels/mpl/*.whl 2>&1 | tail -2
  report "matplotlib install" $?
fi
mkdir -p "$OUT"
{ nproc; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; \
  python3 -c "import sys, jax, torch; print(sys.version.split()[0], 'jax', jax.__version__, jax.devices(), 'torch', torch.__version__, torch.cuda.is_available())"; } 2>&1 | tee "$OUT/machine.txt"
report "machine" $?
echo "== bench_accel ($(elapsed))"
timeout ${ACCEL_T:-250} python3 benchmarks/bench_accel.py --budget-seconds ${ACCEL_B:-215} 2>&1 | tee "$OUT/bench_accel.txt"
report "bench_accel" $?
echo "== bench_scaling ($(elapsed))"
timeout ${SCALE_T:-220} python3 benchmarks/bench_scaling.py --budget-seconds ${SCALE_B:-170} 2>&1 | tee "$OUT/bench_scaling.txt"
report "bench_scaling" $?
if [ "$failed" -ne 0 ]; then echo "== done with failures ($(elapsed))"; exit 1; fi
echo "== done ($(elapsed))"
