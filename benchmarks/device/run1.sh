#!/usr/bin/env bash
# Device run 1 (from the repository root, after prepare.sh): the accelerator and scaling
# benchmarks, about 5 minutes (ACCEL_B + SCALE_B seconds of rows, each under its own timeout).
# A failed or timed-out benchmark does not stop the next one; the script then exits non-zero.
# $OUT gets machine.txt, bench_accel.txt and bench_scaling.txt, each as it is written.
source benchmarks/device/_common.sh
# Each probe reports its own status: a missing GPU or library shows here, not as n/a rows later.
probe() { local name=$1; shift; "$@" 2>&1 | tee -a "$OUT/machine.txt"; report "machine: $name" $?; }
nproc | tee "$OUT/machine.txt"
probe gpu nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
probe "jax and torch" python3 -c "import sys, jax, torch; print(sys.version.split()[0], 'jax', jax.__version__, jax.devices(), 'torch', torch.__version__, torch.cuda.is_available())"
probe gymnax python3 -c "import gymnax; print('gymnax', gymnax.__version__)"
echo "== bench_accel ($(elapsed))"
timeout ${ACCEL_T:-185} python3 benchmarks/bench_accel.py --budget-seconds ${ACCEL_B:-150} 2>&1 | tee "$OUT/bench_accel.txt"
report "bench_accel" $?
echo "== bench_scaling ($(elapsed))"
timeout ${SCALE_T:-120} python3 benchmarks/bench_scaling.py --budget-seconds ${SCALE_B:-90} 2>&1 | tee "$OUT/bench_scaling.txt"
report "bench_scaling" $?
if [ "$failed" -ne 0 ]; then echo "== done with failures ($(elapsed))"; exit 1; fi
echo "== done ($(elapsed))"
