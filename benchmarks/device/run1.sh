#!/usr/bin/env bash
# Device run 1 (from the repository root, after prepare.sh): install our wheels, then the accelerator and scaling benchmarks.
set -u
start=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --target .devsite .devwheels/*.whl \
  || { echo "install failed"; exit 3; }
export PYTHONPATH=$PWD/.devsite PYTHONUNBUFFERED=1
# gymnax imports matplotlib and six at import: bring them (not numpy) when the host has none.
python3 -c "import matplotlib, six, seaborn" 2>/dev/null || python3 -m pip install -q --no-index --no-deps \
  --no-compile --target .devsite .devwheels/mpl/*.whl 2>&1 | tail -2 || echo "matplotlib install failed"
mkdir -p "$OUT"
{ nproc; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; \
  python3 -c "import sys, jax, torch; print(sys.version.split()[0], 'jax', jax.__version__, jax.devices(), 'torch', torch.__version__, torch.cuda.is_available())"; } 2>&1 | tee "$OUT/machine.txt"
echo "== bench_accel (t=$(( $(date +%s) - start ))s)"
timeout ${ACCEL_T:-250} python3 benchmarks/bench_accel.py --budget-seconds ${ACCEL_B:-215} 2>&1 | tee "$OUT/bench_accel.txt"
echo "== bench_scaling (t=$(( $(date +%s) - start ))s)"
timeout ${SCALE_T:-220} python3 benchmarks/bench_scaling.py --budget-seconds ${SCALE_B:-170} 2>&1 | tee "$OUT/bench_scaling.txt"
echo "== done (t=$(( $(date +%s) - start ))s)"
