#!/usr/bin/env bash
# The GPU check: on an offline GPU machine, builds Kokkos (CUDA) and stencil
# from the sources carried in .deps/src (see `scripts/bootstrap.sh
# --fetch-only`), runs every test, the installed-package example, the
# randomized check against the reference, compute-sanitizer memcheck,
# synccheck and racecheck on the native tests and the benchmarks, and ends
# with one line: `gpu-check: PASS ...` or `gpu-check: FAIL ...`, naming the
# GPU. Logs and the benchmark JSON land as flat files in $OUT (default
# ./gpu-out).
#
#   OUT=/some/dir scripts/gpu-check.sh [--arch ARCH] [--build-only] [--no-perf]
#
#   --build-only   build (Kokkos, stencil, the installed-package example)
#                  and run nothing; a build cut short by the time budget
#                  goes on where it stopped on the next call
#   --no-perf      everything but the benchmarks: tests, randomized,
#                  sanitizers in one call; the build leaves perf_tests out,
#                  so give it to the --build-only call too
#
# A machine that allows 600 s per call and builds in 7-8 minutes: one call
# to build, then one to check, on the same (still warm) machine:
#   scripts/gpu-check.sh --build-only --no-perf
#   scripts/gpu-check.sh --no-perf
# (with the benchmarks: --build-only, then no option; the full build with
# perf_tests may need a third call, since the build continues where it
# stopped)
# The build lives outside the repository copy, in $STENCIL_GPU_CHECK_DIR
# (default /tmp/stencil-gpu-check): the sources are mirrored there, and a
# file is rewritten only when its content changed, so a later call rebuilds
# only what changed and skips the build when nothing did.
#
# Environment:
#   STENCIL_GPU_CHECK_DIR=/tmp/stencil-gpu-check  the mirror, Kokkos, builds
#   STENCIL_CMAKE_ARGS      extra configure arguments, e.g.
#                           "-DSTENCIL_NATIVE_MAX_DEPTH=4" (a faster build of
#                           every kernel family at depths 1-4)
#   STENCIL_GPU_RANDOM_CASES=1000  cases of stencil_test_randomized
#                           (STENCIL_RANDOM_CASES; 0 skips it)
#   STENCIL_SANITIZE=0      skip the compute-sanitizer runs. They run the
#                           native tests with STENCIL_TEST_SMALL=1 (small
#                           sizes); STENCIL_SANITIZE_FILTER is the gtest
#                           filter for memcheck and synccheck (default *)
#   STENCIL_RACECHECK_FILTER  gtest filter for racecheck, which is far
#                           slower (one 1D test alone took over 420 s):
#                           default one 2D and one 3D stencil per kernel
#                           family, the barrier tests, the multi-field
#                           kernel on Gray-Scott and the fused Runge-Kutta
#                           kernel in float,
#                           '*.J2d5pt:*.J3d7pt:GridBarrier.*OrdersMemory:*.GrayScott*:*EveryProblemFloat';
#                           '*' runs them all
#   STENCIL_PERF_ARGS       arguments for stencil_perf (default: full sizes)
#   STENCIL_PERF_MPI_ARGS   when set, stencil_perf_mpi runs first with these
#                           arguments under mpirun, one rank per GPU
#                           (STENCIL_PERF_MPI_RANKS to change), its JSON in
#                           perf_mpi.json (build it: STENCIL_BUILD_TARGETS)
#   STENCIL_PERF_ODE_ARGS   likewise stencil_perf_ode, JSON in perf_ode.json
#   STENCIL_GPU_CHECK_BUDGET=540  seconds for the whole call: the build,
#                           tests, randomized check and sanitizers are cut
#                           short to end within it; without --no-perf the
#                           last 150 s are kept for the benchmarks; a
#                           sanitizer run the budget leaves no time for is
#                           reported as not run
#   STENCIL_TEST_TIMEOUT=120  seconds per ctest test
#
# Files in $OUT (never more than 7, since some transports return only a
# few): summary.txt (a line per step, then the summary line), env.txt
# (tools, nvidia-smi), build.log (Kokkos and stencil builds, install
# check), ctest.log (tests, heat2d, randomized, sanitizers), perf.log,
# perf_results.json, and CMakeCache.txt if the build fails; perf_mpi.json
# and perf_ode.json only when their benchmarks are asked for.
#
# Not `set -e`: a failing step must still leave its log and the summary.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

arch=$STENCIL_DEFAULT_CUDA_ARCH
build_only=0
perf=1
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || stencil_die "--arch needs a value"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#*=}; shift ;;
    --build-only) build_only=1; shift ;;
    --no-perf) perf=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; stencil_die "unknown argument '$1'" ;;
  esac
done
arch=$(stencil_normalize_arch "$arch") || exit 1
# Without the benchmarks, the build leaves perf_tests out: its 30 units and
# their link took longer than a 600 s call on their own. Give --no-perf to
# both calls (--build-only --no-perf, then --no-perf) so they share a build.
if [ "$perf" = 0 ]; then
  export STENCIL_CMAKE_ARGS="${STENCIL_CMAKE_ARGS:-} -DSTENCIL_ENABLE_PERF_TESTS=OFF"
fi

budget=${STENCIL_GPU_CHECK_BUDGET:-540}
# The benchmarks may not lose the last part of the budget to the tests.
perf_reserve=0
[ "$perf" = 0 ] || [ "$build_only" = 1 ] || perf_reserve=150
random_cases=${STENCIL_GPU_RANDOM_CASES:-1000}
racecheck_filter=${STENCIL_RACECHECK_FILTER:-*.J2d5pt:*.J3d7pt:GridBarrier.*OrdersMemory:*.GrayScott*:*EveryProblemFloat}
sanitize_filter=${STENCIL_SANITIZE_FILTER:-*}

check_dir=$(realpath -m "${STENCIL_GPU_CHECK_DIR:-/tmp/stencil-gpu-check}")
case "$check_dir/" in
  "$STENCIL_ROOT"/*) stencil_die "STENCIL_GPU_CHECK_DIR=$check_dir is inside the repository" \
    "it must outlive the repository copy: use a path outside it (default /tmp/stencil-gpu-check)" ;;
esac
mkdir -p "$check_dir" || stencil_die "cannot create STENCIL_GPU_CHECK_DIR=$check_dir"
OUT=${OUT:-$STENCIL_ROOT/gpu-out}
mkdir -p "$OUT" || stencil_die "cannot create OUT=$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/{summary.txt,env.txt,build.log,ctest.log,perf.log,perf_results.json,perf_mpi.json,perf_ode.json,CMakeCache.txt}

# The mirror of the sources that is built (its own .deps holds Kokkos).
tree="$check_dir/tree"
bdir="$tree/build/$(stencil_flavor cuda "$arch")"

# Everything comes from the carried sources; nothing may touch the network.
export STENCIL_KOKKOS_SOURCE=${STENCIL_KOKKOS_SOURCE:-$tree/.deps/src/$KOKKOS_TARBALL}
export STENCIL_GTEST_SOURCE_DIR=${STENCIL_GTEST_SOURCE_DIR:-$tree/.deps/src/googletest}
export STENCIL_BENCHMARK_SOURCE_DIR=${STENCIL_BENCHMARK_SOURCE_DIR:-$tree/.deps/src/benchmark}
export STENCIL_VENDORED_DEPS=1 STENCIL_NO_APT=1 STENCIL_VERBOSE=1
stencil_ensure_cuda_on_path

jobs=$(stencil_jobs cuda "${STENCIL_JOBS:-}")
export STENCIL_KOKKOS_JOBS=$jobs
summary="$OUT/summary.txt"

# Seconds left before the budget, less a reserve ($2); at least $1.
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
note() { printf '%s\n' "$*" | tee -a "$summary"; }

# sync_tree SRC DST: makes the files under DST those under SRC (less the
# build outputs), writing only files whose content differs, so unchanged
# files keep their time stamps and ninja rebuilds only what changed. Prints
# how many files it wrote or removed.
sync_tree() {
  local src=$1 dst=$2 f n=0
  local -a prune=(\( -path ./.git -o -path ./build -o -path ./.deps -o -path ./gpu-out
    -o -path ./.whl -o -path ./.gl \) -prune -o)
  mkdir -p "$dst" || return 1
  while IFS= read -r -d '' f; do
    if ! cmp -s "$src/$f" "$dst/$f"; then
      mkdir -p "$(dirname "$dst/$f")" && rm -f "$dst/$f" && cp "$src/$f" "$dst/$f" || return 1
      n=$((n + 1))
    fi
  done < <(cd "$src" && find . "${prune[@]}" -type f -print0)
  while IFS= read -r -d '' f; do
    if [ ! -f "$src/$f" ]; then
      rm -f "$dst/$f" || return 1
      n=$((n + 1))
    fi
  done < <(cd "$dst" && find . "${prune[@]}" -type f -print0)
  echo "$n"
}

gpu=""
if stencil_have_gpu; then
  gpu=$(nvidia-smi --query-gpu=name,uuid --format=csv,noheader 2>/dev/null | head -n 1 |
    sed 's/, */ /; s/\(GPU-[0-9a-f]\{8\}\)[-0-9a-f]*/\1/')
fi

# shellcheck disable=SC2317 # called through step
environment() {
  date -u
  uname -a
  echo "nproc $(stencil_nproc), build jobs $jobs, budget ${budget}s"
  echo "build dir $bdir (mirror of the sources: $tree)"
  echo "mode: $([ "$build_only" = 1 ] && echo build only || echo "check$([ "$perf" = 1 ] && echo ' and benchmarks')")"
  echo "STENCIL_CMAKE_ARGS=${STENCIL_CMAKE_ARGS:-}"
  free -g 2>/dev/null || true
  git -C "$STENCIL_ROOT" rev-parse -q --verify HEAD 2>/dev/null || echo "(no git commit)"
  git -C "$STENCIL_ROOT" status --short 2>/dev/null | head -n 20
  nvcc --version || echo "nvcc: not found"
  cmake --version | head -n 1
  "${CXX:-g++}" --version | head -n 1
  ninja --version 2>/dev/null || echo "ninja: not found"
  compute-sanitizer --version 2>/dev/null | head -n 2 || echo "compute-sanitizer: not found"
}

step env env.txt environment
if [ -n "$gpu" ]; then
  step nvidia-smi env.txt nvidia-smi
else
  note "no GPU visible (nvidia-smi -L shows none): only the build runs"
fi

# ---------------------------------------------------------------- build

# The sources: the repository copy, and the carried .deps/src.
if [ -f "$STENCIL_SRC_CACHE/$KOKKOS_TARBALL" ]; then
  changed_src=$(sync_tree "$STENCIL_SRC_CACHE" "$tree/.deps/src") ||
    stencil_die "could not copy $STENCIL_SRC_CACHE to $tree/.deps/src"
else
  changed_src=0
fi
changed=$(sync_tree "$STENCIL_ROOT" "$tree") || stencil_die "could not copy the sources to $tree"
changed=$((changed + changed_src))
note "sources    $changed files changed since the last call ($tree)"
for f in "$STENCIL_KOKKOS_SOURCE" "$STENCIL_GTEST_SOURCE_DIR/CMakeLists.txt" \
  "$STENCIL_BENCHMARK_SOURCE_DIR/CMakeLists.txt"; do
  [ -e "$f" ] || stencil_die "missing $f" \
    "run scripts/bootstrap.sh --fetch-only on a machine with network and carry .deps/src here"
done

# A build that finished with these sources and options is not redone (the
# install check would rebuild the example for nothing).
build_config="arch $arch; STENCIL_CMAKE_ARGS ${STENCIL_CMAKE_ARGS:-}; STENCIL_BUILD_TARGETS ${STENCIL_BUILD_TARGETS:-}; Kokkos ${Kokkos_ROOT:-$KOKKOS_VERSION}"
built_stamp="$bdir/.gpu-check-built"
if [ "$changed" = 0 ] && [ "$(cat "$built_stamp" 2>/dev/null)" = "$build_config" ]; then
  note "build      up to date: no file changed since it finished ($bdir)"
  status[build]=0
else
  rm -f "$built_stamp"
  if step build build.log timeout "$(time_left 60)" \
    bash "$tree/scripts/test.sh" --backend cuda --arch "$arch" --build-only -j "$jobs"; then
    printf '%s\n' "$build_config" >"$built_stamp"
  elif [ "${status[build]}" = 124 ]; then
    note "           the build continues where it stopped on the next call (build dir kept)"
  else
    # Enough of the configuration to diagnose the failure from $OUT alone.
    cp -f "$bdir/CMakeCache.txt" "$OUT/CMakeCache.txt" 2>/dev/null
    if [ -f "$bdir/CMakeFiles/CMakeError.log" ]; then
      { echo "===== $bdir/CMakeFiles/CMakeError.log"; cat "$bdir/CMakeFiles/CMakeError.log"; } >>"$OUT/build.log"
    fi
  fi
fi

# ---------------------------------------------------------------- checks

native_tests=()
sanitize=0
san_tools=(memcheck synccheck racecheck)
san_done=0
if [ "${status[build]}" = 0 ] && [ "$build_only" = 0 ] && [ -n "$gpu" ]; then
  # The native tests, the multi-field test, which runs the native
  # multi-field kernel (fields/) beside the portable ones, and the ODE plan
  # test, which runs the fused Runge-Kutta kernel (ode/).
  mapfile -t native_tests < <(find "$bdir/unit_tests" -maxdepth 1 \
    \( -name 'stencil_test_native_*' -o -name 'stencil_test_fields' \
    -o -name 'stencil_test_ode_plans' \) \
    -type f -perm -u+x 2>/dev/null | sort)
  if [ "${STENCIL_SANITIZE:-1}" != 0 ] && [ "${#native_tests[@]}" -gt 0 ] && stencil_have compute-sanitizer; then
    sanitize=1
  fi
  rand_exe="$bdir/unit_tests/stencil_test_randomized"
  # What the later steps get if the earlier ones run long.
  later=$((perf_reserve + 60 * sanitize))
  [ "$random_cases" = 0 ] || [ ! -x "$rand_exe" ] || later=$((later + 60))

  # Every test but the randomized one, which runs next with more cases.
  step ctest ctest.log timeout "$(time_left 60 "$later")" \
    ctest --test-dir "$bdir" --output-on-failure --timeout "${STENCIL_TEST_TIMEOUT:-120}" \
    -E '^stencil_test_randomized$'

  heat2d=$(find "$bdir/examples-installed" -name heat2d -type f -perm -u+x -print -quit 2>/dev/null)
  if [ -n "$heat2d" ]; then
    step heat2d ctest.log timeout 60 "$heat2d"
  else
    note "heat2d     not built"
    status[heat2d]=missing
  fi

  if [ "$random_cases" = 0 ]; then
    note "randomized skipped (STENCIL_GPU_RANDOM_CASES=0)"
  elif [ -x "$rand_exe" ]; then
    step randomized ctest.log timeout "$(time_left 30 "$((perf_reserve + 60 * sanitize))")" \
      env STENCIL_RANDOM_CASES="$random_cases" "$rand_exe"
  else
    note "randomized not built: no $rand_exe"
    status[randomized]=missing
  fi

  # The native kernels at small sizes under compute-sanitizer: out-of-bounds
  # accesses, barrier misuse, shared-memory races. Any report fails the
  # step (--error-exitcode). Each run gets an even share of the time left
  # (what one leaves goes to the next); one with under 20 s is not started.
  if [ "$sanitize" = 1 ]; then
    san_total=$((${#san_tools[@]} * ${#native_tests[@]}))
    for tool in "${san_tools[@]}"; do
      filter=$sanitize_filter
      [ "$tool" != racecheck ] || filter=$racecheck_filter
      for t in "${native_tests[@]}"; do
        share=$(((budget - SECONDS - perf_reserve) / (san_total - san_done)))
        san_done=$((san_done + 1))
        name="$tool-$(basename "$t")"
        if [ "$share" -lt 20 ]; then
          note "$(printf '%-10s not run: the time budget is spent' "$name")"
          status[$name]=skipped
          continue
        fi
        step "$name" ctest.log timeout "$share" \
          env STENCIL_TEST_SMALL=1 compute-sanitizer --tool "$tool" --error-exitcode 3 "$t" \
          --gtest_filter="$filter"
      done
    done
  elif [ "${STENCIL_SANITIZE:-1}" = 0 ]; then
    note "sanitizers skipped (STENCIL_SANITIZE=0)"
  elif [ "${#native_tests[@]}" = 0 ]; then
    note "sanitizers not run: no stencil_test_native_* in $bdir/unit_tests"
    status[sanitizers]=missing
  else
    note "sanitizers not run: compute-sanitizer not found"
    status[sanitizers]=missing
  fi

  # The distributed and Runge-Kutta benchmarks, only when asked for.
  if [ "$perf" = 1 ] && [ -n "${STENCIL_PERF_MPI_ARGS:-}" ]; then
    read -r -a mpi_args <<<"$STENCIL_PERF_MPI_ARGS"
    ranks=${STENCIL_PERF_MPI_RANKS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
    # NVLink multicast stays off (the GPU machines' rule), in every rank.
    step perf-mpi perf.log timeout "$(time_left 30 60)" \
      env NCCL_NVLS_ENABLE=0 KOKKOS_MAP_DEVICE_ID_BY=mpi_rank \
      mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE \
      -x KOKKOS_MAP_DEVICE_ID_BY -np "$ranks" "$bdir/perf_tests/stencil_perf_mpi" \
      "${mpi_args[@]}" "--out=$OUT/perf_mpi.json"
  fi
  if [ "$perf" = 1 ] && [ -n "${STENCIL_PERF_ODE_ARGS:-}" ]; then
    read -r -a ode_args <<<"$STENCIL_PERF_ODE_ARGS"
    step perf-ode perf.log timeout "$(time_left 30 60)" \
      "$bdir/perf_tests/stencil_perf_ode" "${ode_args[@]}" "--out=$OUT/perf_ode.json"
  fi

  if [ "$perf" = 1 ]; then
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
  fi
fi

# ---------------------------------------------------------------- summary

# One part of the summary line per kind of check; failed lists what failed.
parts=()
failed=()
why() { # the reason for a status
  case "$1" in
    124) echo "time budget" ;;
    skipped) echo "not run: time budget" ;;
    missing) echo "not built" ;;
    *) echo "exit $1" ;;
  esac
}

if [ "${status[build]}" != 0 ]; then
  failed+=("build ($(why "${status[build]}"); see build.log)")
elif [ "$build_only" = 1 ]; then
  parts+=("build dir $bdir")
elif [ -z "$gpu" ]; then
  failed+=("no GPU visible: tests, randomized, sanitizers not run")
else
  # ctest prints "N% tests passed, F tests failed out of T"; newer ctest
  # (the GPU machines' CMake 4) drops ", 0 tests failed" when all passed.
  counts=$(grep -E '^[0-9]+% tests passed(, [0-9]+ tests? failed)? out of [0-9]+' "$OUT/ctest.log" | tail -n 1)
  if [ "${status[ctest]}" = 0 ] && [ -n "$counts" ]; then
    total=${counts##* }
    parts+=("tests $total/$total")
  elif [ -n "$counts" ]; then
    total=${counts##* }
    nfail=0
    if [[ $counts == *failed* ]]; then nfail=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$counts"); fi
    parts+=("tests $((total - nfail))/$total")
    mapfile -t names < <(grep -E '^[[:space:]]*[0-9]+ - .*\(' "$OUT/ctest.log" |
      sed -E 's/^[[:space:]]*[0-9]+ - ([^ ]+).*\((.*)\)/\1 (\2)/')
    if [ "${#names[@]}" = 0 ]; then
      failed+=("tests: see ctest.log")
    elif [ "${#names[@]}" -le 6 ]; then
      failed+=("tests: $(printf '%s, ' "${names[@]}" | sed 's/, $//')")
    else
      failed+=("tests: $(printf '%s, ' "${names[@]:0:6}")and $((${#names[@]} - 6)) more in ctest.log")
    fi
  else
    failed+=("tests ($(why "${status[ctest]}"), no ctest result)")
  fi
  if [ "${status[heat2d]}" = 0 ]; then parts+=("heat2d"); else failed+=("heat2d ($(why "${status[heat2d]}"))"); fi
  if [ -n "${status[randomized]:-}" ]; then
    if [ "${status[randomized]}" = 0 ]; then
      parts+=("randomized $random_cases cases")
    else
      r="randomized $random_cases cases ($(why "${status[randomized]}")"
      case "${status[randomized]}" in missing | 124) r+=")" ;; *) r+="; the failing case and its seed are in ctest.log)" ;; esac
      failed+=("$r")
    fi
  fi
  if [ "$sanitize" = 1 ]; then
    for tool in "${san_tools[@]}"; do
      pass=0 bad=()
      for t in "${native_tests[@]}"; do
        name="$tool-$(basename "$t")"
        if [ "${status[$name]}" = 0 ]; then
          pass=$((pass + 1))
        else
          bad+=("$(basename "$t") ($(why "${status[$name]}"))")
        fi
      done
      part="$tool $pass/${#native_tests[@]}"
      [ "$tool" != racecheck ] || [ "$racecheck_filter" = '*' ] || part+=" (filter $racecheck_filter)"
      [ "$tool" = racecheck ] || [ "$sanitize_filter" = '*' ] || part+=" (filter $sanitize_filter)"
      parts+=("$part")
      [ "${#bad[@]}" = 0 ] || failed+=("$tool: $(printf '%s, ' "${bad[@]}" | sed 's/, $//')")
    done
  elif [ -n "${status[sanitizers]:-}" ]; then
    failed+=("sanitizers not run")
  else
    parts+=("sanitizers skipped")
  fi
  if [ "$perf" = 1 ]; then
    if [ "${status[perf]}" = 0 ] && [ -s "$OUT/perf_results.json" ]; then
      parts+=("benchmarks in perf_results.json")
    elif [ "${status[perf]}" = 124 ] && [ -s "$OUT/perf_results.json" ]; then
      parts+=("benchmarks cut short by the budget (partial perf_results.json)")
    else
      failed+=("benchmarks ($(why "${status[perf]}"); see perf.log)")
    fi
  fi
fi
for name in env nvidia-smi; do
  [ "${status[$name]:-0}" = 0 ] || failed+=("$name ($(why "${status[$name]}"))")
done

if [ "${#failed[@]}" = 0 ]; then
  result=PASS
  [ "$build_only" = 0 ] || result=BUILT
else
  result="FAIL $(printf '%s; ' "${failed[@]}" | sed 's/; $//') --"
fi
done_list=""
[ "${#parts[@]}" = 0 ] || done_list=$(printf '%s, ' "${parts[@]}")
line="gpu-check: $result ${done_list}GPU ${gpu:-none}, ${SECONDS}s"
{
  echo
  echo "== $(date -u +%FT%TZ), files in $OUT"
  echo "$line"
} | tee -a "$summary"
[ "${#failed[@]}" = 0 ]
