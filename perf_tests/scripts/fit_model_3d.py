#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fits stencil::model's figures for the native 3D kernels to stencil_perf runs.

    fit_model_3d.py --fit A.json [B.json ...] [--check C.json ...]

The model (src/model.cpp) charges a native 3D kernel family its
instructions per computed cell, fixed + shared accesses + per_tap x taps, at
the fraction `issued` of the device's issue rate that its few warps reach;
SM tiling (TemporalBlocking on rank 3) reaches sqrt(blocks per SM) times
more and adds each pass's DRAM time, DeviceTiling adds `exchange` x the
calibrated rim exchange per streamed plane, and the sweep is bounded by a
share of the copy bandwidth per value type (the sweep without a shared
tile, prefetch 0, is a family of its own). This script fits those figures
(least squares on the logarithm of the rate, a seeded random search) to the
native 3D rows of the --fit files, and prints every row of the --fit and
--check files with measured / predicted. Rows whose label shows them timing
underflowed values (float j3d17pt and j3d27pt refilled less often than every
31 and 42 steps) are left out, and so are the Auto rows (plans that have rows of their own).
A family's fixed instructions and its issued fraction trade off against
each other, so fits from different starts land on different, equally good
figures; src/model.cpp keeps rounded figures of one, which this script reads
as its starting point (--model checks those).
Standard library only.
"""

import argparse
import json
import math
import os
import random
import re

# Points each suite stencil reads (the functors' `taps`; 0: the whole shape).
SUITE_TAPS = {"j3d17pt": 17, "poisson": 19}
FAMILIES = {
    "TemporalBlocking": "sm_tiling",
    "DeviceTiling": "device_tiling",
    "StreamingSweep": "sweep",
}
# Steps after which these float stencils' values leave the normal range
# (perf_tests refills before; runs before 9ad6883 refilled every 64 steps).
NORMAL_STEPS_FLOAT = {"j3d17pt": 31, "j3d27pt": 42}


def points(radius, shape):
    return 6 * radius + 1 if shape == "star" else (2 * radius + 1) ** 3


def shared_accesses(radius, shape, family, taps, rows=4):
    """src/model.cpp's shared_accesses for rank 3."""
    if family in ("sweep", "direct_sweep"):
        return taps + 1
    loads = 0.0
    for dz in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            span = [dy for dy in range(-radius, radius + 1)
                    if (shape == "box" or (dz != 0) + (dy != 0) + (dx != 0) <= 1)
                    and not (dx == 0 and dy == 0)]
            if span:
                loads += (max(span) - min(span) + rows) / rows
    return loads + 1


def rows_of(path):
    with open(path) as f:
        data = json.load(f)
    ctx = data["context"]
    device = {
        "name": ctx["gpu_name"],
        "issue": float(ctx["model_issue_Ginstr/s"]),
        "copy": float(ctx["model_copy_GB/s"]),
        "exchange": float(ctx["model_exchange_us"]),
        "sms": int(ctx["gpu_sm_count"]),
    }
    out = []
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" or not b.get("GCells/s"):
            continue
        label = b.get("label", "")
        policy = re.search(r"policy: (\w+)", label)
        rank = re.search(r"grid: rank (\d)", label)
        if not policy or policy.group(1) not in FAMILIES or rank.group(1) != "3":
            continue
        if b["name"].split("/")[2].startswith("Auto"):
            continue  # the same plans as rows of their own
        stencil, precision = b["name"].split("/")[:2]
        refill = re.search(r"refill_every=(\d+)", label)
        if (precision == "float" and stencil in NORMAL_STEPS_FLOAT and refill
                and int(refill.group(1)) > NORMAL_STEPS_FLOAT[stencil]):
            continue  # timed values that had underflowed (see the README)
        shape, radius = re.search(r"stencil: (\w+), radius (\d)", label).groups()
        radius = int(radius)
        extents = [int(v) for v in re.search(r"rank 3, (\d+)x(\d+)x(\d+)",
                                             label).groups()]
        per_sm = re.search(r"blocks/SM (\d+)", label)
        family = FAMILIES[policy.group(1)]
        if family == "sweep" and "no shared tile" in label:
            family = "direct_sweep"
        out.append({
            "file": path, "stencil": stencil, "size": 8 if precision == "double" else 4,
            "family": family,
            "depth": int(re.search(r"depth (\d+)", label).group(1)),
            "blocks_per_sm": int(per_sm.group(1)) if per_sm else 1,
            "radius": radius, "shape": shape, "extents": extents,
            "taps": SUITE_TAPS.get(stencil, points(radius, shape)),
            "gcells": b["GCells/s"], "device": device, "row": b["name"].split("/")[2],
        })
    return out


def predict(p, r):
    d, fam, size = r["device"], r["family"], r["size"]
    t = "double" if size == 8 else "float"
    instructions = (p[fam + ".fixed_" + t]
                    + shared_accesses(r["radius"], r["shape"], fam, r["taps"])
                    + p[fam + ".per_tap"] * r["taps"])
    issued = p[fam + ".issued_" + t]
    if fam == "sm_tiling":
        f = ((32 - 2 * r["radius"] * r["depth"]) / 32) ** 2
        issued = min(1.0, issued * math.sqrt(r["blocks_per_sm"]))
        issue = d["issue"] * issued * f / instructions
        dram = d["copy"] * r["depth"] / (size * 2)
        return 1 / (1 / issue + 1 / dram)
    if fam == "device_tiling":
        # Two or more blocks per SM at shallow depths (z segments), as in
        # src/model.cpp.
        issued = min(1.0, issued * math.sqrt(r["blocks_per_sm"]))
        plane = r["extents"][1] * r["extents"][2]
        resident = min(plane, d["sms"] * 1024)
        issue = d["issue"] * issued / instructions * resident / (d["sms"] * 1024)
        wait = resident * r["depth"] / (p["device_tiling.exchange"] * d["exchange"] * 1e3)
        return 1 / (1 / issue + 1 / wait)
    issue = d["issue"] * issued / instructions
    share = p[fam + ".dram_share_" + t]
    return min(issue, share * d["copy"] / (2 * size))


MODEL_CPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                         "src", "model.cpp")
# The C++ names of the families' figures (struct Rank3Family, in its order).
FAMILY_OF_CPP = {"sm_tiling_3d": "sm_tiling", "device_tiling_3d": "device_tiling",
                 "sweep_3d": "sweep", "direct_sweep_3d": "direct_sweep"}
FIELDS = ("fixed_double", "fixed_float", "per_tap", "issued_double", "issued_float",
          "dram_share_double", "dram_share_float")


def model_figures(path=MODEL_CPP):
    """The figures src/model.cpp keeps: read from it, so the two cannot drift."""
    text = open(path).read()
    figures = {}
    for name, values in re.findall(r"constexpr Rank3Family (\w+)\{([^}]*)\};", text):
        numbers = [float(v) for v in values.split(",")]
        numbers += [1.0] * (len(FIELDS) - len(numbers))  # the DRAM shares default to 1
        for field, value in zip(FIELDS, numbers):
            figures[FAMILY_OF_CPP[name] + "." + field] = value
    wait = re.search(r"constexpr double exchange_wait_per_plane = ([\d.]+);", text)
    if len(figures) != len(FAMILY_OF_CPP) * len(FIELDS) or not wait:
        raise SystemExit(f"fit_model_3d.py: cannot find the 3D families' figures in {path}")
    figures["device_tiling.exchange"] = float(wait.group(1))
    return figures


START = model_figures()
# Fitted: the instruction and issue figures and the exchange wait; the
# DRAM shares are measured (j3d7pt, the memory-bound row) and kept.
FITTED = [k for k in START if ".dram_share_" not in k]


def fit(rows, steps=20000, seed=1):
    p = dict(START)
    for fam in set(FAMILIES.values()) | {"direct_sweep"}:
        mine = [r for r in rows if r["family"] == fam]
        if not mine:
            continue
        keys = [k for k in FITTED if k.startswith(fam + ".")]
        score = lambda q: sum(math.log(predict(q, r) / r["gcells"]) ** 2 for r in mine)
        best, rng = score(p), random.Random(seed)
        for _ in range(steps):
            q = dict(p)
            k = rng.choice(keys)
            if ".fixed_" in k:  # may be 0: steps of instructions
                q[k] = max(0.0, q[k] + rng.gauss(0, 2))
            else:
                q[k] *= math.exp(rng.gauss(0, 0.08))
            s = score(q)
            if s < best:
                p, best = q, s
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", nargs="*", default=[], help="runs to fit to")
    ap.add_argument("--check", nargs="*", default=[], help="runs to check only")
    ap.add_argument("--model", action="store_true",
                    help="check with the figures in src/model.cpp, no fit")
    args = ap.parse_args()
    fitted = [r for f in args.fit for r in rows_of(f)]
    p = START if args.model or not fitted else fit(fitted)
    for k in sorted(p):
        print(f"{k:30} {p[k]:.3f}")
    for label, rows in (("fit", fitted), ("check", [r for f in args.check for r in rows_of(f)])):
        if not rows:
            continue
        inside = 0
        print(f"\n{label}: device stencil precision row family depth blocks/SM measured predicted ratio")
        for r in rows:
            ratio = r["gcells"] / predict(p, r)
            inside += 0.8 <= ratio <= 1.25
            print(f"{r['device']['name']} {r['stencil']} {'double' if r['size'] == 8 else 'float'} "
                  f"{r['row']} {r['family']} {r['depth']} {r['blocks_per_sm']} "
                  f"{r['gcells']:.0f} {predict(p, r):.0f} {ratio:.2f}{'' if 0.8 <= ratio <= 1.25 else ' *'}")
        print(f"{label}: {inside} of {len(rows)} rows within 0.8-1.25")


if __name__ == "__main__":
    main()
