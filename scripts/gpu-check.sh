#!/usr/bin/env bash
# One-shot check on an offline GPU machine: builds Kokkos (CUDA) and stencil
# from the sources carried in .deps/src (see `scripts/bootstrap.sh
# --fetch-only`), runs the tests, the installed-package example and the
# benchmarks, and leaves the logs plus the benchmark JSON as flat files in
# $OUT (default ./gpu-out).
#
#   OUT=/some/dir scripts/gpu-check.sh [--arch ARCH]
#   STENCIL_PERF_ARGS="--benchmark_filter=..."  arguments for stencil_perf
#                                       (default: none, i.e. full sizes)
#   STENCIL_SANITIZE=0                  skip the compute-sanitizer runs of the
#                                       native tests (STENCIL_SANITIZE_FILTER
#                                       narrows them with a gtest filter)
#   STENCIL_GPU_CHECK_BUDGET=540        seconds for the whole check; the
#                                       tests and benchmarks are cut short
#                                       to end within it
#   STENCIL_TEST_TIMEOUT=120            seconds per test
#
# Files in $OUT (never more than 7, since some transports return only a
# few): summary.txt, env.txt (tools, nvidia-smi), build.log (Kokkos and
# stencil builds, install check), ctest.log (tests, then the installed
# heat2d), perf.log, perf_results.json, and CMakeCache.txt if the build fails.
#
# Not `set -e`: a failing step must still leave its log and the summary.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh

arch=$STENCIL_DEFAULT_CUDA_ARCH
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || stencil_die "--arch needs a value"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#*=}; shift ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    *) stencil_die "unknown argument '$1'" ;;
  esac
done
arch=$(stencil_normalize_arch "$arch") || exit 1

OUT=${OUT:-$STENCIL_ROOT/gpu-out}
mkdir -p "$OUT" || stencil_die "cannot create OUT=$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/{summary.txt,env.txt,build.log,ctest.log,perf.log,perf_results.json,CMakeCache.txt}

budget=${STENCIL_GPU_CHECK_BUDGET:-540}
# The benchmarks are the main product of this check, so the tests may not
# eat into the last part of the budget.
perf_reserve=150

# Everything comes from the carried sources; nothing may touch the network.
export STENCIL_KOKKOS_SOURCE=${STENCIL_KOKKOS_SOURCE:-.deps/src/$KOKKOS_TARBALL}
export STENCIL_GTEST_SOURCE_DIR=${STENCIL_GTEST_SOURCE_DIR:-$STENCIL_SRC_CACHE/googletest}
export STENCIL_BENCHMARK_SOURCE_DIR=${STENCIL_BENCHMARK_SOURCE_DIR:-$STENCIL_SRC_CACHE/benchmark}
export STENCIL_VENDORED_DEPS=1 STENCIL_NO_APT=1 STENCIL_VERBOSE=1
stencil_ensure_cuda_on_path

for f in "$STENCIL_KOKKOS_SOURCE" "$STENCIL_GTEST_SOURCE_DIR/CMakeLists.txt" \
  "$STENCIL_BENCHMARK_SOURCE_DIR/CMakeLists.txt"; do
  [ -e "$f" ] || stencil_die "missing $f" \
    "run scripts/bootstrap.sh --fetch-only on a machine with network and carry .deps/src here"
done

jobs=$(stencil_jobs cuda "${STENCIL_JOBS:-}")
export STENCIL_KOKKOS_JOBS=$jobs
bdir=$(stencil_build_dir cuda "$arch")
summary="$OUT/summary.txt"

# Seconds left before the budget, less a margin; at least $1.
time_left() {
  local left=$((budget - SECONDS - ${2:-0}))
  [ "$left" -ge "$1" ] || left=$1
  echo "$left"
}

# step NAME LOG CMD...: runs CMD with its output shown and appended to
# $OUT/LOG (through tee, so the log survives if the job is killed), and
# records the result in the summary.
declare -A status
step() {
  local name=$1 log=$2 start rc
  shift 2
  start=$SECONDS
  printf '===== %s: %s\n' "$name" "$*" | tee -a "$OUT/$log"
  "$@" 2>&1 | tee -a "$OUT/$log"
  rc=${PIPESTATUS[0]}
  status[$name]=$rc
  printf '%-10s exit %-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$log" | tee -a "$summary"
  [ "$rc" != 124 ] || echo "           (stopped by the time budget)" | tee -a "$summary"
  return "$rc"
}

# shellcheck disable=SC2317 # called through step
environment() {
  date -u
  uname -a
  echo "nproc $(stencil_nproc), build jobs $jobs, budget ${budget}s"
  free -g 2>/dev/null || true
  git -C "$STENCIL_ROOT" rev-parse -q --verify HEAD 2>/dev/null || echo "(no git commit)"
  nvcc --version || echo "nvcc: not found"
  cmake --version | head -n 1
  "${CXX:-g++}" --version | head -n 1
  ninja --version 2>/dev/null || echo "ninja: not found"
}

step env env.txt environment
step nvidia-smi env.txt nvidia-smi

if step build build.log scripts/test.sh --backend cuda --arch "$arch" --build-only -j "$jobs"; then
  step ctest ctest.log timeout "$(time_left 60 "$perf_reserve")" \
    ctest --test-dir "$bdir" --output-on-failure --timeout "${STENCIL_TEST_TIMEOUT:-120}"

  heat2d=$(find "$bdir/examples-installed" -name heat2d -type f -perm -u+x -print -quit 2>/dev/null)
  if [ -n "$heat2d" ]; then
    step heat2d ctest.log timeout 60 "$heat2d"
  else
    echo "heat2d     not built" | tee -a "$summary"
  fi

  # The native kernels at small sizes under compute-sanitizer: out-of-bounds
  # accesses, shared-memory races and barrier misuse. Any report fails the
  # step (--error-exitcode). STENCIL_SANITIZE=0 skips it.
  native_tests=$(find "$bdir/unit_tests" -maxdepth 1 -name 'stencil_test_native_*' -type f -perm -u+x 2>/dev/null)
  if [ "${STENCIL_SANITIZE:-1}" != 0 ] && [ -n "$native_tests" ] && stencil_have compute-sanitizer; then
    for tool in memcheck racecheck synccheck; do
      for t in $native_tests; do
        step "sanitize-$tool-$(basename "$t")" ctest.log timeout "$(time_left 30 "$perf_reserve")" \
          env STENCIL_TEST_SMALL=1 compute-sanitizer --tool "$tool" --error-exitcode 3 "$t" \
          --gtest_filter="${STENCIL_SANITIZE_FILTER:-*}"
      done
    done
  fi

  read -r -a perf_args <<<"${STENCIL_PERF_ARGS:-}"
  step perf perf.log timeout "$(time_left 60 10)" "$bdir/perf_tests/stencil_perf" \
    "${perf_args[@]}" "--benchmark_out=$OUT/perf_results.json" --benchmark_out_format=json
  if [ "${status[perf]}" = 124 ] && [ -s "$OUT/perf_results.json" ] && stencil_have python3; then
    # Google Benchmark streams the JSON, so a run stopped between two results
    # leaves a valid prefix: close it to keep the finished results readable.
    python3 - "$OUT/perf_results.json" <<'PY' | tee -a "$summary"
import json, sys
path = sys.argv[1]
text = open(path).read()
try:
    json.loads(text)
except ValueError:
    try:
        data = json.loads(text.rstrip().rstrip(",") + "\n  ]\n}\n")
    except ValueError:
        print("perf_results.json is cut off mid-result and was left as is")
        sys.exit(0)
    data["context"]["stencil_cut_short"] = True
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
    print(f"perf_results.json closed after the cut: {len(data['benchmarks'])} entries, "
          'marked "stencil_cut_short": true in its context')
PY
  fi
else
  # Enough of the configuration to diagnose the failure from $OUT alone.
  cp -f "$bdir/CMakeCache.txt" "$OUT/CMakeCache.txt" 2>/dev/null
  if [ -f "$bdir/CMakeFiles/CMakeError.log" ]; then
    { echo "===== $bdir/CMakeFiles/CMakeError.log"; cat "$bdir/CMakeFiles/CMakeError.log"; } >>"$OUT/build.log"
  fi
fi

{
  echo
  echo "== summary ($(date -u +%FT%TZ), total ${SECONDS}s, files in $OUT)"
  if [ -n "${status[ctest]:-}" ]; then
    grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -n 1
    grep -E '^[[:space:]]*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess|Exception|Not Run|ILLEGAL|Child)' "$OUT/ctest.log" || true
    [ "${status[ctest]}" != 124 ] || echo "ctest was stopped by the time budget before it finished"
  else
    echo "tests not run (build failed: see build.log)"
  fi
  if [ -z "${status[perf]:-}" ]; then
    echo "benchmarks not run"
  elif [ "${status[perf]}" = 0 ] && [ -s "$OUT/perf_results.json" ]; then
    echo "benchmark JSON: $OUT/perf_results.json"
  elif [ "${status[perf]}" = 124 ] && [ -s "$OUT/perf_results.json" ]; then
    echo "benchmarks cut short by the time budget; partial JSON: $OUT/perf_results.json"
  else
    echo "benchmarks failed or were cut short (exit ${status[perf]}); see perf.log"
  fi
} | tee -a "$summary"

overall=0
for name in "${!status[@]}"; do
  [ "${status[$name]}" = 0 ] || overall=1
done
exit "$overall"
