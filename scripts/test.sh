#!/usr/bin/env bash
# Builds stencil against a bootstrapped Kokkos and runs the test suite, then
# checks that the installed package works for an outside project (examples/).
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/test.sh [--backend openmp|cuda] [--arch ARCH] [--build-only]
                      [--sanitize] [-j N]

  --backend B    openmp or cuda (default: cuda if nvidia-smi shows a GPU and
                 nvcc exists, else openmp)
  --arch ARCH    Kokkos GPU architecture for cuda (default HOPPER90)
  --build-only   configure, build and install, but run nothing
  --sanitize     the same build and run under AddressSanitizer +
                 UndefinedBehaviorSanitizer (-O1), OpenMP configuration, in
                 build/openmp-asan: every test (typed tests on OpenMP, not
                 Serial), the benchmarks' smoke test and the
                 installed-package examples. Any ASan, LSan or
                 UBSan report fails its test; ASAN_OPTIONS/UBSAN_OPTIONS
                 already set are appended to the script's and win.
                 Kokkos is the usual uninstrumented OpenMP install. CI runs
                 this instead of the plain build: one build, every check.
  -j N           parallel build jobs (default: nproc; fewer for cuda when
                 memory is short)

Build directory: build/<backend> (build/cuda-<arch> for a non-default arch).
Environment: STENCIL_CMAKE_ARGS (extra configure arguments),
STENCIL_BUILD_TARGETS (build only these targets, e.g. "stencil_perf"),
STENCIL_VENDORED_DEPS=1 (use GoogleTest/Benchmark from .deps/src),
STENCIL_NO_APT=1 (do not install Debian packages).
EOF
}

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

backend=""
arch=$STENCIL_DEFAULT_CUDA_ARCH
build_only=0
sanitize=0
jobs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) [ $# -ge 2 ] || stencil_die "--backend needs a value"; backend=$2; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    --arch) [ $# -ge 2 ] || stencil_die "--arch needs a value"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#*=}; shift ;;
    --build-only) build_only=1; shift ;;
    --sanitize) sanitize=1; shift ;;
    -j) [ $# -ge 2 ] || stencil_die "-j needs a value"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; stencil_die "unknown argument '$1'" ;;
  esac
done
if [ "$sanitize" = 1 ]; then
  backend=${backend:-openmp}
  [ "$backend" = openmp ] ||
    stencil_die "--sanitize builds the OpenMP configuration only (got --backend $backend)" \
      "for CUDA, scripts/gpu-check.sh runs compute-sanitizer on the native tests"
fi
stencil_resolve_build_options

bash "$STENCIL_ROOT/scripts/bootstrap.sh" --backend "$backend" --arch "$arch"

# The sanitizer build: the same targets and tests, instrumented.
san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
build_dir=""
if [ "$sanitize" = 1 ]; then
  # -O1 -g1: line tables for the reports' file:line, and fast enough to run
  # the tests; NDEBUG stays undefined, so assertions are checked too. The
  # typed tests on Kokkos::OpenMP only: Serial runs the same host code in
  # one thread and would double their build and run time under ASan.
  # shellcheck disable=SC2034 # read by stencil_configure
  STENCIL_CMAKE_ARGV=(
    -DCMAKE_BUILD_TYPE=Sanitize
    -DSTENCIL_TEST_BACKENDS=OPENMP
    "-DCMAKE_CXX_FLAGS_SANITIZE=-O1 -g1 $san_flags"
    "-DCMAKE_EXE_LINKER_FLAGS_SANITIZE=-fsanitize=address,undefined"
    "-DCMAKE_SHARED_LINKER_FLAGS_SANITIZE=-fsanitize=address,undefined")
  build_dir=$STENCIL_ROOT/build/openmp-asan
  # Any report ends the test with a failure and a stack trace. Leak checks
  # stay on (libgomp's thread pool is still reachable at exit, so it is not
  # reported). Values already in the environment come last, so they win.
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:print_stacktrace=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:report_error_type=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
fi

build_start=$SECONDS
stencil_configure_and_build "$backend" "$arch" "$jobs" "$build_dir"
stencil_log "built $STENCIL_BUILD_DIR in $((SECONDS - build_start)) s"
bdir=$STENCIL_BUILD_DIR
kroot=$STENCIL_KOKKOS_ROOT

if [ "$backend" = cuda ] && [ "$build_only" = 0 ] && ! stencil_have_gpu; then
  stencil_warn "no GPU visible (nvidia-smi -L); the CUDA tests will most likely fail"
fi
[ "$backend" != openmp ] || stencil_openmp_test_env

test_status=0
if [ "$build_only" = 0 ]; then
  stencil_log "running the tests"
  tests_start=$SECONDS
  ctest --test-dir "$bdir" --output-on-failure || test_status=$?
  stencil_log "tests ran in $((SECONDS - tests_start)) s"
fi

# The install check runs even after test failures: a broken package is worth
# knowing about in the same run.
stencil_log "checking the installed package with the standalone examples/ project"
install_dir="$bdir/install"
rm -rf "$install_dir"
cmake --install "$bdir" --prefix "$install_dir" ||
  stencil_die "cmake --install $bdir failed"

ex_dir="$bdir/examples-installed"
ex_args=(-S "$STENCIL_ROOT/examples" -B "$ex_dir"
  -DCMAKE_BUILD_TYPE=Release
  "-Dstencil_ROOT=$install_dir"
  "-DKokkos_ROOT=$kroot")
[ "$backend" != cuda ] || ex_args+=("-DCMAKE_CXX_COMPILER=$kroot/bin/nvcc_wrapper")
# The installed library is instrumented too, so the examples must be.
[ "$sanitize" = 0 ] || ex_args+=("-DCMAKE_CXX_FLAGS=-O1 -g1 $san_flags"
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
mapfile -t gen < <(stencil_generator_args "$ex_dir")
cmake "${gen[@]}" "${ex_args[@]}" ||
  stencil_die "configuring examples/ against the installed stencil failed" \
    "the installed package in $install_dir is probably incomplete (stencilConfig.cmake, targets, headers)"
cmake --build "$ex_dir" -j "$jobs" ||
  stencil_die "building examples/ against the installed stencil failed"

if [ "$build_only" = 0 ]; then
  heat2d=$(find "$ex_dir" -name heat2d -type f -perm -u+x -print -quit)
  [ -n "$heat2d" ] || stencil_die "no heat2d executable was built in $ex_dir"
  stencil_log "running $heat2d"
  "$heat2d" || stencil_die "heat2d built against the installed package failed (exit $?)"
  # The multi-field examples, small, in their own directory (they write
  # .vti and .png files there).
  run_dir="$ex_dir/runs"
  mkdir -p "$run_dir"
  for example_and_args in "wave2d 96 120 40" "grayscott 128 300" "heat_varcoef 96 300"; do
    read -r example args <<<"$example_and_args"
    exe=$(find "$ex_dir" -name "$example" -type f -perm -u+x -print -quit)
    [ -n "$exe" ] || stencil_die "no $example executable was built in $ex_dir"
    stencil_log "running $example $args"
    # shellcheck disable=SC2086 # args are words
    (cd "$run_dir" && "$exe" $args) ||
      stencil_die "$example built against the installed package failed"
  done
fi

if [ "$test_status" != 0 ]; then
  stencil_die "ctest reported failures (exit $test_status); see the output above"
fi
if [ "$build_only" = 1 ]; then
  stencil_log "build of $bdir and of the installed-package examples succeeded"
else
  what=""
  [ "$sanitize" = 0 ] || what=", under ASan+UBSan"
  stencil_log "all tests passed ($bdir$what)"
fi
