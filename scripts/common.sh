# shellcheck shell=bash
# The variables defined here are used by the scripts that source this file.
# shellcheck disable=SC2034
# Shared helpers for the stencil scripts. Source this file; do not run it.
#
# Everything project-local lives under .deps/ (git-ignored):
#   .deps/src/                     pinned sources (what --fetch-only gathers)
#   .deps/kokkos-<backend>[-arch]  Kokkos installs made by bootstrap.sh
#   .deps/kokkos-kernels-<backend>[-arch]  Kokkos Kernels (BLAS, ODE), likewise
#   .deps/build/, .deps/logs/      scratch space and build logs

STENCIL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STENCIL_DEPS="$STENCIL_ROOT/.deps"
STENCIL_SRC_CACHE="$STENCIL_DEPS/src"
STENCIL_SCRIPT=${STENCIL_SCRIPT:-$(basename "$0")}

# Pinned third-party sources. The checksums are what makes a download from
# a mirror (or a tarball carried in by hand) trustworthy.
KOKKOS_VERSION=5.0.2
KOKKOS_TARBALL="kokkos_${KOKKOS_VERSION}.orig.tar.gz"
KOKKOS_POOL_PATH="pool/main/k/kokkos/$KOKKOS_TARBALL"
KOKKOS_SIZE=1787009
KOKKOS_SHA256=188817bb452ca805ee8701f1c5adbbb4fb83dc8d1c50624566a18a719ba0fa5e

BENCHMARK_VERSION=1.7.1
BENCHMARK_TARBALL="benchmark_${BENCHMARK_VERSION}.orig.tar.gz"
BENCHMARK_POOL_PATH="pool/main/b/benchmark/$BENCHMARK_TARBALL"
BENCHMARK_SIZE=196575
BENCHMARK_SHA256=6430e4092653380d9dc4ccb45a1e2dc9259d581f4866dc0759713126056bc1d7

# Kokkos Kernels: no package registry reachable from these machines has one
# that builds against Kokkos 5, so the source comes from the project's
# shared dependencies (../shared/deps/kokkos-kernels), a tarball named by
# STENCIL_KOKKOS_KERNELS_SOURCE, or .deps/src; the patch fixes upstream's
# Verner 5(6) tableau (tst_ode_tableaus checks every tableau used).
KOKKOS_KERNELS_VERSION=4.7.00
KOKKOS_KERNELS_TARBALL="kokkos-kernels-${KOKKOS_KERNELS_VERSION}.tar.gz"
KOKKOS_KERNELS_SIZE=3486313
KOKKOS_KERNELS_SHA256=5c7c8c8f91817ab22dbc50ea72f02292bbd6c5b412d6f1588b27574600c478ef
KOKKOS_KERNELS_PATCH=ver56-tableau.patch
KOKKOS_KERNELS_PATCH_SIZE=1336
KOKKOS_KERNELS_PATCH_SHA256=9778a5f12f026281b7992edf2b68511ff38e89790e40d55cec3e9c997de653a0
STENCIL_SHARED_KOKKOS_KERNELS="$STENCIL_ROOT/../shared/deps/kokkos-kernels"

STENCIL_DEFAULT_CUDA_ARCH=HOPPER90
# NVIDIA architectures known to Kokkos 5.0.2 (cmake/kokkos_arch.cmake).
STENCIL_CUDA_ARCHS="MAXWELL50 MAXWELL52 MAXWELL53 PASCAL60 PASCAL61 VOLTA70 VOLTA72
TURING75 AMPERE80 AMPERE86 AMPERE87 ADA89 HOPPER90 BLACKWELL100 BLACKWELL120"

stencil_log() { printf '[%s] %s\n' "$STENCIL_SCRIPT" "$*" >&2; }
stencil_warn() { printf '[%s] WARNING: %s\n' "$STENCIL_SCRIPT" "$*" >&2; }
stencil_die() {
  printf '[%s] ERROR: %s\n' "$STENCIL_SCRIPT" "$1" >&2
  shift
  local line
  for line in "$@"; do printf '    %s\n' "$line" >&2; done
  exit 1
}

stencil_have() { command -v "$1" >/dev/null 2>&1; }

stencil_nproc() { nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1; }

# The CUDA toolkit is often installed without being put on PATH; nvcc_wrapper
# calls plain `nvcc`, so make it findable.
stencil_ensure_cuda_on_path() {
  if ! stencil_have nvcc && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
}

stencil_have_nvcc() {
  stencil_have nvcc || [ -x /usr/local/cuda/bin/nvcc ]
}

stencil_have_gpu() {
  stencil_have nvidia-smi && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

stencil_default_backend() {
  if stencil_have_gpu && stencil_have_nvcc; then echo cuda; else echo openmp; fi
}

stencil_check_backend() {
  case "$1" in
    openmp | cuda) ;;
    *) stencil_die "unknown backend '$1'" "use --backend openmp or --backend cuda" ;;
  esac
}

# Accepts e.g. "hopper90" or "HOPPER90"; prints the Kokkos spelling.
stencil_normalize_arch() {
  local arch a
  arch=$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')
  for a in $STENCIL_CUDA_ARCHS; do
    if [ "$a" = "$arch" ]; then
      echo "$arch"
      return 0
    fi
  done
  stencil_die "unknown CUDA architecture '$1'" "Kokkos $KOKKOS_VERSION knows:" "$(printf '%s' "$STENCIL_CUDA_ARCHS" | tr '\n' ' ')"
}

# Suffix shared by the Kokkos prefix and the build directory: "openmp",
# "cuda" (default arch) or "cuda-ampere80".
stencil_flavor() {
  local backend=$1 arch=${2:-$STENCIL_DEFAULT_CUDA_ARCH}
  if [ "$backend" = cuda ] && [ "$arch" != "$STENCIL_DEFAULT_CUDA_ARCH" ]; then
    printf 'cuda-%s\n' "$(printf '%s' "$arch" | tr '[:upper:]' '[:lower:]')"
  else
    printf '%s\n' "$backend"
  fi
}

stencil_kokkos_local_prefix() {
  printf '%s/kokkos-%s\n' "$STENCIL_DEPS" "$(stencil_flavor "$@")"
}

stencil_kokkos_kernels_local_prefix() {
  printf '%s/kokkos-kernels-%s\n' "$STENCIL_DEPS" "$(stencil_flavor "$@")"
}

# True if $1 is a Kokkos Kernels install (its package config is there).
stencil_kokkos_kernels_install_ok() {
  compgen -G "$1/lib*/cmake/KokkosKernels/KokkosKernelsConfig.cmake" >/dev/null 2>&1
}

# The Kokkos Kernels install to build against: $KokkosKernels_ROOT when it
# is one, else the project-local prefix (which may not exist: the bootstrap
# warns and stencil::ode is left out).
stencil_kokkos_kernels_prefix() {
  if [ -n "${KokkosKernels_ROOT:-}" ] && stencil_kokkos_kernels_install_ok "$KokkosKernels_ROOT"; then
    (cd "$KokkosKernels_ROOT" && pwd)
  else
    stencil_kokkos_kernels_local_prefix "$@"
  fi
}

stencil_build_dir() {
  printf '%s/build/%s\n' "$STENCIL_ROOT" "$(stencil_flavor "$@")"
}

# True if $1 is a Kokkos install usable for backend $2: it has a package
# config, and CUDA is enabled in it exactly when the cuda backend is asked for
# (a CUDA Kokkos forces nvcc_wrapper on everything that links it).
stencil_kokkos_install_ok() {
  local root=$1 backend=$2 cfg header
  cfg=$(compgen -G "$root/lib*/cmake/Kokkos/KokkosConfig.cmake" | head -n 1) || true
  [ -n "$cfg" ] || return 1
  header="$root/include/KokkosCore_config.h"
  [ -f "$header" ] || return 1
  if grep -q '^#define KOKKOS_ENABLE_CUDA$' "$header"; then
    [ "$backend" = cuda ] && [ -x "$root/bin/nvcc_wrapper" ]
  else
    [ "$backend" != cuda ]
  fi
}

# The Kokkos install the other scripts should build against: $Kokkos_ROOT from
# the environment when it fits the backend, else the project-local prefix.
stencil_kokkos_prefix() {
  local backend=$1 arch=${2:-$STENCIL_DEFAULT_CUDA_ARCH}
  if [ -n "${Kokkos_ROOT:-}" ] && stencil_kokkos_install_ok "$Kokkos_ROOT" "$backend"; then
    (cd "$Kokkos_ROOT" && pwd)
  else
    stencil_kokkos_local_prefix "$backend" "$arch"
  fi
}

# nvcc needs up to ~2 GB per compile; cap parallelism by available memory so
# a many-core box with little RAM does not start swapping or OOM-killing.
stencil_jobs() {
  local backend=$1 requested=${2:-} jobs mem_kb cap
  if [ -n "$requested" ]; then
    echo "$requested"
    return
  fi
  jobs=$(stencil_nproc)
  if [ "$backend" = cuda ]; then
    mem_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || true)
    if [ -n "$mem_kb" ]; then
      cap=$((mem_kb / (2 * 1024 * 1024)))
      [ "$cap" -ge 1 ] || cap=1
      [ "$jobs" -le "$cap" ] || jobs=$cap
    fi
  fi
  echo "$jobs"
}

# stencil_resolve_build_options: after a script's argument loop, turns the
# variables backend, arch and jobs (any may be empty) into checked values:
# the default backend for this machine, a normalised Kokkos arch, a job
# count; exports the job count for the Kokkos build.
stencil_resolve_build_options() {
  backend=${backend:-$(stencil_default_backend)}
  stencil_check_backend "$backend"
  arch=$(stencil_normalize_arch "$arch")
  if [ -n "$jobs" ] && ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
    stencil_die "-j needs a positive number, got '$jobs'"
  fi
  jobs=$(stencil_jobs "$backend" "$jobs")
  export STENCIL_KOKKOS_JOBS=${STENCIL_KOKKOS_JOBS:-$jobs}
}

# Prints -G arguments for a fresh build directory: Ninja when available.
# An existing build directory keeps its generator (CMake refuses a switch),
# and a CMAKE_GENERATOR from the environment wins as usual.
stencil_generator_args() {
  local dir=$1
  if [ -f "$dir/CMakeCache.txt" ] || [ -n "${CMAKE_GENERATOR:-}" ]; then
    return 0
  fi
  if stencil_have ninja; then
    printf '%s\n' -G Ninja
  fi
}

# Does a CMake package config for $1 exist in the usual system locations?
# Used only to decide whether to point CMake at the vendored sources.
stencil_system_cmake_package() {
  local name=$1 d
  for d in /usr/lib/cmake /usr/lib64/cmake /usr/lib/*-linux-gnu/cmake \
    /usr/local/lib/cmake /usr/local/lib64/cmake /usr/share/cmake; do
    if compgen -G "$d/$name/*[Cc]onfig.cmake" >/dev/null; then
      return 0
    fi
  done
  return 1
}

# Configure the stencil tree for one backend. Sets STENCIL_BUILD_DIR and
# STENCIL_KOKKOS_ROOT for the caller.
#   stencil_configure BACKEND ARCH [BUILD_DIR]   (default: stencil_build_dir)
#   STENCIL_VENDORED_DEPS=1  build GoogleTest/Benchmark from .deps/src even if
#                            system packages exist (what the GPU machine does)
#   STENCIL_GTEST_SOURCE_DIR / STENCIL_BENCHMARK_SOURCE_DIR  explicit trees
#   STENCIL_CMAKE_ARGV       a bash array of configure arguments for values
#                            with spaces (set by scripts, not users)
#   STENCIL_CMAKE_ARGS       extra configure arguments (word-split; last, so
#                            they win over both of the above)
stencil_configure() {
  local backend=$1 arch=$2 bdir=${3:-}
  local kroot gtest_src bench_src marker
  local -a args gen extra

  kroot=$(stencil_kokkos_prefix "$backend" "$arch")
  if ! stencil_kokkos_install_ok "$kroot" "$backend"; then
    local hint="scripts/bootstrap.sh --backend $backend"
    [ "$backend" != cuda ] || hint+=" --arch $arch"
    stencil_die "no usable Kokkos install for backend '$backend' at $kroot" "run: $hint"
  fi
  [ -n "$bdir" ] || bdir=$(stencil_build_dir "$backend" "$arch")
  STENCIL_KOKKOS_ROOT=$kroot
  STENCIL_BUILD_DIR=$bdir

  # A cache made against another Kokkos keeps its old Kokkos_DIR and
  # compiler; starting over is cheaper than debugging that.
  marker="$bdir/.stencil-kokkos-root"
  if [ -f "$bdir/CMakeCache.txt" ] && [ "$(cat "$marker" 2>/dev/null)" != "$kroot" ]; then
    stencil_log "Kokkos install changed; clearing the CMake cache in $bdir"
    rm -rf "$bdir/CMakeCache.txt" "$bdir/CMakeFiles"
  fi
  mkdir -p "$bdir"
  printf '%s\n' "$kroot" >"$marker"

  args=(-S "$STENCIL_ROOT" -B "$bdir"
    -DCMAKE_BUILD_TYPE=Release
    "-DKokkos_ROOT=$kroot"
    -DSTENCIL_ENABLE_TESTS=ON
    -DSTENCIL_ENABLE_PERF_TESTS=ON
    -DSTENCIL_ENABLE_EXAMPLES=ON)
  if [ "$backend" = cuda ]; then
    stencil_ensure_cuda_on_path
    args+=("-DCMAKE_CXX_COMPILER=$kroot/bin/nvcc_wrapper")
  fi
  local kkroot
  kkroot=$(stencil_kokkos_kernels_prefix "$backend" "$arch")
  if stencil_kokkos_kernels_install_ok "$kkroot"; then
    args+=("-DKokkosKernels_ROOT=$kkroot")
  fi

  gtest_src=${STENCIL_GTEST_SOURCE_DIR:-}
  bench_src=${STENCIL_BENCHMARK_SOURCE_DIR:-}
  if [ "${STENCIL_VENDORED_DEPS:-0}" = 1 ]; then
    gtest_src=${gtest_src:-$STENCIL_SRC_CACHE/googletest}
    bench_src=${bench_src:-$STENCIL_SRC_CACHE/benchmark}
    if [ ! -f "$gtest_src/CMakeLists.txt" ] || [ ! -f "$bench_src/CMakeLists.txt" ]; then
      stencil_die "STENCIL_VENDORED_DEPS=1 but the vendored sources are missing" \
        "run: scripts/bootstrap.sh --fetch-only (on a machine with network)"
    fi
    args+=(-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON)
  else
    # Explicit, so that a build directory once configured vendored switches back.
    args+=(-DCMAKE_DISABLE_FIND_PACKAGE_GTest=OFF -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=OFF)
    if [ -z "$gtest_src" ] && ! stencil_system_cmake_package GTest &&
      [ -f "$STENCIL_SRC_CACHE/googletest/CMakeLists.txt" ]; then
      gtest_src=$STENCIL_SRC_CACHE/googletest
    fi
    if [ -z "$bench_src" ] && ! stencil_system_cmake_package benchmark &&
      [ -f "$STENCIL_SRC_CACHE/benchmark/CMakeLists.txt" ]; then
      bench_src=$STENCIL_SRC_CACHE/benchmark
    fi
  fi
  [ -z "$gtest_src" ] || args+=("-DSTENCIL_GTEST_SOURCE_DIR=$(cd "$gtest_src" && pwd)")
  [ -z "$bench_src" ] || args+=("-DSTENCIL_BENCHMARK_SOURCE_DIR=$(cd "$bench_src" && pwd)")

  mapfile -t gen < <(stencil_generator_args "$bdir")
  read -r -a extra <<<"${STENCIL_CMAKE_ARGS:-}"

  stencil_log "configuring $bdir (Kokkos_ROOT=$kroot)"
  cmake "${gen[@]}" "${args[@]}" ${STENCIL_CMAKE_ARGV+"${STENCIL_CMAKE_ARGV[@]}"} "${extra[@]}" ||
    stencil_die "CMake configure of the stencil tree failed (backend $backend)" \
      "see the messages above; build directory: $bdir"
}

# Build a configured tree: stencil_build BUILD_DIR JOBS [BACKEND].
#   STENCIL_BUILD_TARGETS    build only these targets (word-split)
stencil_build() {
  local bdir=$1 jobs=$2 backend=${3:-}
  local targets=()
  read -r -a targets <<<"${STENCIL_BUILD_TARGETS:-}"
  [ "${#targets[@]}" = 0 ] || targets=(--target "${targets[@]}")
  stencil_log "building $bdir with $jobs parallel jobs${STENCIL_BUILD_TARGETS:+ (targets: $STENCIL_BUILD_TARGETS)}"
  cmake --build "$bdir" -j "$jobs" "${targets[@]}" ||
    stencil_die "build of the stencil tree failed${backend:+ (backend $backend)}" \
      "see the compiler messages above; rerun with -j 1 for readable output"
}

# Configure and build: stencil_configure_and_build BACKEND ARCH JOBS [BUILD_DIR].
stencil_configure_and_build() {
  stencil_configure "$1" "$2" "${4:-}"
  stencil_build "$STENCIL_BUILD_DIR" "$3" "$1"
}

# Run-time defaults for Kokkos' OpenMP backend; values the user set win.
stencil_openmp_test_env() {
  # Kokkos' own advice for unit tests; also silences its startup warning.
  export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
}
stencil_openmp_bench_env() {
  export OMP_PROC_BIND=${OMP_PROC_BIND:-spread}
  export OMP_PLACES=${OMP_PLACES:-threads}
}
