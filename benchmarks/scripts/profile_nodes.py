#!/usr/bin/env python3
"""Each node's host time from an ONNX Runtime profile (a JSON list of trace events, as
SessionOptions.enableProfiling writes it; NodeProfile makes one), at steady state: the median and the
90th percentile of each node's "kernel_time" over the last RUNS runs, the custom operators' nodes
(op type starting with PREFIX) apart, and a summary per custom operator type.

On the CUDA provider a node's "kernel_time" is the host side of its compute (for a custom operator:
ORT's dispatch, the upcall into Java, reading inputs, allocating outputs and the kernel launch); the
GPU runs the launched work asynchronously.

Usage:  python3 benchmarks/scripts/profile_nodes.py PROFILE.json --runs 100 [--expect-runs 400] [--prefix PVN3D_]
                                                             [--json OUT.json]
Only the standard library.
"""
import argparse
import json
import statistics
from collections import defaultdict


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("--runs", type=int, required=True, help="steady-state runs at the end of the profile")
    ap.add_argument("--prefix", default="PVN3D_", help="op type prefix of the custom operators")
    ap.add_argument("--json", help="also write the table as JSON here")
    ap.add_argument("--expect-runs", type=int, help="runs made in all (warm-up included): warn if fewer were recorded")
    a = ap.parse_args()
    with open(a.profile) as f:
        events = json.load(f)
    times = defaultdict(list)
    info = {}
    runs = []
    for e in events:
        if e.get("cat") == "Session" and e.get("name") == "model_run":
            runs.append(e["dur"])
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        node = e["name"][: -len("_kernel_time")]
        times[node].append(e["dur"])
        args = e.get("args", {})
        info[node] = (args.get("op_name", "?"), args.get("provider", "?"))
    rows = []
    for node, d in times.items():
        last = d[-a.runs:]
        op, provider = info[node]
        rows.append({"node": node, "op": op, "provider": provider, "samples": len(last),
                     "median_us": statistics.median(last), "p90_us": percentile(last, 0.9)})
    rows.sort(key=lambda r: (not r["op"].startswith(a.prefix), r["op"], r["node"]))
    if a.expect_runs and len(runs) < a.expect_runs:
        print("warning: the profile holds %d of the %d runs (ORT's profiler stops recording at a million "
              "events): the medians are of runs %d-%d, not of the last ones" % (
                  len(runs), a.expect_runs, max(1, len(runs) - a.runs + 1), len(runs)))
    custom = [r for r in rows if r["op"].startswith(a.prefix)]
    builtin = [r for r in rows if not r["op"].startswith(a.prefix)]
    last_runs = runs[-a.runs:]
    if last_runs:
        print("model_run: median %.3f ms over the last %d runs" % (statistics.median(last_runs) / 1e3, len(last_runs)))
    print("%-48s %-28s %-24s %9s %9s" % ("custom node", "op", "provider", "median_us", "p90_us"))
    for r in custom:
        print("%-48s %-28s %-24s %9.1f %9.1f" % (r["node"][:48], r["op"], r["provider"], r["median_us"], r["p90_us"]))
    by_op = defaultdict(list)
    for r in custom:
        by_op[(r["op"], r["provider"])].append(r["median_us"])
    summary = []
    print("\nper custom operator (the nodes' medians):")
    print("%-28s %-24s %5s %9s %9s %9s" % ("op", "provider", "nodes", "min_us", "median_us", "max_us"))
    for (op, provider), m in sorted(by_op.items()):
        summary.append({"op": op, "provider": provider, "nodes": len(m), "min_us": min(m),
                        "median_us": statistics.median(m), "max_us": max(m)})
        print("%-28s %-24s %5d %9.1f %9.1f %9.1f" % (op, provider, len(m), min(m), statistics.median(m), max(m)))
    if custom:
        all_m = [r["median_us"] for r in custom]
        print("\nall %d custom nodes: median %.1f us, max %.1f us; %d built-in nodes: median %.1f us" % (
            len(all_m), statistics.median(all_m), max(all_m), len(builtin),
            statistics.median([r["median_us"] for r in builtin]) if builtin else float("nan")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "model_run_median_us": statistics.median(last_runs) if last_runs else None,
                       "custom": custom, "custom_by_op": summary, "builtin": builtin}, f, indent=1)


if __name__ == "__main__":
    main()
