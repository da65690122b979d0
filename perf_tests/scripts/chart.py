#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Bar chart of a stencil_perf JSON file: GCells/s per stencil and policy,
a column of panels per precision, eight stencils a panel, with each
stencil's DRAM-bound ceiling as a line.

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


# Groups (stencil, or stencil and size) per panel: a panel stays readable
# however many rows a results file holds, and panels stack in a grid.
GROUPS_PER_PANEL = 8


def base_policy(policy):
    """The policy a variant row belongs to: 'TemporalBlocking.p1' ->
    'TemporalBlocking' (stencil_perf names a policy's variants
    <policy>.<variant>)."""
    return policy.split(".", 1)[0]


def render(context, rows, path, log=None):
    """Draws `rows` (results_table.Row) into the PNG file `path`: one column
    of panels per precision, GROUPS_PER_PANEL stencils (or stencil and
    size) per panel, one bar per policy with the best median of the policy
    and its variants (the table names each variant), and each group's
    DRAM-bound ceiling as a black line over it. `log`: a logarithmic y axis
    (None: where a panel's bars span more than 30x)."""
    plt = _pyplot()
    rows = [r for r in rows if r.median is not None]
    if not rows:
        raise ChartError("no successful benchmark to draw")
    precisions = list(dict.fromkeys(r.precision for r in rows))
    policies = list(dict.fromkeys(base_policy(r.policy) for r in rows))
    several_sizes = len({(r.stencil, r.size) for r in rows}) > len(
        {r.stencil for r in rows})

    def group(r):
        return f"{r.stencil}\n{r.size}" if several_sizes else r.stencil

    groups = list(dict.fromkeys(group(r) for r in rows))
    panels = [groups[i:i + GROUPS_PER_PANEL]
              for i in range(0, len(groups), GROUPS_PER_PANEL)]
    # best[(precision, group, policy)]: the row of the best median.
    best, ceilings = {}, {}
    for r in rows:
        key = (r.precision, group(r), base_policy(r.policy))
        if key not in best or r.median > best[key].median:
            best[key] = r
        # The one-step DRAM bound (ceiling=dram, dram3v, ...): other rows'
        # ceilings are a depth's multiple of it (dram*8) or an FMA peak.
        kind = r.label_fields().get("ceiling", "")
        if r.ceiling and kind.startswith("dram") and "*" not in kind:
            ceilings[(r.precision, group(r))] = r.ceiling
    colours = plt.get_cmap("tab10" if len(policies) <= 10 else "tab20")
    fig, axes = plt.subplots(
        len(panels), len(precisions), squeeze=False,
        figsize=(1.2 * GROUPS_PER_PANEL * len(precisions) + 2.5,
                 3.0 * len(panels)))
    drawn = set()
    for column, precision in enumerate(precisions):
        for panel, ax in zip(panels, axes[:, column]):
            present = [p for p in policies
                       if any((precision, g, p) in best for g in panel)]
            width = 0.8 / max(1, len(present))
            heights_all = []
            for i, policy in enumerate(present):
                xs, heights, low, high = [], [], [], []
                for g_index, g in enumerate(panel):
                    r = best.get((precision, g, policy))
                    if r is None:
                        continue
                    xs.append(g_index - 0.4 + width * (i + 0.5))
                    heights.append(r.median)
                    spread = r.gcells or [r.median]
                    low.append(r.median - min(spread))
                    high.append(max(spread) - r.median)
                heights_all += heights
                colour = colours(policies.index(policy))
                ax.bar(xs, heights, width * 0.92, color=colour,
                       label=None if policy in drawn else policy,
                       yerr=[low, high], capsize=1.5,
                       error_kw={"elinewidth": 0.6})
                drawn.add(policy)
            for g_index, g in enumerate(panel):
                c = ceilings.get((precision, g))
                if c:
                    ax.hlines(c, g_index - 0.45, g_index + 0.45, color="black",
                              linestyle="--", linewidth=1.0,
                              label=None if "ceiling" in drawn else
                              "DRAM-bound ceiling")
                    drawn.add("ceiling")
                    heights_all.append(c)
            positive = [h for h in heights_all if h > 0]
            use_log = log if log is not None else (
                len(positive) > 1 and max(positive) > 30 * min(positive))
            if use_log:
                ax.set_yscale("log")
            ax.set_title(precision, fontsize=9)
            ax.set_ylabel("GCells/s (median)", fontsize=8)
            ax.set_xticks(range(len(panel)))
            ax.set_xticklabels(panel, fontsize=7)
            ax.set_xlim(-0.6, GROUPS_PER_PANEL - 0.4)
            ax.tick_params(axis="y", labelsize=7)
            ax.grid(axis="y", alpha=0.3)
    handles, labels = [], []
    for ax in axes.flat:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.legend(handles, labels, loc="upper center", ncol=min(8, len(labels)),
               fontsize=8, bbox_to_anchor=(0.5, 1.0 - 0.25 / fig.get_figheight()))
    title = (f"stencil_perf on {results_table.device_name(context)} — "
             f"{context.get('mode', '?')} mode, revision "
             f"{context.get('stencil_revision', '?')}; bars: the best median "
             "of each policy and its variants")
    fig.suptitle(title, fontsize=10, y=1.0 - 0.05 / fig.get_figheight())
    fig.tight_layout(rect=(0, 0, 1, 1.0 - 0.75 / fig.get_figheight()))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def png_size(path):
    """(width, height) in pixels, from a PNG's header."""
    with open(path, "rb") as f:
        header = f.read(24)
    return (int.from_bytes(header[16:20], "big"),
            int.from_bytes(header[20:24], "big"))


def synthetic_json(path, stencils=2):
    """A small file shaped like stencil_perf's output, of `stencils`
    stencils (the first two j2d5pt and j3d7pt)."""
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
    names = ["j2d5pt", "j3d7pt"] + [f"s{k}" for k in range(2, stencils)]
    for s_index, stencil in enumerate(names[:stencils]):
        for precision, ceiling in (("double", 6.25), ("float", 12.5)):
            for p_index, policy in enumerate(
                    ["Naive", "SpatialBlocking", "TemporalBlocking.p1"]):
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
        width, height = png_size(png)
        many = os.path.join(tmp, "many.json")
        synthetic_json(many, stencils=40)
        _, many_rows = results_table.load(many)
        render(context, many_rows, png)
        many_width, many_height = png_size(png)
        if many_width != width or many_height <= height:
            print("chart.py: selftest FAILED: 40 stencils made a PNG of "
                  f"{many_width}x{many_height}, 2 one of {width}x{height}; "
                  "panels should stack, not widen", file=sys.stderr)
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
    p.add_argument("--log", dest="log", action="store_const", const=True,
                   default=None, help="logarithmic y axes (default: where a "
                   "panel's bars span more than 30x)")
    p.add_argument("--linear", dest="log", action="store_const", const=False,
                   help="linear y axes")
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
