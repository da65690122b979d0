#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a stencil_perf JSON file into a Markdown table (and a chart).

    stencil_perf --benchmark_out=r.json --benchmark_out_format=json
    results_table.py r.json                      # Markdown on stdout
    results_table.py r.json --md t.md --png t.png
    results_table.py r.json --out-dir perf_tests/results
        # writes <device>.md, <device>.png and a copy <device>.json

Only the Python standard library is needed for the table; --png needs
matplotlib (chart.py).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import sys

# The name stencil_perf gives every benchmark: <stencil>/<precision>/
# <policy>/<size>, then what Google Benchmark appends (iterations:1/...).
NAME_PARTS = ("stencil", "precision", "policy", "size")

# How stencil_perf's message of a row that does not apply starts (a policy
# that cannot run a solver of several fields): not a failure.
NOT_APPLICABLE = "not applicable: "


class ResultsError(Exception):
    """A file that is not stencil_perf output, with what was expected."""


class Row:
    """One benchmark: all repetitions of <stencil>/<precision>/<policy>/<size>."""

    def __init__(self, stencil, precision, policy, size):
        self.stencil = stencil
        self.precision = precision
        self.policy = policy
        self.size = size
        self.gcells = []  # one value per repetition
        self.aggregates = {}  # aggregate name -> GCells/s
        self.ceiling = None
        self.gbs = []
        self.label = ""
        self.error = None
        self.not_applicable = None  # why the policy cannot run the stencil
        self.model = None  # stencil::model's GCells/s, where it predicts

    @property
    def median(self):
        if self.gcells:
            return statistics.median(self.gcells)
        return self.aggregates.get("median")

    @property
    def best(self):
        if self.gcells:
            return max(self.gcells)
        return self.aggregates.get("max")

    @property
    def fraction(self):
        if self.median is None or not self.ceiling:
            return None
        return self.median / self.ceiling

    def label_fields(self):
        """The key=value pairs before ' | ' in the label."""
        head = self.label.split(" | ", 1)[0]
        return dict(kv.split("=", 1) for kv in head.split() if "=" in kv)

    @property
    def plan(self):
        parts = self.label.split(" | ", 1)
        return parts[1] if len(parts) == 2 else ""


def short_plan(plan):
    """'stencil::Plan{space: Cuda, backend: portable, policy: Naive ...}'
    -> 'portable Naive (Auto)', 'portable SpatialBlocking 64x8', ... ."""
    if not plan:
        return ""
    # Auto's reason and a tuned plan's timings name other plans' depths and
    # tiles; only the plan's own fields count.
    plan = re.sub(r" \(chosen by Auto: .*\), grid: ", " (chosen by Auto), grid: ",
                  plan, count=1)
    backend = re.search(r"backend: (\w+)", plan)
    policy = re.search(r"policy: (\w+)", plan)
    words = [m.group(1) for m in (backend, policy) if m]
    # SpatialBlocking prints "tile x=64 y=8", TemporalBlocking "tile 512
    # valid columns (computed 536) x 8 rows".
    tile = (re.search(r"tile x=(\d+)(?: y=(\d+))?(?: z=(\d+))?", plan) or
            re.search(r"tile (\d+) valid columns(?: \(computed \d+\))?"
                      r"(?: x (\d+) rows)?", plan))
    if tile:
        words.append("x".join(g for g in tile.groups() if g))
    depth = re.search(r"depth (\d+)", plan)
    if depth and depth.group(1) != "1":
        words.append("depth " + depth.group(1))
    prefetch = re.search(r"prefetch (\d+|off)( \(cp\.async\.bulk)?", plan)
    if prefetch:
        words.append("prefetch " + prefetch.group(1) +
                     (" (bulk copies)" if prefetch.group(2) else ""))
    if "warp tiles (in registers" in plan:
        words.append("warp tiles")
    if "chosen by Auto" in plan:
        words.append("(Auto)")
    fallback = re.search(r"this space's backend is (\w+), which does not "
                         r"implement this policy", plan)
    if fallback:
        words.append(f"(fallback from {fallback.group(1)})")
    return " ".join(words) if words else plan


def load(path):
    """Reads a stencil_perf JSON file: (context dict, list of Row)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise ResultsError(f"cannot read {path}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise ResultsError(
            f"{path} is not JSON ({e}); write it with "
            "--benchmark_out=FILE --benchmark_out_format=json") from e
    if not isinstance(data, dict) or "benchmarks" not in data:
        raise ResultsError(
            f"{path} has no 'benchmarks' list; is it Google Benchmark JSON?")
    rows = {}
    for b in data["benchmarks"]:
        name = b.get("run_name") or b.get("name", "")
        parts = name.split("/")
        if len(parts) < len(NAME_PARTS):
            continue  # not one of ours
        key = tuple(parts[: len(NAME_PARTS)])
        row = rows.setdefault(key, Row(*key))
        if b.get("error_occurred"):
            message = b.get("error_message", "error")
            if message.startswith(NOT_APPLICABLE):
                row.not_applicable = message[len(NOT_APPLICABLE):]
            else:
                row.error = message
            continue
        if "GCells/s" not in b:
            continue
        row.label = b.get("label", row.label)
        row.model = b.get("model_GCells/s", row.model) or row.model
        if b.get("run_type") == "aggregate":
            row.aggregates[b.get("aggregate_name", "")] = b["GCells/s"]
            if b.get("aggregate_name") == "median":
                row.ceiling = b.get("ceiling_GCells/s", row.ceiling)
        else:
            row.gcells.append(b["GCells/s"])
            row.gbs.append(b.get("GB/s"))
            row.ceiling = b.get("ceiling_GCells/s", row.ceiling)
    if not rows:
        raise ResultsError(
            f"{path} holds no stencil_perf benchmarks "
            "(names <stencil>/<precision>/<policy>/<size>)")
    return data.get("context", {}), list(rows.values())


def device_name(context):
    return context.get("gpu_name") or context.get("cpu_model") or "unknown"


def device_slug(context):
    """A file name for the device: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    slug = re.sub(r"[^a-z0-9]+", "-", device_name(context).lower()).strip("-")
    return slug or "unknown"


def fmt(value, digits=3):
    if value is None:
        return "–"
    if value == 0:
        return "0"
    # Enough significant digits for both CPU (0.02) and GPU (200) rates.
    return f"{value:.{digits}g}" if abs(value) < 10 ** digits else f"{value:.0f}"


def context_table(context):
    c = context
    device = device_name(c)
    if "gpu_name" in c:
        device += (f" ({c.get('gpu_sm_count', '?')} SMs, "
                   f"{c.get('gpu_sm_clock_MHz', '?')} MHz, "
                   f"sm_{c.get('gpu_compute_capability', '?').replace('.', '')}, "
                   f"L2 {int(c.get('gpu_l2_bytes', 0)) >> 20} MiB)")
    elif "threads" in c:
        device += f" ({c['threads']} threads)"
    arch = c.get("kokkos_gpu_arch")
    if arch in (None, "none"):
        arch = c.get("kokkos_cpu_arch", "?")
    lines = [
        ("device", device),
        ("execution space",
         f"Kokkos::{c.get('execution_space', '?')} (Kokkos "
         f"{c.get('kokkos_version', '?')}, backends "
         f"{c.get('kokkos_backends', '?')}, arch {arch})"),
        ("copy bandwidth",
         f"{c.get('copy_GB/s', '?')} GB/s ({c.get('copy_item_bytes', '?')}-byte "
         f"items, median of {c.get('copy_samples', '?').split()[0]}); one "
         f"double per item {c.get('copy_GB/s_double_items', '?')} GB/s, one "
         f"float per item {c.get('copy_GB/s_float_items', '?')} GB/s"),
        ("DRAM-bound ceiling",
         f"{c.get('dram_ceiling_GCells/s_double', '?')} GCells/s (double), "
         f"{c.get('dram_ceiling_GCells/s_float', '?')} GCells/s (float)"),
    ]
    if "gpu_dram_theoretical_GB/s" in c:
        lines.append(("DRAM theoretical", c["gpu_dram_theoretical_GB/s"] + " GB/s"))
    if "fp64_peak_GFLOP/s" in c:
        lines.append(("FP peak", f"{c['fp64_peak_GFLOP/s']} GFLOP/s (FP64), "
                                 f"{c.get('fp32_peak_GFLOP/s', '?')} GFLOP/s (FP32)"))
    if "shared_memory_ceiling_GB/s" in c:
        lines.append(("shared memory", c["shared_memory_ceiling_GB/s"] + " GB/s"))
    if "barrier_us_grid_sync" in c:
        lines.append(("device-wide barrier",
                      f"grid sync {c['barrier_us_grid_sync']} us, counter "
                      f"{c.get('barrier_us_counter', '?')} us "
                      "(one 256-thread block per SM)"))
    if "exchange_us_tagged" in c:
        lines.append(("tagged rim exchange",
                      f"{c['exchange_us_tagged']} us per round (publish, wait "
                      "for 4 neighbours; device tiling's, instead of a "
                      "barrier)"))
    lines += [
        ("mode", f"{c.get('mode', '?')}, {c.get('repetitions', '?')} repetitions"),
        ("date", c.get("date", "?")),
        ("stencil revision", c.get("stencil_revision", "?")),
        ("host", c.get("host_name", "?")),
    ]
    out = ["| | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in lines]
    return "\n".join(out)


def markdown(context, rows, source=None):
    out = [f"# stencil_perf: {device_name(context)}", ""]
    if source:
        out += [f"From `{os.path.basename(source)}`.", ""]
    out += [context_table(context), ""]
    out += [
        "GCells/s = interior cells × steps / s; median and best of the "
        "repetitions. The ceiling is the one named in the last column: "
        "`dram` = copy bandwidth / (2 · sizeof(T)) for one kernel per step, "
        "`dram*d` the same times the plan's temporal depth d, `fp64`/`fp32` "
        "the FP peak / FLOPs per cell, `dramNv` = copy bandwidth / "
        "(N · sizeof(T)) for a solver that moves N values per cell and step.",
        "",
        "`model` is stencil::model's prediction from the run's calibration "
        "and `meas/model` the median over it (– where the model does not "
        "predict: host spaces, builds without the native backend).",
        "",
        "| stencil | precision | policy | size | median GCells/s "
        "| best GCells/s | ceiling GCells/s | fraction | GB/s | model "
        "| meas/model | plan |",
        "|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in rows:
        f = r.label_fields()
        size = r.size
        if "domain" in f:
            size += f" ({f['domain']}, {f.get('steps', '?')} steps)"
        if r.error:
            out.append(f"| {r.stencil} | {r.precision} | {r.policy} | {size} "
                       f"| failed | | | | | | | {r.error} |")
            continue
        if r.not_applicable:
            out.append(f"| {r.stencil} | {r.precision} | {r.policy} | {size} "
                       f"| n/a | | | | | | | {r.not_applicable} |")
            continue
        gbs = [g for g in r.gbs if g is not None]
        ceiling = fmt(r.ceiling)
        if "ceiling" in f:
            ceiling += f" ({f['ceiling']})"
        out.append(
            f"| {r.stencil} | {r.precision} | {r.policy} | {size} "
            f"| {fmt(r.median)} | {fmt(r.best)} | {ceiling} "
            f"| {'–' if r.fraction is None else f'{r.fraction:.2f}'} "
            f"| {fmt(statistics.median(gbs)) if gbs else '–'} "
            f"| {fmt(r.model) if r.model else '–'} "
            f"| {f'{r.median / r.model:.2f}' if r.model and r.median else '–'} "
            f"| {short_plan(r.plan)} |")
    out += auto_against_best(rows)
    return "\n".join(out) + "\n"


AUTO_POLICIES = ("Auto", "AutoTuned")


def auto_against_best(rows):
    """Markdown lines: per stencil, precision and size with an Auto or
    AutoTuned row, the fastest row of the other policies (every policy, and
    every depth or prefetch the run swept) next to what Auto chose."""
    groups = {}
    for r in rows:
        if r.median is not None and not r.error:
            groups.setdefault((r.stencil, r.precision, r.size), []).append(r)
    lines = []
    for (stencil, precision, size), group in groups.items():
        others = [r for r in group if r.policy not in AUTO_POLICIES]
        if not others:
            continue
        best = max(others, key=lambda r: r.median)
        for auto in (r for r in group if r.policy in AUTO_POLICIES):
            lines.append(
                f"| {stencil} | {precision} | {size} | {auto.policy} "
                f"| {short_plan(auto.plan)} "
                f"| {fmt(auto.median)} | {best.policy} | {fmt(best.median)} "
                f"| {auto.median / best.median:.2f} | {len(others)} |")
    if not lines:
        return []
    return [
        "",
        "## Auto against the best configuration measured",
        "",
        "Per stencil, precision and size: what Auto chose (untimed, and "
        "`AutoTuned` = `Auto{.tune = true}`, which times its candidates on a "
        "copy of the grid first) and its median, and the fastest of the "
        "other rows of the run (the policies at their plans' defaults and "
        "every `--depth`/`--prefetch` swept).",
        "",
        "| stencil | precision | size | row | its plan | GCells/s "
        "| fastest other row | its GCells/s | Auto / fastest "
        "| rows compared |",
        "|---|---|---|---|---|--:|---|--:|--:|--:|",
    ] + lines


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Markdown table (and chart) from stencil_perf JSON.")
    p.add_argument("json", help="stencil_perf --benchmark_out JSON file")
    p.add_argument("--md", help="write the table here (default: stdout)")
    p.add_argument("--png", help="also write the chart here (matplotlib)")
    p.add_argument("--out-dir",
                   help="write <device>.md, <device>.png and <device>.json "
                        "into this directory")
    args = p.parse_args(argv)
    try:
        context, rows = load(args.json)
    except ResultsError as e:
        print(f"results_table.py: error: {e}", file=sys.stderr)
        return 1
    md_path, png_path = args.md, args.png
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        stem = os.path.join(args.out_dir, device_slug(context))
        md_path = md_path or stem + ".md"
        png_path = png_path or stem + ".png"
        if os.path.abspath(args.json) != os.path.abspath(stem + ".json"):
            shutil.copyfile(args.json, stem + ".json")
    text = markdown(context, rows, args.json)
    if md_path:
        with open(md_path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {md_path}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if png_path:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import chart  # pylint: disable=import-outside-toplevel
        try:
            chart.render(context, rows, png_path)
        except chart.ChartError as e:
            print(f"results_table.py: error: {e}", file=sys.stderr)
            return 1
        print(f"wrote {png_path}", file=sys.stderr)
    failed = [r for r in rows if r.error]
    if failed:
        print(f"results_table.py: note: {len(failed)} benchmark(s) failed; "
              "they are listed in the table", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
