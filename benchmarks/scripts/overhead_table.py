#!/usr/bin/env python3
"""The tables of a run-overhead.sh results folder: per benchmark the median (JMH sample time, p50) of
each round before and after, the median over rounds, the ratios the binding-overhead targets name
(preallocated run / C floor, ORT-allocated outputs / ORT's JNI API, bound run / C RunWithBinding),
bytes per call (-prof gc), and the custom-operator dispatch cost (JavaNop - Identity and
GatherPoints - Gather, same JMH run). Ratios are taken within one round (one JMH run and the C floor
right after it) and their median over rounds is shown.

Usage:  python3 benchmarks/scripts/overhead_table.py RESULTS_DIR      (reads jmh-*.json and floor-*.json; .json.gz too)
Only the standard library.
"""
import glob
import gzip
import json
import os
import re
import statistics
import sys


def read_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def load(path):
    out = {}
    for b in read_json(path):
        name = ".".join(b["benchmark"].split(".")[-2:])
        params = b.get("params") or {}
        if params:
            name += "[" + ",".join(params[k] for k in sorted(params)) + "]"
        pm = b["primaryMetric"]
        med = pm.get("scorePercentiles", {}).get("50.0", pm["score"])
        gc = b.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
        out[name] = {"p50": med, "score": pm["score"], "unit": pm["scoreUnit"], "mode": b["mode"], "bop": gc}
    return out


def rounds(d, pattern):
    files = sorted(glob.glob(os.path.join(d, pattern + ".json")) + glob.glob(os.path.join(d, pattern + ".json.gz")))
    def key(f):
        m = re.search(r"-(\d+)\.json", f)
        return int(m.group(1)) if m else 0
    return [load(f) for f in sorted(files, key=key)]


def fmt(v, nd=0):
    return "-" if v is None else ("%." + str(nd) + "f") % v


def main():
    d = sys.argv[1]
    floors = [read_json(f)["median_ns"] for f in sorted(glob.glob(os.path.join(d, "floor-*.json")),
                                                         key=lambda f: int(re.search(r"-(\d+)\.json", f).group(1)))]
    base = rounds(d, "jmh-tiny-base-*")
    after = rounds(d, "jmh-tiny-after-*")
    if after:
        print("## Tiny model (add16), p50 ns per round; B/op from -prof gc (sample-time mode)\n")
        print("| benchmark | before (rounds) | after (rounds) | before median | after median | B/op before | B/op after |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name in after[0]:
            b = [r[name]["p50"] for r in base if name in r]
            a = [r[name]["p50"] for r in after if name in r]
            bb = [r[name]["bop"] for r in base if name in r and r[name]["bop"] is not None]
            ab = [r[name]["bop"] for r in after if name in r and r[name]["bop"] is not None]
            print("| %s | %s | %s | %s | %s | %s | %s |" % (
                name, " / ".join(fmt(x) for x in b) or "-", " / ".join(fmt(x) for x in a),
                fmt(statistics.median(b)) if b else "-", fmt(statistics.median(a)),
                fmt(statistics.median(bb), 1) if bb else "-", fmt(statistics.median(ab), 1) if ab else "-"))
        if floors:
            print("\nC floor (add16_floor.c), median ns per round: " + "; ".join(
                ", ".join("%s %d" % kv for kv in f.items()) for f in floors))
        print("\n## Ratios (within each round; median over rounds)\n")
        print("| ratio | before | after | target |")
        print("| --- | --- | --- | --- |")
        def ratio(runs, num, den_jmh=None, den_floor=None):
            vals = []
            for i, r in enumerate(runs):
                if num not in r:
                    continue
                if den_jmh:
                    if den_jmh in r:
                        vals.append(r[num]["p50"] / r[den_jmh]["p50"])
                elif den_floor and i < len(floors) and den_floor in floors[i]:
                    vals.append(r[num]["p50"] / floors[i][den_floor])
            return statistics.median(vals) if vals else None
        rows = [("preallocated run / C floor (Run)", "TinyModelBenchmark.oursPreallocated", None, "preallocated", "<= 1.2"),
                ("ORT-allocated outputs / ORT's JNI API", "TinyModelBenchmark.oursReuseInputs",
                 "TinyModelBenchmark.jniReuseInputs", None, "<= 0.8"),
                ("fresh tensors / ORT's JNI API", "TinyModelBenchmark.oursFresh", "TinyModelBenchmark.jniFresh", None, "-"),
                ("bound run / C floor (RunWithBinding)", "IoBindingBenchmark.ioBindingRun", None, "bound", "-"),
                ("plain run into preallocated / C floor (Run)", "IoBindingBenchmark.plainRun", None, "preallocated", "-")]
        for label, num, den, fl, target in rows:
            print("| %s | %s | %s | %s |" % (label, fmt(ratio(base, num, den, fl), 2), fmt(ratio(after, num, den, fl), 2), target))
    for provider in ("cpu", "cuda"):
        db = rounds(d, "jmh-dispatch-%s-base" % provider)
        da = rounds(d, "jmh-dispatch-%s-after" % provider)
        if not da:
            continue
        print("\n## Custom-operator dispatch, %s provider (p50 ns; B/op)\n" % provider)
        print("| node | before | after | B/op before | B/op after |")
        print("| --- | --- | --- | --- | --- |")
        for name in da[0]:
            b = db[0].get(name) if db else None
            a = da[0][name]
            print("| %s | %s | %s | %s | %s |" % (name, fmt(b["p50"]) if b else "-", fmt(a["p50"]),
                                                 fmt(b["bop"], 1) if b else "-", fmt(a["bop"], 1)))
        for label, ours, theirs in (("JavaNop - Identity", "javaNop", "identity"), ("GatherPoints - Gather", "gatherPoints", "gather")):
            def diff(r):
                ko = "DispatchBenchmark.run[%s,%s]" % (ours, "cudaDevice" if provider == "cuda" else "cpu")
                kt = "DispatchBenchmark.run[%s,%s]" % (theirs, "cudaDevice" if provider == "cuda" else "cpu")
                return r[ko]["p50"] - r[kt]["p50"] if ko in r and kt in r else None
            print("\n%s per node: before %s ns, after %s ns (target <= 3000 ns)" % (
                label, fmt(diff(db[0])) if db else "-", fmt(diff(da[0]))), end="")
        print()
    gcs = rounds(d, "jmh-gc")
    if gcs:
        print("\n## Bytes per call, average-time mode (-prof gc)\n")
        print("| benchmark | ns/op (avgt) | B/op |")
        print("| --- | --- | --- |")
        for name, v in gcs[0].items():
            print("| %s | %s | %s |" % (name, fmt(v["score"]), fmt(v["bop"], 3)))


if __name__ == "__main__":
    main()
