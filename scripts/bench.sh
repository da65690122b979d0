#!/usr/bin/env bash
# Builds stencil and runs the benchmark suite (perf_tests/stencil_perf).
# Results: the console table on stdout, JSON in build/<backend>/perf_results.json.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/bench.sh [--backend openmp|cuda] [--arch ARCH] [--full|--quick] [-j N] [-- ] [stencil_perf args...]

  --backend B    openmp or cuda (default: cuda if a GPU and nvcc are present)
  --arch ARCH    Kokkos GPU architecture for cuda (default HOPPER90)
  --quick        small problem sizes (default unless running on a GPU)
  --full         full problem sizes (default for cuda with a GPU present)
  -j N           parallel build jobs
  Anything else (e.g. --benchmark_filter=...) goes to stencil_perf.
EOF
}

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

backend=""
arch=$STENCIL_DEFAULT_CUDA_ARCH
size=""
jobs=""
perf_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) [ $# -ge 2 ] || stencil_die "--backend needs a value"; backend=$2; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    --arch) [ $# -ge 2 ] || stencil_die "--arch needs a value"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#*=}; shift ;;
    --quick) size=quick; shift ;;
    --full) size=full; shift ;;
    -j) [ $# -ge 2 ] || stencil_die "-j needs a value"; jobs=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; perf_args+=("$@"); break ;;
    *) perf_args+=("$1"); shift ;;
  esac
done
stencil_resolve_build_options

# Full sizes are meant for a GPU; on a CPU they would take far too long.
if [ -z "$size" ]; then
  if [ "$backend" = cuda ] && stencil_have_gpu; then size=full; else size=quick; fi
fi

bash "$STENCIL_ROOT/scripts/bootstrap.sh" --backend "$backend" --arch "$arch"
stencil_configure_and_build "$backend" "$arch" "$jobs"
bdir=$STENCIL_BUILD_DIR

perf="$bdir/perf_tests/stencil_perf"
[ -x "$perf" ] || stencil_die "$perf was not built" \
  "is STENCIL_ENABLE_PERF_TESTS honoured by the CMake files?"
[ "$backend" != openmp ] || stencil_openmp_bench_env

json="$bdir/perf_results.json"
args=()
[ "$size" = full ] || args+=(--quick)
args+=("--benchmark_out=$json" --benchmark_out_format=json "${perf_args[@]}")
stencil_log "running $perf ${args[*]}"
"$perf" "${args[@]}" || stencil_die "stencil_perf failed (exit $?)"
stencil_log "JSON results: $json"
