#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""DRAM bytes per Runge-Kutta step of each stencil_perf_ode row, from ncu.

Run stencil_perf_ode with one timed step and one repetition under ncu, so
that each row launches its kernels for exactly two steps (the warm-up step
and the timed one), e.g.

  ncu --clock-control none --csv \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      stencil_perf_ode --n=2900 --method=bogacki-shampine,verner56 \
      --plan=Unfused,Fused --steps=1 --repetitions=1 > ncu_dram.csv

then `ncu_dram_per_step.py ncu_dram.csv` prints, per row, the DRAM bytes
read and written and the kernel time per step (stage kernels and halo
refreshes together). Rows are told apart by kernel family: a Fused row
launches fused_step, an Unfused row Kokkos' stage kernels, so alternate the
plans. A halo refresh at the border of two rows may be counted with the
earlier one; it moves well under 1 MB.
"""
import csv
import re
import sys


def main(path):
    text = open(path).read().splitlines()
    rows = [l.split()[0] for l in text
            if re.match(r"^bruss2d[-a-z]*/", l) and "failed" not in l]
    records = list(csv.reader(l for l in text if l.startswith('"')))
    header, body = records[0], records[1:]
    col = {name: i for i, name in enumerate(header)}
    kernels = {}
    for r in body:
        k = kernels.setdefault(int(r[col["ID"]]), {"name": r[col["Kernel Name"]]})
        k[r[col["Metric Name"]]] = float(r[col["Metric Value"]].replace(",", ""))
    # Skip what runs before the first row's first stage (Kokkos' start-up,
    # the benchmark's measurement of the machine's ceilings) and the
    # benchmark's fills of each row's initial state; the rest belong to the
    # rows in order.
    ordered = [k for _, k in sorted(kernels.items())]
    first = next((i for i, k in enumerate(ordered) if "ode::" in k["name"]),
                 len(ordered))
    work = [k for k in ordered[first:] if "stencil_perf::" not in k["name"]]
    # A new row starts where the family of the stage kernels changes. The
    # halo refreshes (detail::BoundaryHaloAxis) belong to either; they are
    # told by name, as the DRAM writes ncu charges them may be write-backs
    # of the kernel before.
    groups, current, family = [], [], None
    for k in work:
        f = "fused" if "fused_step" in k["name"] else "unfused"
        stage = "ode::" in k["name"] or "KokkosBlas" in k["name"]
        if family is not None and f != family and stage:
            groups.append(current)
            current = []
        if stage:
            family = f
        current.append(k)
    groups.append(current)
    if len(groups) != len(rows):
        sys.exit(f"{len(groups)} kernel groups for {len(rows)} rows; run "
                 "with alternating plans (--plan=Unfused,Fused)")
    print(f"{'row':46} {'read MB':>9} {'write MB':>9} {'us':>8}  (per step)")
    for name, g in zip(rows, groups):
        read = sum(k.get("dram__bytes_read.sum", 0) for k in g) / 2
        write = sum(k.get("dram__bytes_write.sum", 0) for k in g) / 2
        us = sum(k.get("gpu__time_duration.sum", 0) for k in g) / 2 / 1e3
        print(f"{name:46} {read / 1e6:9.1f} {write / 1e6:9.1f} {us:8.1f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ncu_dram.csv")
