#!/usr/bin/env python3
"""Chart of frame-to-pose.json (pvn3d-ort frame-to-pose --json): p50 latency per precision for batch 1 and
batch 8, CUDA graphs off and on, one graph or the two branches side by side ("branches"), with the p99 as a whisker, and frames/s on a second panel; the issue's
targets drawn as lines. Writes an SVG beside the JSON (or to --out).

  /usr/bin/python3 benchmarks/scripts/frame_to_pose_chart.py benchmarks/results/DATE-frame-to-pose/frame-to-pose.json
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TARGET_P50 = {"strict": 25.0, "tf32": 12.0, "fp16": 8.0}
TARGET_FPS_B8 = 250.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("json", nargs="+", help="frame-to-pose JSON lists (merged)")
    ap.add_argument("--out", help="SVG file (default: frame-to-pose.svg beside the first JSON)")
    ap.add_argument("--title", default="PVN3D full size (480x640, 12288 points), frame to pose, H200")
    a = ap.parse_args()
    rows = []
    for f in a.json:
        with open(f) as fh:
            rows += json.load(fh)
    modes = [m for m in ("strict", "tf32", "fp16") if any(r["mode"] == m for r in rows)]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    combos = sorted({(r["batch"], r["cuda_graph"], r.get("branches", False)) for r in rows if r.get("inflight", 1) == 1})
    width = 0.8 / max(1, len(combos))
    for j, (b, g, br) in enumerate(combos):
        xs, p50, p99 = [], [], []
        for i, m in enumerate(modes):
            r = [r for r in rows if r["mode"] == m and r["batch"] == b and r["cuda_graph"] == g
                 and r.get("branches", False) == br and r.get("inflight", 1) == 1]
            if r:
                xs.append(i + (j - (len(combos) - 1) / 2) * width)
                p50.append(r[0]["p50_ms"])
                p99.append(r[0]["p99_ms"])
        if xs:
            label = "B=%d, CUDA graph %s%s" % (b, "on" if g else "off", ", branches" if br else "")
            ax1.bar(xs, p50, width, label=label)
            ax1.errorbar(xs, p50, yerr=[[0] * len(p50), [q - p for p, q in zip(p50, p99)]], fmt="none", ecolor="k",
                         capsize=3, lw=0.8)
    for i, m in enumerate(modes):
        ax1.hlines(TARGET_P50[m], i - 0.45, i + 0.45, colors="r", linestyles="--", lw=1)
    ax1.set_xticks(range(len(modes)))
    ax1.set_xticklabels(modes)
    ax1.set_ylabel("ms per call (p50, whisker to p99)")
    ax1.set_title("latency (red: B=1 p50 target)")
    ax1.legend(fontsize=8)
    labels, fps = [], []
    for m in modes:
        for r in sorted((r for r in rows if r["mode"] == m), key=lambda r: (r["batch"], r.get("inflight", 1), r["cuda_graph"],
                                                                                   r.get("branches", False))):
            labels.append("%s B%d%s%s%s" % (m, r["batch"], " x%d" % r["inflight"] if r.get("inflight", 1) > 1 else "",
                                            " G" if r["cuda_graph"] else "", " br" if r.get("branches", False) else ""))
            fps.append(r["frames_per_s"])
    ax2.barh(range(len(fps)), fps, color="tab:blue")
    ax2.set_yticks(range(len(fps)))
    ax2.set_yticklabels(labels, fontsize=7)
    ax2.invert_yaxis()
    ax2.axvline(TARGET_FPS_B8, color="r", ls="--", lw=1)
    ax2.set_xlabel("frames/s (xN: N in flight, G: CUDA graph; red: batch-8 target)")
    ax2.set_title("throughput")
    fig.suptitle(a.title)
    fig.tight_layout()
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.json[0])), "frame-to-pose.svg")
    fig.savefig(out)
    print("chart:", out)


if __name__ == "__main__":
    main()
