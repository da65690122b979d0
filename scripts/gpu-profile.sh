#!/usr/bin/env bash
# Profiles one kernel of stencil_perf with Nsight Compute on the GPU machine,
# after scripts/gpu-check.sh has built it, and records every native kernel's
# resources (registers, spills, shared memory).
#
#   OUT=/some/dir scripts/gpu-profile.sh KERNEL_REGEX [stencil_perf args...]
#
# e.g. scripts/gpu-profile.sh temporal_blocking_2d --stencil=j2d5pt
#      --precision=double --policy=TemporalBlocking --steps=8 --repetitions=1
#
# Files in $OUT: ncu.txt (speed of light, compute and memory workload,
# scheduler and warp-state statistics of the first matching launch after
# the warm-up) and resources.txt (cuobjdump --dump-resource-usage).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh

[ $# -ge 1 ] || stencil_die "usage: scripts/gpu-profile.sh KERNEL_REGEX [stencil_perf args...]"
kernel=$1
shift
OUT=${OUT:-$STENCIL_ROOT/gpu-out}
mkdir -p "$OUT" || stencil_die "cannot create OUT=$OUT"
stencil_ensure_cuda_on_path

perf=$(stencil_build_dir cuda "$STENCIL_DEFAULT_CUDA_ARCH")/perf_tests/stencil_perf
[ -x "$perf" ] || stencil_die "no $perf; run scripts/gpu-check.sh first"

if stencil_have cuobjdump; then
  cuobjdump --dump-resource-usage "$perf" 2>&1 |
    grep -A1 -E 'Function .*(temporal_blocking|naive|blocked)' |
    grep -E 'Function|REG' | paste - - | c++filt >"$OUT/resources.txt"
fi

ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
[ -n "$ncu_bin" ] || stencil_die "ncu (Nsight Compute) not found"
# The warm-up and the first timed launches are skipped: caches and clocks
# settle, and lazy module loading is done.
"$ncu_bin" --kernel-name "regex:$kernel" --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis \
  --section MemoryWorkloadAnalysis --section SchedulerStats \
  --section WarpStateStats --section LaunchStats --section Occupancy \
  --section InstructionStats \
  "$perf" "$@" >"$OUT/ncu.txt" 2>&1
rc=$?
tail -n 5 "$OUT/ncu.txt"
exit "$rc"
