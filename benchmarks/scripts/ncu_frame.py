#!/usr/bin/env python3
"""One run's kernels and their GPU times from an Nsight Compute CSV (ncu --metrics gpu__time_duration.sum
--csv --print-units base), for a program that ran the same ORT session several times: the last run is
found as the repeating tail of the kernel sequence (the first run differs: cuDNN's algorithm search), and
its kernels are summed per name and per group (ours, cuDNN/cuBLAS convolutions and GEMMs, ORT's other
kernels).

Usage:  python3 benchmarks/scripts/ncu_frame.py NCU.csv [--runs 3] [--csv OUT.csv] [--top 25]
Only the standard library. The CSV may hold the program's own output before the table.
"""
import argparse
import csv
import sys
from collections import defaultdict

OURS = ("fps_", "gather_direct", "gather_staged", "three_nn", "three_interpolate", "ball_query", "index_error", "vote_aggregate",
        "finish_kernel", "kabsch")
DENSE = ("cudnn", "cutlass", "gemm", "sm90_", "sm80_", "xmma", "implicit_convolve", "conv2d", "winograd", "fft", "ampere_",
         "hopper_", "cublas", "nchwToNhwc", "nhwcToNchw")


def rows(path):
    with open(path, newline="", errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID","Process ID"')), None)
    if start is None:
        sys.exit("ncu_frame: no Nsight Compute CSV header in " + path)
    table = csv.DictReader(lines[start:])
    kernels = {}
    for r in table:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = r.get("Metric Unit", "nsecond")
        scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}.get(unit, 1e-3)
        value = float(r["Metric Value"].replace(",", ""))
        kernels[int(r["ID"])] = (r["Kernel Name"], value * scale)
    return [kernels[i] for i in sorted(kernels)]


def last_run(kernels, runs):
    """The tail that repeats: the longest p with the last p names equal to the p names before them (the
    longest, because a run may itself end in a repeated block)."""
    names = [k for k, _ in kernels]
    n = len(names)
    for p in range(n // 2, 0, -1):
        if names[n - p:] == names[n - 2 * p:n - p]:
            return kernels[n - p:], True
    return kernels[n - n // max(runs, 1):], False


def group(name):
    low = name.lower()
    if any(s in low for s in OURS):
        return "ours (PVN3D operators, pose head)"
    if any(s.lower() in low for s in DENSE):
        return "convolutions / GEMM (cuDNN, cuBLAS)"
    return "ORT's other kernels"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ncu_csv")
    ap.add_argument("--runs", type=int, default=3, help="runs of the session in the profiled program")
    ap.add_argument("--csv", help="write the last run's kernels (order, name, group, us) here")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    kernels = rows(a.ncu_csv)
    run, exact = last_run(kernels, a.runs)
    total = sum(t for _, t in run)
    print(f"{len(kernels)} kernels profiled; the last run: {len(run)} kernels, {total / 1e3:.3f} ms of GPU time summed"
          + ("" if exact else " (no repeating tail found: the last 1/runs of the kernels)"))
    print("(each kernel replayed alone by Nsight Compute: no overlap, no launch gaps; the sum is the GPU work, not the latency)")
    by_group = defaultdict(float)
    for name, t in run:
        by_group[group(name)] += t
    for g, t in sorted(by_group.items(), key=lambda x: -x[1]):
        print(f"  {g:40s} {t / 1e3:8.3f} ms  {100 * t / total:5.1f}%")
    by_name = defaultdict(lambda: [0, 0.0])
    for name, t in run:
        by_name[name][0] += 1
        by_name[name][1] += t
    print(f"the {a.top} kernels with the most time:")
    for name, (c, t) in sorted(by_name.items(), key=lambda x: -x[1][1])[:a.top]:
        short = name if len(name) <= 90 else name[:87] + "..."
        print(f"  {t:9.1f} us {c:4d}x  {short}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["order", "kernel", "group", "us"])
            for i, (name, t) in enumerate(run):
                w.writerow([i, name, group(name), f"{t:.3f}"])


if __name__ == "__main__":
    main()
