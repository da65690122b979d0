#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Bar chart of a stencil_perf JSON file: GCells/s per stencil and policy,
one panel per precision, with the DRAM-bound ceiling as a line.

    chart.py r.json --out r.png
    chart.py --selftest        # renders synthetic data; what CI runs

Needs matplotlib (Debian: python3-matplotlib); renders without a display.
"""

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_table  # noqa: E402  pylint: disable=wrong-import-position


class ChartError(Exception):
    """Something that prevents drawing, with what to do about it."""


def _pyplot():
    try:
        import matplotlib  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise ChartError(
            f"matplotlib is not available to {sys.executable}; install "
            "python3-matplotlib (Debian) or 'pip install matplotlib', or run "
            "the script with /usr/bin/python3") from e
    matplotlib.use("Agg")  # no display on build machines
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
    return plt


def _ceiling(context, rows, precision):
    """The DRAM-bound ceiling of one kernel per step for `precision`."""
    value = context.get(f"dram_ceiling_GCells/s_{precision}")
    if value is not None:
        try:
            return float(value)
        except ValueError:
            pass
    for r in rows:
        if r.precision == precision and r.label_fields().get("ceiling") == "dram":
            return r.ceiling
    return None


def render(context, rows, path, log=False):
    """Draws `rows` (results_table.Row) into the PNG file `path`."""
    plt = _pyplot()
    rows = [r for r in rows if r.median is not None]
    if not rows:
        raise ChartError("no successful benchmark to draw")
    precisions = list(dict.fromkeys(r.precision for r in rows))
    policies = list(dict.fromkeys(r.policy for r in rows))
    several_sizes = len({r.size for r in rows}) > 1

    def group(r):
        return f"{r.stencil}\n{r.size}" if several_sizes else r.stencil

    groups = list(dict.fromkeys(group(r) for r in rows))
    colours = plt.get_cmap("tab10")
    width = 0.8 / len(policies)
    fig, axes = plt.subplots(
        len(precisions), 1, squeeze=False,
        figsize=(max(8.0, 0.45 * len(groups) * len(policies) + 2.5),
                 3.6 * len(precisions)))
    for ax, precision in zip(axes[:, 0], precisions):
        by_key = {(group(r), r.policy): r for r in rows
                  if r.precision == precision}
        for i, policy in enumerate(policies):
            xs, heights, low, high = [], [], [], []
            for g_index, g in enumerate(groups):
                r = by_key.get((g, policy))
                if r is None:
                    continue
                xs.append(g_index - 0.4 + width * (i + 0.5))
                heights.append(r.median)
                spread = r.gcells or [r.median]
                low.append(r.median - min(spread))
                high.append(max(spread) - r.median)
            ax.bar(xs, heights, width * 0.92, label=policy, color=colours(i),
                   yerr=[low, high], capsize=2, error_kw={"elinewidth": 0.8})
        ceiling = _ceiling(context, rows, precision)
        if ceiling:
            ax.axhline(ceiling, color="black", linestyle="--", linewidth=1.2,
                       label=f"DRAM-bound ceiling ({ceiling:.3g} GCells/s)")
        ax.set_title(precision)
        ax.set_ylabel("GCells/s (median)")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, rotation=30 if len(groups) > 6 else 0,
                           ha="right" if len(groups) > 6 else "center",
                           fontsize=8)
        ax.set_xlim(-0.6, len(groups) - 0.4)
        if log:
            ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    title = (f"stencil_perf on {results_table.device_name(context)} — "
             f"{context.get('mode', '?')} mode, revision "
             f"{context.get('stencil_revision', '?')}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def synthetic_json(path):
    """A small file shaped like stencil_perf's output."""
    context = {
        "date": "2025-01-01T00:00:00+00:00", "host_name": "selftest",
        "gpu_name": "Selftest GPU", "gpu_sm_count": "4",
        "gpu_sm_clock_MHz": "1000", "gpu_compute_capability": "9.0",
        "gpu_l2_bytes": str(4 << 20), "execution_space": "Cuda",
        "kokkos_version": "5.0.2", "kokkos_backends": "Serial,Cuda",
        "copy_GB/s": "100.00", "copy_item_bytes": "16",
        "copy_GB/s_double_items": "90.00", "copy_GB/s_float_items": "50.00",
        "copy_samples": "7 (median)",
        "dram_ceiling_GCells/s_double": "6.250",
        "dram_ceiling_GCells/s_float": "12.500",
        "mode": "quick", "repetitions": "3", "stencil_revision": "0000000",
    }
    benchmarks = []
    for s_index, stencil in enumerate(["j2d5pt", "j3d7pt"]):
        for precision, ceiling in (("double", 6.25), ("float", 12.5)):
            for p_index, policy in enumerate(["Naive", "SpatialBlocking"]):
                name = (f"{stencil}/{precision}/{policy}/quick/"
                        "iterations:1/repeats:3/manual_time")
                label = (f"domain=64x64 steps=10 ceiling=dram | "
                         f"stencil::Plan{{space: Cuda, backend: portable, "
                         f"policy: {policy}, depth 1}}")
                for rep in range(3):
                    g = ceiling * (0.5 + 0.1 * p_index + 0.05 * s_index
                                   + 0.01 * rep)
                    benchmarks.append({
                        "name": name, "run_name": name,
                        "run_type": "iteration", "repetition_index": rep,
                        "GCells/s": g, "GB/s": g * 16,
                        "ceiling_GCells/s": ceiling,
                        "frac_of_ceiling": g / ceiling, "label": label})
    benchmarks.append({
        "name": "j2d5pt/double/Auto/quick/iterations:1/repeats:3/manual_time",
        "run_name": "j2d5pt/double/Auto/quick/iterations:1/repeats:3/"
                    "manual_time",
        "run_type": "iteration", "error_occurred": True,
        "error_message": "stencil: synthetic failure"})
    benchmarks.append({
        "name": "wave2d-r1/double/AutoTuned/quick/iterations:1/repeats:1",
        "run_name": "wave2d-r1/double/AutoTuned/quick/iterations:1/repeats:1",
        "run_type": "iteration", "error_occurred": True,
        "error_message": "not applicable: synthetic reason"})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"context": context, "benchmarks": benchmarks}, f)


def selftest():
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "perf.json")
        synthetic_json(source)
        context, rows = results_table.load(source)
        png = os.path.join(tmp, "perf.png")
        render(context, rows, png)
        if not os.path.isfile(png) or os.path.getsize(png) == 0:
            print("chart.py: selftest FAILED: no PNG written", file=sys.stderr)
            return 1
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                print("chart.py: selftest FAILED: not a PNG", file=sys.stderr)
                return 1
        md = results_table.markdown(context, rows, source)
        if ("| j3d7pt | float | SpatialBlocking |" not in md or
                "failed" not in md or "| n/a |" not in md or
                sum(1 for r in rows if r.error) != 1):
            print("chart.py: selftest FAILED: table incomplete", file=sys.stderr)
            return 1
        print(f"chart.py: selftest passed ({os.path.getsize(png)} byte PNG, "
              f"{len(rows)} rows)")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="?", help="stencil_perf JSON file")
    p.add_argument("--out", help="PNG file to write (default: JSON name .png)")
    p.add_argument("--log", action="store_true", help="logarithmic y axis")
    p.add_argument("--selftest", action="store_true",
                   help="render synthetic data in a temporary directory")
    args = p.parse_args(argv)
    try:
        if args.selftest:
            return selftest()
        if not args.json:
            p.error("give a JSON file, or --selftest")
        context, rows = results_table.load(args.json)
        out = args.out or os.path.splitext(args.json)[0] + ".png"
        render(context, rows, out, log=args.log)
        print(f"wrote {out}", file=sys.stderr)
        return 0
    except (ChartError, results_table.ResultsError) as e:
        print(f"chart.py: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
