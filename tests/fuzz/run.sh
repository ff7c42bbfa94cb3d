#!/usr/bin/env bash
# Builds the libFuzzer targets of trainsim's input readers with clang (in its own build tree, by
# default build-fuzz) and runs each in turn for SECONDS seconds (default 60) from its seed corpus
# tests/data/fuzz/<reader>. Needs clang and libFuzzer (Debian 12: clang, libclang-rt-14-dev).
#
#   tests/fuzz/run.sh [SECONDS [READER...]]     readers: scenario platform layer_graph paleo onnx csv
#
# Inputs the fuzzer finds interesting go to <build>/fuzz-corpus/<reader>, never into the seeds.
# An input that crashes a reader is written to <build>/fuzz-findings/; the script runs every
# reader and exits 1 if any of them had a finding. JOBS sets the build's parallelism.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=(scenario platform layer_graph paleo onnx csv)
build=${TRAINSIM_FUZZ_BUILD_DIR:-$root/build-fuzz}

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DTRAINSIM_FUZZ=ON >/dev/null
cmake --build "$build" -j"${JOBS:-$(nproc)}" --target "${readers[@]/#/fuzz_}"

# The targets run in an empty folder, so a file an input names relative to it does not exist.
workdir="$build/fuzz-workdir"
rm -rf "$workdir"
mkdir -p "$workdir" "$build/fuzz-findings"
failed=()
for reader in "${readers[@]}"; do
  seeds="$root/tests/data/fuzz/$reader"
  [ -d "$seeds" ] || { echo "run.sh: no seed corpus $seeds" >&2; exit 2; }
  corpus="$build/fuzz-corpus/$reader"
  mkdir -p "$corpus"
  echo "== $reader: ${seconds} s" >&2
  if ! (cd "$workdir" && "$build/tests/fuzz/fuzz_$reader" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
          -print_final_stats=1 -artifact_prefix="$build/fuzz-findings/$reader-" "$corpus" "$seeds"); then
    failed+=("$reader")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run.sh: findings in ${failed[*]} (inputs in $build/fuzz-findings)" >&2
  exit 1
fi
echo "run.sh: no findings in ${readers[*]} after ${seconds} s each" >&2
