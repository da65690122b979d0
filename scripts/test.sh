#!/usr/bin/env bash
# Builds stencil against a bootstrapped Kokkos and runs the test suite, then
# checks that the installed package works for an outside project (examples/).
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/test.sh [--backend openmp|cuda] [--arch ARCH] [--build-only] [-j N]

  --backend B    openmp or cuda (default: cuda if nvidia-smi shows a GPU and
                 nvcc exists, else openmp)
  --arch ARCH    Kokkos GPU architecture for cuda (default HOPPER90)
  --build-only   configure, build and install, but run nothing
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
jobs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) [ $# -ge 2 ] || stencil_die "--backend needs a value"; backend=$2; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    --arch) [ $# -ge 2 ] || stencil_die "--arch needs a value"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#*=}; shift ;;
    --build-only) build_only=1; shift ;;
    -j) [ $# -ge 2 ] || stencil_die "-j needs a value"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; stencil_die "unknown argument '$1'" ;;
  esac
done
stencil_resolve_build_options

bash "$STENCIL_ROOT/scripts/bootstrap.sh" --backend "$backend" --arch "$arch"
stencil_configure_and_build "$backend" "$arch" "$jobs"
bdir=$STENCIL_BUILD_DIR
kroot=$STENCIL_KOKKOS_ROOT

if [ "$backend" = cuda ] && [ "$build_only" = 0 ] && ! stencil_have_gpu; then
  stencil_warn "no GPU visible (nvidia-smi -L); the CUDA tests will most likely fail"
fi
[ "$backend" != openmp ] || stencil_openmp_test_env

test_status=0
if [ "$build_only" = 0 ]; then
  stencil_log "running the tests"
  ctest --test-dir "$bdir" --output-on-failure || test_status=$?
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
fi

if [ "$test_status" != 0 ]; then
  stencil_die "ctest reported failures (exit $test_status); see the output above"
fi
if [ "$build_only" = 1 ]; then
  stencil_log "build of $bdir and of the installed-package examples succeeded"
else
  stencil_log "all tests passed ($bdir)"
fi
