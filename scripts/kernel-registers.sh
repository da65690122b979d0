#!/usr/bin/env bash
# Lists the registers and spills ptxas gives every rank-3 device-tiling and
# SM-tiling kernel (each 3D suite stencil, float and double, every depth,
# plain and staged, one and two blocks per SM), every rank-2
# temporal-blocking kernel (each 2D suite stencil, float and double, every
# depth, plain and staged) and every register-resident kernel of the 1D
# suite (the leapfrog wave at radius 1 to 4 and heat1d-r1, each compiled
# shape), and compares two such listings. Needs nvcc and a CUDA Kokkos install (scripts/bootstrap.sh
# --backend cuda); no GPU.
#
#   scripts/kernel-registers.sh list FILE       write the listing to FILE
#   scripts/kernel-registers.sh compare OLD NEW what changed between two
#
# With STENCIL_KEEP_CUBINS=DIR, `list` also leaves the three cubins
# (rank1, rank2, rank3) in DIR, for `cuobjdump -sass` where registers are not enough.
#
# Why: the kernel's loops unroll by depth and ring period, and a source
# change that should not matter to the compiler can still move ptxas's
# register allocation, enough to make a default kernel spill (a spilling
# kernel is refused: a plan that asks for its depth gets an error, and the
# default depth moves to another one without notice). Run `list`
# before and after any edit of backends/native_cuda/ and `compare` the two.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh

usage="usage: scripts/kernel-registers.sh list FILE | compare OLD NEW"
[ $# -ge 2 ] || stencil_die "$usage"

case $1 in
list)
  out=$2
  stencil_ensure_cuda_on_path
  kokkos=$(stencil_kokkos_prefix cuda "$STENCIL_DEFAULT_CUDA_ARCH")
  [ -d "$kokkos/include" ] ||
    stencil_die "no CUDA Kokkos install at $kokkos" "run: scripts/bootstrap.sh --backend cuda"
  config=$(stencil_build_dir cuda "$STENCIL_DEFAULT_CUDA_ARCH")/include
  [ -f "$config/stencil/config.hpp" ] ||
    stencil_die "no $config/stencil/config.hpp" "configure the CUDA build first: scripts/test.sh --backend cuda"
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  # Taking the address of the dispatch that picks a kernel for any depth
  # (or shape) instantiates every kernel it can pick. Each rank is a
  # translation unit, the three compiled side by side.
  cat >"$scratch/rank3.cu" <<'EOF'
#include <stencil/native_cuda/device_tiling/launch.hpp>
#include <stencil/suite.hpp>
namespace dt = stencil::native_cuda::device_tiling;
namespace su = stencil::suite;
template <class T, class Op>
void* both() {
  static void* kernels[] = {
      (void*)&dt::Kernel<T, Op>::template function_at<1>,
      (void*)&dt::Kernel<T, Op, dt::NoExchange<T>>::template function_at<1>};
  return kernels;
}
template <class... Op>
struct Suite {
  void* all[2 * sizeof...(Op)] = {both<double, Op>()..., both<float, Op>()...};
};
Suite<su::J3d7pt, su::J3d13pt, su::J3d17ptPrescaled, su::J3d17pt,
      su::J3d27ptPrescaled, su::J3d27pt, su::Poisson19pt>
    probe;
EOF
  cat >"$scratch/rank2.cu" <<'EOF'
#include <stencil/native_cuda/temporal_blocking/launch.hpp>
#include <stencil/suite.hpp>
namespace tb = stencil::native_cuda::temporal_blocking;
namespace su = stencil::suite;
template <class... Op>
struct Suite {
  void* all[2 * sizeof...(Op)] = {(void*)&tb::Kernel<double, Op>::function...,
                                  (void*)&tb::Kernel<float, Op>::function...};
};
Suite<su::J2d5pt, su::J2d5ptPrescaled, su::J2d9pt, su::J2d9ptPrescaled,
      su::J2d9ptGol, su::J2d9ptGolPrescaled, su::J2d25pt, su::J2d25ptPrescaled>
    probe;
EOF
  cat >"$scratch/rank1.cu" <<'EOF'
#include <stencil/native_cuda/register_resident/launch.hpp>
#include <stencil/suite.hpp>
#include <stencil/suite/solvers.hpp>
namespace rr = stencil::native_cuda::register_resident;
namespace su = stencil::suite;
template <class T, class Op>
void* shapes() {
  using C = rr::ShapeChoices<T, Op>;
  static void* kernels[] = {
      (void*)rr::kernel_function<T, Op, C::narrow>(),
      (void*)rr::kernel_function<T, Op, (C::wide > 0 ? C::wide : C::narrow)>()};
  return kernels;
}
template <class... Op>
struct Suite {
  void* all[2 * sizeof...(Op)] = {shapes<double, Op>()...,
                                  shapes<float, Op>()...};
};
Suite<su::Wave<1, 1>, su::Wave<1, 2>, su::Wave<1, 3>, su::Wave<1, 4>,
      rr::SingleField<su::Heat1D<1>>>
    probe;
EOF
  for rank in 1 2 3; do
    nvcc -std=c++20 -arch=sm_90 --expt-extended-lambda --expt-relaxed-constexpr \
      -O3 -Xptxas -v -I include -I backends/native_cuda/include -I suite/include \
      -I "$config" -I "$kokkos/include" \
      -cubin -o "$scratch/rank$rank.cubin" "$scratch/rank$rank.cu" \
      >"$scratch/ptxas$rank.txt" 2>&1 &
  done
  failed=0
  for job in $(jobs -p); do wait "$job" || failed=1; done
  if [ $failed -ne 0 ]; then
    cat "$scratch"/ptxas*.txt >&2
    stencil_die "nvcc failed"
  fi
  if [ -n "${STENCIL_KEEP_CUBINS:-}" ]; then
    # For a finer comparison than registers: cuobjdump -sass of both.
    mkdir -p "$STENCIL_KEEP_CUBINS" && cp "$scratch"/rank*.cubin "$STENCIL_KEEP_CUBINS"/
  fi
  # ptxas prints, per kernel: its name, then spills, then registers ("?" if
  # a kernel's spill line were missing, rather than the last kernel's).
  cat "$scratch"/ptxas*.txt | awk '
    /Compiling entry function/ { name = $0; gsub(/.*function .|. for .*/, "", name); spill = "?" }
    /bytes spill stores/ { spill = $5 "/" $9 }
    /Used [0-9]+ registers/ && name ~ /device_tiling_3d|temporal_blocking_2d|resident_steps/ {
      print name, "regs", $5, "spill", spill; name = "" }
  ' | sort >"$out"
  stencil_log "$(wc -l <"$out") kernels listed in $out"
  ;;
compare)
  [ $# -eq 3 ] || stencil_die "$usage"
  python3 - "$2" "$3" <<'EOF'
import re
import sys


def load(path):
    kernels = {}
    for line in open(path):
        name, _, regs, _, spill = line.split()
        kernels[name] = (int(regs), spill)
    return kernels


def short(name):
    m = re.search(r"resident_stepsI(\w)N.*?suite\d+(\w+?)ILi(\d)(?:ELi(\d))?"
                  r"E.*ELi(\d+)E+v", name)
    if m:
        radius = m.group(4) or m.group(3)
        return (f"{'double' if m.group(1) == 'd' else 'float'} "
                f"{m.group(2).lower()} radius {radius} register-resident, "
                f"{m.group(5)} cells per thread")
    m = re.search(r"2dI(\w)NS_5suite\d+(\w+?)(?:Form\w+?Division\w(\d)\w*?)?"
                  r"ELi(\d+)ELb(\d)ELi(\d+)ELi(\d+)ELi(\d+)E", name)
    if m:
        form = "/div" + m.group(3) if m.group(3) else ""
        return (f"{'double' if m.group(1) == 'd' else 'float'} "
                f"{m.group(2)}{form} depth {m.group(4)} temporal blocking"
                f"{' staged' if m.group(5) == '1' else ''}, "
                f"{m.group(6)} threads x {m.group(7)} rows x "
                f"{m.group(8)} column(s)")
    m = re.search(r"3dI(\w)NS_5suite\d+(\w+?)(?:Form\w+?Division\w(\d)\w*?)?"
                  r"ELi(\d+)ENS1_\d+(\w+?)I\wEELb(\d)ELi(\d)", name)
    if not m:
        return name
    kind = "device" if m.group(5) == "TaggedExchange" else "SM"
    form = "/div" + m.group(3) if m.group(3) else ""
    return (f"{'double' if m.group(1) == 'd' else 'float'} {m.group(2)}{form} "
            f"depth {m.group(4)} {kind} tiling"
            f"{' staged' if m.group(6) == '1' else ''}, "
            f"{m.group(7)} block(s)/SM")


old, new = load(sys.argv[1]), load(sys.argv[2])
appeared_or_gone = sorted(set(old) ^ set(new))
for name in appeared_or_gone:
    print("only in", sys.argv[1] if name in old else sys.argv[2], short(name))
both = sorted(set(old) & set(new))
spilled = [n for n in both if old[n][1] != new[n][1]]
moved = [n for n in both if old[n][0] != new[n][0]]
for n in spilled:
    print(f"spills {old[n][1]} -> {new[n][1]} bytes (stores/loads): "
          f"{short(n)}, registers {old[n][0]} -> {new[n][0]}")
print(f"{len(both)} kernels in both: {len(spilled)} changed their spills, "
      f"{len(moved)} their registers")
# A kernel that appears or goes changes which depths compile: as much a
# change to look at as a new spill.
sys.exit(1 if spilled or appeared_or_gone else 0)
EOF
  ;;
*) stencil_die "$usage" ;;
esac
