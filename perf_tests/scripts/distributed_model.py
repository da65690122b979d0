#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The many-GPU model of docs/distributed-model.md, from a stencil_perf_mpi
results file: fits one exchange as alpha + bytes / beta over its NCCL
two-rank rows, checks the model against those rows, and prints the
predicted efficiencies at 8, 64 and 1024 GPUs.

    distributed_model.py perf_tests/results/nvidia-h200-x2-distributed.json

Between nodes (more than 8 GPUs) it prices every exchange at the assumed
InfiniBand figures --ib-alpha-us and --ib-gbs (not measured here).
"""

import argparse
import json
import math


def fit(rows, nccl=True):
    """alpha + bytes / beta over the two-rank rows of one transport."""
    points = [(r["bytes_per_exchange"] / 1e6, r["exchange_ms_per_block"])
              for r in rows if "/ranks:2/" in r["name"] and "error_occurred" not in r
              and (".nccl/" in r["name"]) == nccl]
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    alpha_ms = my - slope * mx
    worst = max(abs(alpha_ms + slope * x - y) for x, y in points)
    return alpha_ms * 1e-3, 1e9 / slope, n, worst  # seconds, bytes/s (MB/ms = GB/s)


def one_rank_rate(rows, stencil):
    for r in rows:
        if r["name"].startswith(stencil + "/") and "/ranks:1/" in r["name"] and ".nccl" in r["name"]:
            return r["GCells/s"] * 1e9
    raise SystemExit(f"no one-rank NCCL row of {stencil}")


def factorizations(p, rank):
    if rank == 1:
        yield [p]
        return
    for f in range(1, p + 1):
        if p % f == 0:
            for rest in factorizations(p // f, rank - 1):
                yield [f] + rest


def efficiency(glob, rate, depth, gpus, mode, dims, alpha, beta):
    rank = len(glob)
    owned = [glob[a] if mode == "weak" else math.ceil(glob[a] / dims[a]) for a in range(rank)]
    if any(dims[a] > 1 and owned[a] < depth for a in range(rank)):
        return None
    local = [owned[a] + (2 * depth if dims[a] > 1 else 0) for a in range(rank)]
    compute = math.prod(local) * depth / rate
    exchange = sum(alpha + 8 * depth * math.prod(local[b] for b in range(rank) if b != a) / beta
                   for a in range(rank) if dims[a] > 1)
    return math.prod(owned) * depth / rate / (compute + exchange)


def best(glob, rate, depth, gpus, mode, alpha, beta):
    """The process grid the library picks sends the fewest ghost cells;
    the model takes the one it predicts fastest, which agrees here."""
    out = None
    for dims in factorizations(gpus, len(glob)):
        e = efficiency(glob, rate, depth, gpus, mode, dims, alpha, beta)
        if e is not None and (out is None or e > out[0]):
            out = (e, dims)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--ib-alpha-us", type=float, default=50.0)
    ap.add_argument("--ib-gbs", type=float, default=25.0)
    args = ap.parse_args()
    rows = json.load(open(args.results))["benchmarks"]
    alpha, beta, n, worst = fit(rows)
    print(f"exchange through NCCL: {alpha * 1e6:.1f} us + bytes / {beta / 1e9:.1f} GB/s "
          f"({n} rows, largest misfit {worst:.4f} ms)")
    h_alpha, h_beta, h_n, h_worst = fit(rows, nccl=False)
    print(f"exchange through host staging: {h_alpha * 1e6:.1f} us + bytes / {h_beta / 1e9:.2f} GB/s "
          f"({h_n} rows, largest misfit {h_worst:.4f} ms)")
    cases = [("j2d5pt-prescaled", [10208, 10208], 12), ("j2d5pt-prescaled", [10208, 10208], 24),
             ("j3d7pt", [2560, 352, 384], 8)]
    for stencil, glob, depth in cases:
        rate = one_rank_rate(rows, stencil)
        for gpus in (2, 8, 64, 1024):
            a, b = (alpha, beta) if gpus <= 8 else (args.ib_alpha_us * 1e-6, args.ib_gbs * 1e9)
            weak = best(glob, rate, depth, gpus, "weak", a, b)
            strong = best(glob, rate, depth, gpus, "strong", a, b)
            print(f"{stencil} exchange every {depth}, {gpus} GPUs: weak {weak[0]:.3f} "
                  f"(ranks {'x'.join(map(str, weak[1]))}), strong {strong[0] * gpus:.2f}x "
                  f"({strong[0]:.2f}; ranks {'x'.join(map(str, strong[1]))})")


if __name__ == "__main__":
    main()
