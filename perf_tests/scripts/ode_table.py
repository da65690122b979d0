#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Markdown table of a stencil_perf_ode JSON: each problem, precision,
method and size with its Unfused and Fused rate (GCells/s = unknowns x
steps / s), Fused's speed-up and the cluster it ran.

  ode_table.py perf_tests/results/nvidia-h200-ode.json
"""
import json
import re
import sys


def main(path):
    rows = json.load(open(path))["benchmarks"]
    rate, plan = {}, {}
    for r in rows:
        if r.get("error_occurred"):
            continue
        problem, precision, method, p, n = r["name"].split("/")
        key = (problem, precision, method, int(n))
        rate[key, p] = r["GCells/s"]
        if p == "Fused":
            text = r.get("plan", "")
            m = re.search(r"clusters of (\d+x\d+)", text)
            held = re.search(r"held by one cluster of (\d+x\d+)", text)
            plan[key] = (m.group(1) if m else
                         held.group(1) + " resident" if held else "?")
    keys = sorted({k for k, _ in rate}, key=lambda k: (k[0], k[1], k[2], k[3]))
    print("| problem | precision | method | N | Unfused | Fused | Fused / Unfused | cluster |")
    print("|---|---|---|---|---|---|---|---|")
    for k in keys:
        u, f = rate.get((k, "Unfused")), rate.get((k, "Fused"))
        ratio = f"{f / u:.2f}x" if u and f else "–"
        cell = lambda v: f"{v:.3f}" if v is not None and v < 1 else (
            f"{v:.1f}" if v is not None else "–")
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {cell(u)} | {cell(f)} "
              f"| {ratio} | {plan.get(k, '–')} |")


if __name__ == "__main__":
    main(sys.argv[1])
