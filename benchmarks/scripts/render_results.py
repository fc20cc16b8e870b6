#!/usr/bin/env python3
"""Render a benchmark results folder (benchmarks/gpu/run-benchmarks.sh) to results.md and chart.svg.

    python3 benchmarks/scripts/render_results.py RESULTS_DIR

Reads what is there of: machine.txt, jmh-*.json (KernelBenchmark, OrtNodeBenchmark and
TinyModelBenchmark results, told apart by class), floor.json (add16_floor), pytorch.json
(pytorch_ops_bench.py). The pose operators (VoteAggregate = mean shift, PoseSolve = mean shift + Kabsch,
fused) are set against PyTorch's MeanShift_K<K>_N<N> (PVN3D's dense N x N mean shift, one batch item per
call), multiplied by B for B > 1. Medians are JMH's p0.50 of the sample-time distribution (wall clock) or, for
the CUDA kernels, of the cuda-event secondary result (GPU time between two CUDA events); "mean ± error"
is JMH's score and its 99.9% error. Plain Python 3, no third-party packages; the SVG is written by hand.
"""
import gzip
import json
import math
import os
import sys

UNIT_MS = {"ns/op": 1e-6, "us/op": 1e-3, "ms/op": 1.0, "s/op": 1e3}
ORDER = ["FPS", "BallQuery", "GroupPoints", "ThreeNN", "ThreeInterpolate", "GatherPoints", "MeanShift",
         "VoteAggregate", "PoseSolve"]
POSE_OPS = ("VoteAggregate", "PoseSolve")
# perf-targets.md: the project's CUDA target per size (ms)
TARGETS = {
    "FPS_B1_N12288_np2048": 2.0, "FPS_B1_N16384_np4096": 6.5, "FPS_B8_N16384_np4096": 6.5,
    "BallQuery_B1_N12288_M2048_S16_r0.0175": 0.10, "BallQuery_B1_N12288_M2048_S32_r0.025": 0.12,
    "BallQuery_B8_N16384_M4096_S32_r0.025": 0.8,
    "GroupPoints_B8_C256_N1024_M512_S32": 0.08, "GroupPoints_B1_C99_N2048_M1024_S32": 0.03,
    "ThreeNN_B1_n12288_m2048": 0.05, "ThreeNN_B8_n16384_m4096": 0.5,
    "ThreeInterpolate_B1_C128_m2048_n12288": 0.015, "ThreeInterpolate_B8_C256_m4096_n16384": 0.06,
    "GatherPoints_B8_C256_N4096_M1024": 0.010, "MeanShift_K9_N3000": 1.0, "VoteAggregate_B1_K9_N3000": 1.0,
}


def load(path):
    """A JSON file, or its gzip (results are committed as .json.gz: JMH's raw samples are large)."""
    try:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def metric_ms(m):
    """(median ms, mean ms, error ms, count) of a JMH metric dict."""
    scale = UNIT_MS.get(m.get("scoreUnit"), float("nan"))
    p50 = m.get("scorePercentiles", {}).get("50.0")
    err = m.get("scoreError")
    err = err * scale if isinstance(err, (int, float)) and not math.isnan(err) else float("nan")
    return (p50 * scale if p50 is not None else float("nan"), m["score"] * scale, err,
            sum(len(r) for r in m.get("rawDataHistogram", [])) or None)


def jmh_rows(doc):
    rows = []
    for b in doc or []:
        name = b["benchmark"].rsplit(".", 2)
        cls, method = name[-2], name[-1]
        params = b.get("params", {})
        sec = b.get("secondaryMetrics", {})
        row = {"class": cls, "method": method, "params": params, "primary": metric_ms(b["primaryMetric"]),
               "unit": b["primaryMetric"]["scoreUnit"], "forks": b.get("forks"),
               "event": metric_ms(sec["cuda-event"]) if "cuda-event" in sec else None,
               "bytes": sec.get("bytes/call", {}).get("score"), "pairs": sec.get("pairs/call", {}).get("score")}
        rows.append(row)
    return rows


def fmt_ms(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v >= 100:
        return "%.0f ms" % v
    if v >= 1:
        return "%.2f ms" % v
    if v >= 0.01:
        return "%.3f ms" % v
    return "%.1f µs" % (v * 1e3)


def fmt_x(a, b):
    if a is None or b is None or not (a == a and b == b) or b <= 0:
        return "–"
    r = a / b
    return ("%.0f×" % r) if r >= 100 else ("%.1f×" % r) if r >= 10 else ("%.2f×" % r)


def case_sizes(case):
    """(operator, {key: value string}) of a case name like VoteAggregate_B4_K9_N3000."""
    parts = case.split("_")
    keys = {}
    for p in parts[1:]:
        j = 0
        while j < len(p) and p[j].isalpha():
            j += 1
        keys[p[:j]] = p[j:]
    return parts[0], keys


def torch_pose_ref(case, torch_ms):
    """For a pose case: (PyTorch case name, B, PyTorch median ms × B) of the matching dense mean shift
    MeanShift_K<K>_N<N>, or None."""
    op, k = case_sizes(case)
    if op not in POSE_OPS or "K" not in k or "N" not in k:
        return None
    ref = "MeanShift_K%s_N%s" % (k["K"], k["N"])
    if ref not in torch_ms:
        return None
    b = int(k.get("B", "1"))
    return ref, b, torch_ms[ref] * b


def case_key(case):
    op = case.split("_")[0]
    return (ORDER.index(op) if op in ORDER else 99, case)


def rate(row_bytes, row_pairs, ms):
    if not ms or ms != ms or ms <= 0:
        return "–"
    if row_bytes:
        return "%.0f GB/s" % (row_bytes / (ms * 1e-3) / 1e9)
    if row_pairs:
        return "%.1f Gpairs/s" % (row_pairs / (ms * 1e-3) / 1e9)
    return "–"


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    d = sys.argv[1]
    machine = ""
    if os.path.exists(os.path.join(d, "machine.txt")):
        machine = open(os.path.join(d, "machine.txt")).read().strip()
    rows = []
    for name in sorted(os.listdir(d)):
        if name.startswith("jmh-") and name.endswith((".json", ".json.gz")):
            rows += jmh_rows(load(os.path.join(d, name)))
    kern = [r for r in rows if r["class"] == "KernelBenchmark"]
    node = [r for r in rows if r["class"] == "OrtNodeBenchmark"]
    tiny = [r for r in rows if r["class"] == "TinyModelBenchmark"]
    iob = {r["method"]: r["primary"][0] for r in rows if r["class"] == "IoBindingBenchmark"}
    floor = load(os.path.join(d, "floor.json"))
    torch_doc = load(os.path.join(d, "pytorch.json"))
    torch_ms = {r["case"]: r["median_ms"] for r in (torch_doc or {}).get("results", [])}

    # per case: the medians
    cases = {}
    for r in kern:
        c = cases.setdefault(r["params"]["kernel"], {})
        c["bytes"], c["pairs"] = r["bytes"], r["pairs"]
        dev = r["params"].get("device")
        if dev == "cpu":
            c["cpu"] = r["primary"][0]
        elif dev == "cuda":
            c["cuda_wall"] = r["primary"][0]
            c["cuda"] = r["event"][0] if r["event"] else None
        elif dev == "cudaCopy":
            c["cuda_copy"] = r["event"][0] if r["event"] else None
    for r in node:
        c = cases.setdefault(r["params"]["kernel"], {})
        c["ort_" + r["params"].get("provider", "?")] = r["primary"][0]
    for case, ms in torch_ms.items():
        cases.setdefault(case, {})["torch"] = ms
    # the pose operators: PyTorch's dense mean shift at the same K and N, once per batch item
    for case in list(cases):
        ref = torch_pose_ref(case, torch_ms)
        if ref:
            cases[case]["torch"] = ref[2]
            cases[case]["torch_ref"] = ref

    out = []
    out.append("# Benchmarks: kernels, ORT nodes, binding cost\n")
    if machine:
        out.append("```\n" + machine + "\n```\n")
    out.append("Medians per call. **CPU**: the CPU kernel through the C ABI from Java (FFM), wall clock. "
               "**CUDA**: the CUDA kernel through the C ABI, GPU time between two CUDA events on a stream of "
               "its own (device-resident data); **CUDA wall** is what the Java caller waits for the same call "
               "(launch + event wait); **CUDA+copies**: events around copying the inputs in from pageable host "
               "memory, the kernel and the outputs back. **ORT CPU / ORT CUDA**: the one-node model through "
               "this project's API on ORT's CPU / CUDA provider (host tensors in and out, wall clock; on CUDA "
               "ORT copies in and out every run). **ORT CUDA dev**: the same node device-resident (inputs and "
               "preallocated outputs in GPU memory, bound once with IO binding, wall clock until ORT has "
               "synchronised its stream): **ORT dev − CUDA wall** is ORT's and the Java upcall bridge's cost "
               "per node, no copies on either side. **PyTorch**: the "
               "operator in plain PyTorch on the GPU, CUDA events; for VoteAggregate (mean shift) and PoseSolve (mean "
               "shift + Kabsch, fused) it is PVN3D's dense mean shift MeanShift_K9_N3000 (one batch item per call) "
               "times B, marked ¹. Rate: bytes/s (memory-bound kernels; "
               "H200 copies about 4300 GB/s) or point-pair distance evaluations/s, at the CUDA median.\n")
    if cases:
        out.append("| kernel | CPU | CUDA | CUDA wall | CUDA+copies | ORT CPU | ORT CUDA | ORT CUDA dev | PyTorch | "
                   "CUDA rate | CPU/CUDA | PyTorch/CUDA | ORT CPU/CPU | ORT dev − CUDA wall | target |")
        out.append("|" + " --- |" * 15)
        for case in sorted(cases, key=case_key):
            c = cases[case]
            g = c.get
            over = "–"
            if g("ort_cudaDevice") is not None and g("cuda_wall") is not None:
                over = fmt_ms(g("ort_cudaDevice") - g("cuda_wall"))
            tgt = TARGETS.get(case)
            tgt_s = "–" if tgt is None else fmt_ms(tgt) + (
                "" if g("cuda") is None else (" met" if g("cuda") <= tgt else " miss"))
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                case.replace("_", " "), fmt_ms(g("cpu")), fmt_ms(g("cuda")), fmt_ms(g("cuda_wall")),
                fmt_ms(g("cuda_copy")), fmt_ms(g("ort_cpu")), fmt_ms(g("ort_cuda")), fmt_ms(g("ort_cudaDevice")),
                fmt_ms(g("torch")) + (" ¹" if g("torch_ref") and g("torch") is not None else ""),
                rate(g("bytes"), g("pairs"), g("cuda")), fmt_x(g("cpu"), g("cuda")), fmt_x(g("torch"), g("cuda")),
                fmt_x(g("ort_cpu"), g("cpu")), over, tgt_s))
        out.append("")

    pose = [c for c in sorted(cases, key=case_key) if case_sizes(c)[0] in POSE_OPS]
    if pose:
        out.append("## Pose operators against PVN3D's PyTorch mean shift\n")
        out.append("VoteAggregate is the mean shift alone (kps, inliers); PoseSolve is the fused mean shift + "
                   "Kabsch fit (R, t, kps, inliers; the keypoints stay on the device). Both with PVN3D's "
                   "bandwidth 0.08, max_iter 300, center_filter 1, on votes like PVN3D's (keypoints in the 0.5 m "
                   "cube, 1 cm noise, 30% outlier points, every point in the mask). **PyTorch** is the dense N×N "
                   "mean shift PVN3D's evaluation uses (centre, then the other keypoints over the centre's "
                   "cluster: MeanShift_K9_N3000 of pytorch_ops_bench.py, one object per call), **× B** for B "
                   "objects. Ratios above 1 mean ours is faster.\n")
        out.append("| case | CPU | CUDA | CUDA wall | CUDA+copies | ORT CPU | ORT CUDA | ORT CUDA dev | PyTorch × B | "
                   "PyTorch/CUDA | PyTorch/CUDA wall | PyTorch/ORT CUDA dev | PyTorch/CPU | CPU/CUDA | target |")
        out.append("|" + " --- |" * 15)
        for case in pose:
            g = cases[case].get
            ref = g("torch_ref")
            tgt = TARGETS.get(case)
            tgt_s = "–" if tgt is None else fmt_ms(tgt) + (
                "" if g("cuda") is None else (" met" if g("cuda") <= tgt else " miss"))
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                case.replace("_", " "), fmt_ms(g("cpu")), fmt_ms(g("cuda")), fmt_ms(g("cuda_wall")),
                fmt_ms(g("cuda_copy")), fmt_ms(g("ort_cpu")), fmt_ms(g("ort_cuda")), fmt_ms(g("ort_cudaDevice")),
                ("%s (%s × %d)" % (fmt_ms(ref[2]), ref[0].replace("_", " "), ref[1])) if ref else "–",
                fmt_x(g("torch"), g("cuda")), fmt_x(g("torch"), g("cuda_wall")), fmt_x(g("torch"), g("ort_cudaDevice")),
                fmt_x(g("torch"), g("cpu")), fmt_x(g("cpu"), g("cuda")), tgt_s))
        out.append("")

    if tiny:
        t = {r["method"]: r["primary"] for r in tiny}
        fl = (floor or {}).get("median_ns", {})
        out.append("## Binding cost: add16 (c = a + b, 16 floats), CPU provider, one intra-op thread\n")
        ver = (floor or {}).get("ort_version")
        out.append("This project's API (FFM) and ORT's official Java API (JNI) in the same JMH run, against the same "
                   "libonnxruntime.so%s; the floor is a plain C loop over the same C API (benchmarks/native/"
                   "add16_floor.c). Medians per run.\n" % (" (ORT %s)" % ver if ver else ""))
        out.append("| variant | ours (FFM) | ORT Java (JNI) | C floor | ours / JNI | ours / C | JNI / C |")
        out.append("|" + " --- |" * 7)
        for label, ours, jni, fkey in [("fresh inputs from arrays, output read back", "oursFresh", "jniFresh", "fresh"),
                                       ("inputs reused, ORT-allocated output", "oursReuseInputs", "jniReuseInputs",
                                        "reuse_inputs"),
                                       ("inputs and output preallocated", "oursPreallocated", None, "preallocated")]:
            o = t.get(ours, (None,))[0]
            j = t.get(jni, (None,))[0] if jni else None
            f = fl.get(fkey)
            f = f * 1e-6 if f is not None else None
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                label, fmt_ms(o), fmt_ms(j) if jni else "– (no such API in 1.16)", fmt_ms(f), fmt_x(o, j),
                fmt_x(o, f), fmt_x(j, f)))
        out.append("")
    if iob:
        out.append("IO binding against plain run (add16, inputs and output preallocated, one session): plain run "
                   "%s, through OrtIoBinding %s (%s of plain run).\n" % (
                       fmt_ms(iob.get("plainRun")), fmt_ms(iob.get("ioBindingRun")),
                       fmt_x(iob.get("ioBindingRun"), iob.get("plainRun"))))

    allrows = rows
    if allrows:
        out.append("## Every JMH result\n")
        out.append("| benchmark | parameters | median | mean ± error (99.9%) | CUDA-event median | CUDA-event mean ± error |")
        out.append("|" + " --- |" * 6)
        for r in allrows:
            p = ", ".join("%s=%s" % kv for kv in sorted(r["params"].items()))
            med, mean, err, _ = r["primary"]
            ev = r["event"]
            out.append("| %s.%s | %s | %s | %s ± %s | %s | %s |" % (
                r["class"], r["method"], p, fmt_ms(med), fmt_ms(mean), fmt_ms(err),
                fmt_ms(ev[0]) if ev else "–", ("%s ± %s" % (fmt_ms(ev[1]), fmt_ms(ev[2]))) if ev else "–"))
        out.append("")
    out.append("![chart](chart.svg)\n")
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write("\n".join(out))
    with open(os.path.join(d, "chart.svg"), "w") as f:
        f.write(svg(cases, tiny, floor))
    return 0


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg(cases, tiny, floor):
    """Grouped horizontal bars on a log time axis: per kernel CPU, CUDA, ORT CUDA node, PyTorch (for the
    pose operators PyTorch's dense mean shift × B); then the tiny model's per-run cost (ours, JNI, C
    floor), with a legend row of its own."""
    series = [("cpu", "CPU kernel", "#8c8c8c"), ("cuda", "CUDA kernel (events)", "#2a7ab9"),
              ("ort_cudaDevice", "ORT CUDA node (device-resident)", "#76b041"), ("torch", "PyTorch (pose: mean shift × B)", "#e07b39")]
    add16 = [("ours (FFM)", "#7b4fa8"), ("ORT Java (JNI)", "#b94a2a"), ("C floor", "#555555")]
    groups = []
    for case in sorted(cases, key=case_key):
        bars = [(lab, col, cases[case].get(k)) for k, lab, col in series]
        bars = [b for b in bars if b[2] is not None and b[2] == b[2] and b[2] > 0]
        if bars:
            groups.append((case.replace("_", " "), bars))
    if tiny:
        t = {r["method"]: r["primary"][0] for r in tiny}
        fl = (floor or {}).get("median_ns", {})
        vals16 = [t.get("oursReuseInputs"), t.get("jniReuseInputs"),
                  fl.get("reuse_inputs") * 1e-6 if fl.get("reuse_inputs") else None]
        bars = [(lab, col, v) for (lab, col), v in zip(add16, vals16)]
        bars = [b for b in bars if b[2]]
        if bars:
            groups.append(("add16 run, inputs reused", bars))
    vals = [b[2] for _, bars in groups for b in bars]
    if not vals:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="40"><text x="10" y="25">no results</text></svg>\n'
    lo = 10 ** math.floor(math.log10(min(vals)))
    hi = 10 ** math.ceil(math.log10(max(vals)))
    left, width, bar, gap = 330, 560, 11, 10
    has16 = bool(groups) and groups[-1][0].startswith("add16")
    top = 58 if has16 else 40  # a second legend row for the add16 bars
    height = top + 20 + sum(len(b) * bar + gap for _, b in groups) + 40
    x = lambda v: left + width * (math.log10(v) - math.log10(lo)) / max(1e-9, math.log10(hi) - math.log10(lo))
    legend_w = lambda labels: sum(max(140, 30 + 7 * len(lab)) for lab in labels)  # ~7 px per character
    svg_w = max(left + width + 120, left + legend_w([lab for _, lab, _ in series]) + 10)
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
         % (svg_w, height),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="10" y="18" font-size="14" font-weight="bold">Median time per call (log scale)</text>']
    decade = lo
    while decade <= hi * 1.0001:
        xx = x(decade)
        s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (xx, top - 10, xx, height - 30))
        s.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>' % (xx, height - 16, esc(fmt_ms(decade))))
        decade *= 10
    y = top
    for label, bars in groups:
        s.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 8, y + len(bars) * bar / 2 + 4, esc(label)))
        for lab, col, v in bars:
            s.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>'
                     % (left, y, max(1.0, x(v) - left), bar - 2, col, esc(lab), esc(fmt_ms(v))))
            s.append('<text x="%.1f" y="%d" fill="#333" font-size="9">%s</text>' % (x(v) + 3, y + bar - 3, esc(fmt_ms(v))))
            y += bar
        y += gap
    lx = left
    has_pose = any(case_sizes(c)[0] in POSE_OPS for c in cases)
    for key, lab, col in series:
        lab = lab if has_pose or key != "torch" else "PyTorch"
        s.append('<rect x="%d" y="24" width="10" height="10" fill="%s"/><text x="%d" y="33">%s</text>' % (lx, col, lx + 14, esc(lab)))
        lx += legend_w([lab])
    if has16:
        s.append('<text x="%d" y="51" text-anchor="end" fill="#333">add16 run:</text>' % (left - 8))
        lx = left
        for lab, col in add16:
            s.append('<rect x="%d" y="42" width="10" height="10" fill="%s"/><text x="%d" y="51">%s</text>' % (lx, col, lx + 14, esc(lab)))
            lx += 140
    s.append("</svg>")
    return "\n".join(s) + "\n"


if __name__ == "__main__":
    sys.exit(main())
