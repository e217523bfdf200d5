# Sourced by run1.sh and run2.sh (from the repository root, on the GPU host).
# - install .devwheels afresh into .devsite: a warm machine's old .devsite would otherwise keep
#   the previous wheels (pip --target skips folders that exist), and the run would measure old code;
# - refuse wheels built from other sources than the tree that travelled with them;
# - logs go straight to $OUT (what is there comes back even when the command is killed at its
#   limit); the learning curves are packed into one file, as the tool returns at most 8.
set -uo pipefail
start=$(date +%s)
failed=0
elapsed() { echo "t=$(( $(date +%s) - start ))s"; }
# report NAME RC: print the step's status and remember a failure.
report() {
  if [ "$2" -eq 0 ]; then echo "== $1: ok ($(elapsed))"; else echo "== $1: FAILED rc=$2 ($(elapsed))"; failed=1; fi
}
if [ "$(cat .devwheels/SOURCES 2>/dev/null)" != "$(bash benchmarks/device/sources_hash.sh)" ]; then
  echo "== .devwheels were not built from this tree's sources: rerun benchmarks/device/prepare.sh"
  exit 4
fi
rm -rf .devsite .devout && mkdir -p .devout "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target .devsite .devwheels/*.whl \
  || { echo "== install: FAILED rc=$?"; exit 3; }
export PYTHONPATH=$PWD/.devsite PYTHONUNBUFFERED=1
