#!/usr/bin/env bash
# Installs the build prerequisites of stencil and builds a pinned Kokkos into
# a project-local prefix. Safe to rerun: a finished install is detected by its
# stamp file and nothing is redone.
set -euo pipefail

usage() {
  cat <<EOF
Usage: scripts/bootstrap.sh [--backend openmp|cuda] [--arch ARCH] [--fetch-only] [--no-apt] [--help]

  --backend B    Kokkos backend to build: openmp (Serial+OpenMP) or cuda
                 (Serial+CUDA, built with Kokkos' nvcc_wrapper). Default, as
                 in test.sh: cuda if nvidia-smi shows a GPU and nvcc exists.
  --arch ARCH    Kokkos GPU architecture for cuda (default HOPPER90), e.g.
                 AMPERE80, ADA89, BLACKWELL100.
  --fetch-only   Only gather what an offline machine needs into .deps/src/
                 (Kokkos, Kokkos Kernels and Google Benchmark tarballs, the
                 Kokkos Kernels patch, GoogleTest and Google Benchmark
                 source trees), then stop.
  --no-apt       Do not install Debian packages (also: STENCIL_NO_APT=1).

Environment:
  Kokkos_ROOT             use this existing Kokkos install instead of building
  KokkosKernels_ROOT      use this existing Kokkos Kernels install (BLAS and
                          ODE components) instead of building one
  STENCIL_KOKKOS_KERNELS_SOURCE  the Kokkos Kernels $KOKKOS_KERNELS_VERSION tarball
                          (default: .deps/src, then ../shared/deps/kokkos-kernels)
  STENCIL_KOKKOS_SOURCE   Kokkos $KOKKOS_VERSION source: tarball or unpacked directory
  STENCIL_DEBIAN_MIRROR   Debian archive base URL (default: from apt's sources)
  STENCIL_NO_APT=1        same as --no-apt
  STENCIL_KOKKOS_JOBS=N   parallel jobs for the Kokkos build (default: nproc,
                          fewer for cuda if memory is short)
  STENCIL_VERBOSE=1       show the full Kokkos build output

Prints the prefixes to use at the end, as Kokkos_ROOT=<prefix> and
KokkosKernels_ROOT=<prefix>. Without a Kokkos Kernels source it warns and
goes on: the build then leaves stencil::ode out.
EOF
}

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

backend=""
arch=$STENCIL_DEFAULT_CUDA_ARCH
fetch_only=0
no_apt=${STENCIL_NO_APT:-0}
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) [ $# -ge 2 ] || stencil_die "--backend needs a value"; backend=$2; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    --arch) [ $# -ge 2 ] || stencil_die "--arch needs a value"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#*=}; shift ;;
    --fetch-only) fetch_only=1; shift ;;
    --no-apt) no_apt=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; stencil_die "unknown argument '$1'" ;;
  esac
done
backend=${backend:-$(stencil_default_backend)}
stencil_check_backend "$backend"
arch=$(stencil_normalize_arch "$arch")

# ---------------------------------------------------------------- packages

DEB_PACKAGES=(cmake g++ make curl ca-certificates libgtest-dev googletest
  libbenchmark-dev python3 python3-matplotlib patch)
# MPI is optional (stencil::mpi and its tests are built where CMake finds
# it): installed where apt can, and a failure to install it is a warning.
OPTIONAL_DEB_PACKAGES=(libopenmpi-dev openmpi-bin)

missing_debs() {
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || printf '%s\n' "$p"
  done
}

have_build_tools() {
  stencil_have cmake && { stencil_have "${CXX:-c++}" || stencil_have g++; } &&
    { stencil_have ninja || stencil_have make; }
}

apt_updated=0
apt_update() {
  [ "$apt_updated" = 0 ] || return 0
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt_updated=1
}

install_packages() {
  local -a missing
  if [ "$no_apt" = 1 ] || ! stencil_have apt-get || ! stencil_have dpkg-query; then
    if have_build_tools; then
      stencil_log "skipping Debian packages (no apt-get, or --no-apt); cmake and a compiler are present"
      return 0
    fi
    stencil_die "cmake, a C++ compiler and ninja or make are needed, and this machine has no apt-get to install them" \
      "install them with the system's package manager, then rerun"
  fi
  mapfile -t missing < <(missing_debs "${DEB_PACKAGES[@]}")
  mapfile -t optional < <(missing_debs "${OPTIONAL_DEB_PACKAGES[@]}")
  [ ${#missing[@]} -gt 0 ] || [ ${#optional[@]} -gt 0 ] || return 0

  if [ ${#missing[@]} -eq 0 ] && { [ "$(id -u)" != 0 ] || ! apt_update; }; then
    stencil_warn "MPI is not installed (${optional[*]}) and apt cannot install it here: building without stencil::mpi"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    stencil_die "missing Debian packages: ${missing[*]}" \
      "install them with:" \
      "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" \
      "then rerun this script (or pass --no-apt to skip this check)"
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    stencil_log "installing Debian packages: ${missing[*]}"
    apt_update || stencil_die "apt-get update failed (no network?)" \
      "fix apt, or on an offline machine rerun with --no-apt"
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y -q --no-install-recommends "${missing[@]}" ||
      stencil_die "apt-get install failed for: ${missing[*]}"
  fi
  if [ ${#optional[@]} -gt 0 ]; then
    stencil_log "installing optional Debian packages (MPI): ${optional[*]}"
    apt-get install -y -q --no-install-recommends "${optional[@]}" ||
      stencil_warn "apt-get install failed for ${optional[*]}: building without MPI (stencil::mpi and its tests are left out)"
  fi
}

# ---------------------------------------------------------------- downloads

sha256_of() {
  if stencil_have sha256sum; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# verify_file FILE SIZE SHA256: returns 0 if FILE is exactly the pinned one.
verify_file() {
  [ -f "$1" ] && [ "$(wc -c <"$1" | tr -d ' ')" = "$2" ] && [ "$(sha256_of "$1")" = "$3" ]
}

# The Debian archive base URL from this machine's apt configuration: the
# first http(s) source whose path ends in /debian (so not debian-security).
debian_base_url() {
  if [ -n "${STENCIL_DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "${STENCIL_DEBIAN_MIRROR%/}"
    return 0
  fi
  local -a files=()
  local f url
  for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && files+=("$f"); done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do [ -f "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || return 1
  url=$(awk '
    /^[[:space:]]*#/ { next }
    FILENAME ~ /\.sources$/ && tolower($1) == "uris:" {
      for (i = 2; i <= NF; i++) print $i; next
    }
    FILENAME !~ /\.sources$/ && ($1 == "deb" || $1 == "deb-src") {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if (i <= NF) print $i
    }' "${files[@]}" |
    sed 's:/*$::' | grep -E '^https?://.*/debian$' | head -n 1) || true
  [ -n "$url" ] || return 1
  printf '%s\n' "$url"
}

# Honour apt's proxy setting too, since it is what makes the archive reachable.
apt_proxy() {
  local proxy=""
  if [ -z "${http_proxy:-}${HTTP_PROXY:-}" ] && stencil_have apt-config; then
    eval "$(apt-config shell proxy Acquire::http::Proxy 2>/dev/null)" || true
  fi
  [ "$proxy" = DIRECT ] || printf '%s\n' "$proxy"
}

download() {
  local url=$1 dest=$2 proxy
  proxy=$(apt_proxy)
  if stencil_have curl; then
    curl -fsSL --retry 3 --connect-timeout 20 ${proxy:+--proxy "$proxy"} -o "$dest" "$url"
  elif stencil_have wget; then
    ${proxy:+env http_proxy="$proxy"} wget -q -O "$dest" "$url"
  else
    stencil_die "neither curl nor wget is installed; cannot download $url"
  fi
}

# fetch_pinned NAME POOL_PATH SIZE SHA256: makes .deps/src/NAME the verified
# file, downloading it from the Debian archive if it is not already there.
fetch_pinned() {
  local name=$1 pool_path=$2 size=$3 sha=$4
  local dest="$STENCIL_SRC_CACHE/$name" base tmp
  if verify_file "$dest" "$size" "$sha"; then
    return 0
  fi
  if [ -e "$dest" ]; then
    stencil_warn "cached $dest has the wrong checksum; downloading it again"
    rm -f "$dest"
  fi
  base=$(debian_base_url) ||
    stencil_die "cannot find a Debian archive in /etc/apt/sources.list(.d) to download $name from" \
      "set STENCIL_DEBIAN_MIRROR=<base URL of a Debian mirror>, or put the file at $dest"
  mkdir -p "$STENCIL_SRC_CACHE"
  tmp=$(mktemp "$dest.part.XXXXXX")
  stencil_log "downloading $base/$pool_path"
  if ! download "$base/$pool_path" "$tmp"; then
    rm -f "$tmp"
    stencil_die "download of $base/$pool_path failed" \
      "check the network, or copy the file to $dest (SHA-256 $sha)"
  fi
  if ! verify_file "$tmp" "$size" "$sha"; then
    local got_size got_sha
    got_size=$(wc -c <"$tmp" | tr -d ' ')
    got_sha=$(sha256_of "$tmp")
    rm -f "$tmp"
    stencil_die "downloaded $name does not match the pinned checksum; refusing to use it" \
      "expected $size bytes, SHA-256 $sha" \
      "got      $got_size bytes, SHA-256 $got_sha" \
      "from $base/$pool_path"
  fi
  chmod go+r "$tmp" # mktemp makes it private; it is a public tarball
  mv -f "$tmp" "$dest"
}

# ---------------------------------------------------------------- fetch-only

# Copies/unpacks into a temporary sibling and renames, so an interrupted run
# never leaves a partial tree that looks usable.
fetch_googletest() {
  local dest="$STENCIL_SRC_CACHE/googletest" tmp
  [ -f "$dest/CMakeLists.txt" ] && return 0
  [ -f /usr/src/googletest/CMakeLists.txt ] ||
    stencil_die "/usr/src/googletest is missing, so there is no GoogleTest source to copy" \
      "install it: apt-get install googletest libgtest-dev"
  rm -rf "$dest"
  tmp=$(mktemp -d "$dest.tmp.XXXXXX")
  # -L: the tree is carried to other machines, where links may not survive.
  cp -RL /usr/src/googletest/. "$tmp/"
  chmod go+rX "$tmp"
  mv "$tmp" "$dest"
}

fetch_benchmark() {
  local dest="$STENCIL_SRC_CACHE/benchmark" tmp
  fetch_pinned "$BENCHMARK_TARBALL" "$BENCHMARK_POOL_PATH" "$BENCHMARK_SIZE" "$BENCHMARK_SHA256"
  [ -f "$dest/CMakeLists.txt" ] && return 0
  rm -rf "$dest"
  tmp=$(mktemp -d "$dest.tmp.XXXXXX")
  tar -xzf "$STENCIL_SRC_CACHE/$BENCHMARK_TARBALL" -C "$tmp" --strip-components=1 ||
    { rm -rf "$tmp"; stencil_die "could not unpack $STENCIL_SRC_CACHE/$BENCHMARK_TARBALL"; }
  chmod go+rX "$tmp"
  mv "$tmp" "$dest"
}

# ---------------------------------------------------------------- kokkos

# Everything that determines the install's contents. The stamp file holds
# this text; a different text means the install is stale.
kokkos_cmake_options() {
  printf '%s\n' -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF \
    -DKokkos_ENABLE_EXAMPLES=OFF -DKokkos_ENABLE_BENCHMARKS=OFF
  if [ "$backend" = cuda ]; then
    printf '%s\n' -DKokkos_ENABLE_CUDA=ON "-DKokkos_ARCH_$arch=ON"
  else
    printf '%s\n' -DKokkos_ENABLE_OPENMP=ON
  fi
}

kokkos_stamp_text() {
  echo "kokkos $KOKKOS_VERSION"
  echo "backend $backend"
  [ "$backend" != cuda ] || echo "arch $arch"
  # The compilers are part of the ABI: a toolchain upgrade forces a rebuild.
  echo "cxx $({ "${CXX:-c++}" --version 2>/dev/null || g++ --version; } | head -n 1)"
  if [ "$backend" = cuda ]; then
    echo "nvcc $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo unknown)"
  fi
  kokkos_cmake_options
}

# Prints an unpacked Kokkos source tree, unpacking a tarball into $1 if need be.
kokkos_source_tree() {
  local scratch=$1 src=${STENCIL_KOKKOS_SOURCE:-} version
  if [ -n "$src" ]; then
    if [ ! -e "$src" ] && [ -e "$STENCIL_ROOT/$src" ]; then src="$STENCIL_ROOT/$src"; fi
    [ -e "$src" ] || stencil_die "STENCIL_KOKKOS_SOURCE=$src does not exist"
    if [ -d "$src" ]; then
      src=$(cd "$src" && pwd)
      version=$(sed -n 's/^set(Kokkos_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)).*/\2/p' \
        "$src/CMakeLists.txt" 2>/dev/null | paste -sd. -)
      [ "$version" = "$KOKKOS_VERSION" ] ||
        stencil_die "STENCIL_KOKKOS_SOURCE=$src is not a Kokkos $KOKKOS_VERSION source tree (found '${version:-no version}')"
      printf '%s\n' "$src"
      return 0
    fi
    verify_file "$src" "$KOKKOS_SIZE" "$KOKKOS_SHA256" ||
      stencil_die "STENCIL_KOKKOS_SOURCE=$src does not match the pinned Kokkos $KOKKOS_VERSION tarball; refusing to build it" \
        "expected $KOKKOS_SIZE bytes, SHA-256 $KOKKOS_SHA256" \
        "got      $(wc -c <"$src" | tr -d ' ') bytes, SHA-256 $(sha256_of "$src")" \
        "re-download it with: scripts/bootstrap.sh --fetch-only"
  else
    fetch_pinned "$KOKKOS_TARBALL" "$KOKKOS_POOL_PATH" "$KOKKOS_SIZE" "$KOKKOS_SHA256"
    src="$STENCIL_SRC_CACHE/$KOKKOS_TARBALL"
  fi
  mkdir -p "$scratch/src"
  tar -xzf "$src" -C "$scratch/src" --strip-components=1 ||
    stencil_die "could not unpack $src"
  printf '%s\n' "$scratch/src"
}

# Runs a build step, keeping its output in the log; on failure shows the tail.
run_logged() {
  local log=$1 what=$2
  shift 2
  stencil_log "$what"
  if [ "${STENCIL_VERBOSE:-0}" = 1 ]; then
    "$@" 2>&1 | tee -a "$log" && return 0
  else
    "$@" >>"$log" 2>&1 && return 0
    tail -n 60 "$log" >&2
  fi
  stencil_die "${RUN_LOGGED_PACKAGE:-Kokkos}: $what failed" "full log: $log"
}

build_kokkos() {
  local prefix=$1 stamp_text=$2
  local name scratch log src tmp_prefix jobs
  local -a opts gen cxx_args
  name=$(basename "$prefix")
  scratch="$STENCIL_DEPS/build/$name"
  log="$STENCIL_DEPS/logs/$name.log"
  tmp_prefix="$prefix.tmp"

  rm -rf "$scratch" "$tmp_prefix"
  mkdir -p "$scratch" "$(dirname "$log")"
  : >"$log"
  # A failed or interrupted build must not leave a prefix that looks complete.
  KOKKOS_TMP_PREFIX=$tmp_prefix
  trap 'rm -rf "$KOKKOS_TMP_PREFIX"' EXIT

  src=$(kokkos_source_tree "$scratch")
  mapfile -t opts < <(kokkos_cmake_options)
  cxx_args=()
  if [ "$backend" = cuda ]; then
    stencil_have nvcc ||
      stencil_die "the cuda backend needs nvcc, which is neither on PATH nor at /usr/local/cuda/bin" \
        "install the CUDA toolkit or put its bin directory on PATH"
    # CMake 3.25 cannot use Kokkos' CUDA-as-a-language mode; nvcc_wrapper as
    # the C++ compiler is the supported alternative.
    cxx_args=("-DCMAKE_CXX_COMPILER=$src/bin/nvcc_wrapper")
  fi
  mapfile -t gen < <(stencil_generator_args "$scratch/build")
  jobs=$(stencil_jobs "$backend" "${STENCIL_KOKKOS_JOBS:-}")

  local what=$backend
  [ "$backend" != cuda ] || what="cuda $arch"
  stencil_log "building Kokkos $KOKKOS_VERSION ($what) into $prefix; log: $log"
  # The final prefix goes into the configuration (some installed files embed
  # it); only the install step is redirected to the temporary prefix.
  run_logged "$log" "configure" cmake "${gen[@]}" -S "$src" -B "$scratch/build" \
    "-DCMAKE_INSTALL_PREFIX=$prefix" "${cxx_args[@]}" "${opts[@]}"
  run_logged "$log" "build (-j $jobs)" cmake --build "$scratch/build" -j "$jobs"
  run_logged "$log" "install" cmake --install "$scratch/build" --prefix "$tmp_prefix"

  stencil_kokkos_install_ok "$tmp_prefix" "$backend" ||
    stencil_die "Kokkos installed, but $tmp_prefix lacks KokkosConfig.cmake or the expected backend" \
      "full log: $log"
  if grep -rlF "$tmp_prefix" "$tmp_prefix" >/dev/null 2>&1; then
    stencil_die "Kokkos install in $tmp_prefix refers to its temporary path and cannot be moved" \
      "files: $(grep -rlF "$tmp_prefix" "$tmp_prefix" | head -n 3 | tr '\n' ' ')"
  fi

  printf '%s\n' "$stamp_text" >"$tmp_prefix/$STAMP_NAME"
  rm -rf "$prefix"
  mv "$tmp_prefix" "$prefix"
  trap - EXIT
  # The unpacked source stays: the installed KokkosConfigCommon.cmake records
  # the nvcc_wrapper it was built with by its path in that tree.
  rm -rf "$scratch/build"
  stencil_log "Kokkos $KOKKOS_VERSION installed in $prefix"
}

STAMP_NAME=.stencil-bootstrap-ok

# ---------------------------------------------------------------- kokkos kernels

# find_pinned NAME SIZE SHA256 [FILE...]: prints the first existing FILE
# that matches the pin, warning about any that does not; nothing if none.
find_pinned() {
  local name=$1 size=$2 sha=$3 f
  shift 3
  for f in "$@"; do
    if [ -z "$f" ] || [ ! -f "$f" ]; then continue; fi
    if verify_file "$f" "$size" "$sha"; then
      printf '%s\n' "$f"
      return 0
    fi
    stencil_warn "$f does not match the pinned $name (SHA-256 $sha); not using it"
  done
}

kokkos_kernels_tarball() {
  find_pinned "$KOKKOS_KERNELS_TARBALL" "$KOKKOS_KERNELS_SIZE" "$KOKKOS_KERNELS_SHA256" \
    "${STENCIL_KOKKOS_KERNELS_SOURCE:-}" "$STENCIL_SRC_CACHE/$KOKKOS_KERNELS_TARBALL" \
    "$STENCIL_SHARED_KOKKOS_KERNELS/$KOKKOS_KERNELS_TARBALL"
}

kokkos_kernels_patch() {
  local beside=""
  [ -z "${STENCIL_KOKKOS_KERNELS_SOURCE:-}" ] ||
    beside="$(dirname "$STENCIL_KOKKOS_KERNELS_SOURCE")/$KOKKOS_KERNELS_PATCH"
  find_pinned "$KOKKOS_KERNELS_PATCH" "$KOKKOS_KERNELS_PATCH_SIZE" "$KOKKOS_KERNELS_PATCH_SHA256" \
    "$beside" "$STENCIL_SRC_CACHE/$KOKKOS_KERNELS_PATCH" \
    "$STENCIL_SHARED_KOKKOS_KERNELS/$KOKKOS_KERNELS_PATCH"
}

# --fetch-only: the tarball and its patch into .deps/src, for machines that
# see neither ../shared nor the network (the GPU machines).
fetch_kokkos_kernels() {
  local tarball patch_file
  tarball=$(kokkos_kernels_tarball)
  patch_file=$(kokkos_kernels_patch)
  if [ -z "$tarball" ] || [ -z "$patch_file" ]; then
    stencil_warn "no Kokkos Kernels $KOKKOS_KERNELS_VERSION source (tarball and $KOKKOS_KERNELS_PATCH) in .deps/src or $STENCIL_SHARED_KOKKOS_KERNELS; machines fed from .deps/src will build without stencil::ode"
    return 0
  fi
  [ "$tarball" = "$STENCIL_SRC_CACHE/$KOKKOS_KERNELS_TARBALL" ] ||
    cp -f "$tarball" "$STENCIL_SRC_CACHE/$KOKKOS_KERNELS_TARBALL"
  [ "$patch_file" = "$STENCIL_SRC_CACHE/$KOKKOS_KERNELS_PATCH" ] ||
    cp -f "$patch_file" "$STENCIL_SRC_CACHE/$KOKKOS_KERNELS_PATCH"
}

kokkos_kernels_cmake_options() {
  printf '%s\n' -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 \
    -DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF \
    -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON \
    -DKokkosKernels_ENABLE_COMPONENT_ODE=ON \
    -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TESTS=OFF \
    -DKokkosKernels_ENABLE_EXAMPLES=OFF -DKokkosKernels_ENABLE_PERFTESTS=OFF
}

# Builds the pinned, patched Kokkos Kernels against the Kokkos in $1 (header
# only: no explicit instantiations), unless $KokkosKernels_ROOT or an
# up-to-date project-local install is there. Prints KokkosKernels_ROOT=.
ensure_kokkos_kernels() {
  local kokkos_prefix=$1 prefix stamp_text tarball patch_file
  local name scratch log tmp_prefix
  local -a opts gen cxx_args
  if [ -n "${KokkosKernels_ROOT:-}" ]; then
    if stencil_kokkos_kernels_install_ok "$KokkosKernels_ROOT"; then
      stencil_log "using the Kokkos Kernels install from the environment"
      echo "KokkosKernels_ROOT=$(cd "$KokkosKernels_ROOT" && pwd)"
      return 0
    fi
    stencil_warn "ignoring KokkosKernels_ROOT=$KokkosKernels_ROOT: no lib*/cmake/KokkosKernels/KokkosKernelsConfig.cmake there"
  fi
  prefix=$(stencil_kokkos_kernels_local_prefix "$backend" "$arch")
  stamp_text=$(
    echo "kokkos-kernels $KOKKOS_KERNELS_VERSION + $KOKKOS_KERNELS_PATCH $KOKKOS_KERNELS_PATCH_SHA256"
    echo "kokkos $kokkos_prefix"
    cat "$kokkos_prefix/$STAMP_NAME" 2>/dev/null
    kokkos_kernels_cmake_options
  )
  if [ "$(cat "$prefix/$STAMP_NAME" 2>/dev/null)" = "$stamp_text" ]; then
    stencil_log "Kokkos Kernels $KOKKOS_KERNELS_VERSION ($backend) is up to date"
    echo "KokkosKernels_ROOT=$prefix"
    return 0
  fi
  tarball=$(kokkos_kernels_tarball)
  patch_file=$(kokkos_kernels_patch)
  if [ -z "$tarball" ] || [ -z "$patch_file" ]; then
    stencil_warn "no Kokkos Kernels $KOKKOS_KERNELS_VERSION source: looked for $KOKKOS_KERNELS_TARBALL and $KOKKOS_KERNELS_PATCH in \$STENCIL_KOKKOS_KERNELS_SOURCE, $STENCIL_SRC_CACHE and $STENCIL_SHARED_KOKKOS_KERNELS; building without stencil::ode (put them in $STENCIL_SRC_CACHE, or set KokkosKernels_ROOT to an install)"
    return 0
  fi

  name=$(basename "$prefix")
  scratch="$STENCIL_DEPS/build/$name"
  log="$STENCIL_DEPS/logs/$name.log"
  tmp_prefix="$prefix.tmp"
  rm -rf "$scratch" "$tmp_prefix"
  mkdir -p "$scratch/src" "$(dirname "$log")"
  : >"$log"
  KOKKOS_TMP_PREFIX=$tmp_prefix
  trap 'rm -rf "$KOKKOS_TMP_PREFIX"' EXIT
  RUN_LOGGED_PACKAGE="Kokkos Kernels"
  run_logged "$log" "unpack $tarball" tar -xzf "$tarball" -C "$scratch/src" --strip-components=1
  if stencil_have patch; then
    run_logged "$log" "apply $KOKKOS_KERNELS_PATCH" patch -p1 -d "$scratch/src" -i "$patch_file"
  elif stencil_have git; then
    # The ceiling keeps git from taking the project's own repository (.deps
    # lies inside it) for the tree to patch.
    run_logged "$log" "apply $KOKKOS_KERNELS_PATCH" env GIT_CEILING_DIRECTORIES="$scratch" \
      git -C "$scratch/src" apply -p1 "$patch_file"
  else
    rm -rf "$scratch"
    trap - EXIT
    stencil_warn "neither patch nor git is installed to apply $KOKKOS_KERNELS_PATCH; building without stencil::ode"
    return 0
  fi
  mapfile -t opts < <(kokkos_kernels_cmake_options)
  cxx_args=()
  [ "$backend" != cuda ] || cxx_args=("-DCMAKE_CXX_COMPILER=$kokkos_prefix/bin/nvcc_wrapper")
  mapfile -t gen < <(stencil_generator_args "$scratch/build")
  stencil_log "building Kokkos Kernels $KOKKOS_KERNELS_VERSION ($backend) into $prefix; log: $log"
  run_logged "$log" "configure" cmake "${gen[@]}" -S "$scratch/src" -B "$scratch/build" \
    "-DCMAKE_INSTALL_PREFIX=$prefix" "-DKokkos_ROOT=$kokkos_prefix" "${cxx_args[@]}" "${opts[@]}"
  run_logged "$log" "build" cmake --build "$scratch/build" -j "$(stencil_jobs "$backend" "${STENCIL_KOKKOS_JOBS:-}")"
  run_logged "$log" "install" cmake --install "$scratch/build" --prefix "$tmp_prefix"
  stencil_kokkos_kernels_install_ok "$tmp_prefix" ||
    stencil_die "Kokkos Kernels installed, but $tmp_prefix lacks KokkosKernelsConfig.cmake" "full log: $log"
  printf '%s\n' "$stamp_text" >"$tmp_prefix/$STAMP_NAME"
  rm -rf "$prefix"
  mv "$tmp_prefix" "$prefix"
  trap - EXIT
  rm -rf "$scratch"
  RUN_LOGGED_PACKAGE=""
  stencil_log "Kokkos Kernels $KOKKOS_KERNELS_VERSION installed in $prefix"
  echo "KokkosKernels_ROOT=$prefix"
}

# ---------------------------------------------------------------- main

install_packages
[ "$backend" != cuda ] || stencil_ensure_cuda_on_path

if [ "$fetch_only" = 1 ]; then
  mkdir -p "$STENCIL_SRC_CACHE"
  fetch_pinned "$KOKKOS_TARBALL" "$KOKKOS_POOL_PATH" "$KOKKOS_SIZE" "$KOKKOS_SHA256"
  fetch_googletest
  fetch_benchmark
  fetch_kokkos_kernels
  stencil_log "offline sources are in $STENCIL_SRC_CACHE ($(du -sh "$STENCIL_SRC_CACHE" | cut -f1)):"
  for f in "$STENCIL_SRC_CACHE"/*; do
    case "$f" in *.part.* | *.tmp.*) ;; *) printf '    %s\n' "$(basename "$f")" >&2 ;; esac
  done
  exit 0
fi

# Sets KOKKOS_PREFIX to a usable Kokkos install, building it if need be.
ensure_kokkos() {
  if [ -n "${Kokkos_ROOT:-}" ]; then
    if stencil_kokkos_install_ok "$Kokkos_ROOT" "$backend"; then
      stencil_log "using the Kokkos install from the environment; nothing to build"
      KOKKOS_PREFIX=$(stencil_kokkos_prefix "$backend" "$arch")
      return 0
    fi
    stencil_warn "ignoring Kokkos_ROOT=$Kokkos_ROOT: no lib*/cmake/Kokkos/KokkosConfig.cmake there, or CUDA is enabled in it and backend '$backend' does not match"
  fi

  local prefix stamp_text
  prefix=$(stencil_kokkos_local_prefix "$backend" "$arch")
  KOKKOS_PREFIX=$prefix
  stamp_text=$(kokkos_stamp_text)
  if [ "$(cat "$prefix/$STAMP_NAME" 2>/dev/null)" = "$stamp_text" ]; then
    stencil_log "Kokkos $KOKKOS_VERSION ($backend) is up to date"
    return 0
  fi

  # Two scripts bootstrapping at once (say, test.sh and bench.sh) must not
  # build into the same temporary prefix.
  mkdir -p "$STENCIL_DEPS"
  if stencil_have flock; then
    exec 9>"$STENCIL_DEPS/.lock-$(basename "$prefix")"
    flock 9
    if [ "$(cat "$prefix/$STAMP_NAME" 2>/dev/null)" = "$stamp_text" ]; then
      return 0
    fi
  fi
  if [ -e "$prefix" ]; then
    stencil_log "rebuilding $prefix: it is incomplete or was built with other options"
  fi
  build_kokkos "$prefix" "$stamp_text"
}

ensure_kokkos
echo "Kokkos_ROOT=$KOKKOS_PREFIX"
ensure_kokkos_kernels "$KOKKOS_PREFIX"
