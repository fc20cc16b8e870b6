#!/usr/bin/env python3
"""What a user would otherwise pick: the six PointNet++ operators written in plain PyTorch on the GPU
(cdist / topk / gather style, no custom kernels), and PVN3D's dense N x N mean shift (9 keypoints x
3000 votes, PVN3D's MeanShiftTorch as cuda-ops/tests/gpu_test_pose_torch.py has it), at the sizes of
KernelBenchmark (perf-targets.md). Random clouds in the 0.5 m cube [0, 0.5)^3, fixed seed.

Timing as the Java CUDA benchmarks: CUDA events recorded on a stream around each call, synchronised
per call, median (and min, p90) over many calls after warm-up. FurthestPointSample is the usual
Python loop of npoint argmax steps (slow by nature; fewer calls are timed).

    python3 benchmarks/scripts/pytorch_ops_bench.py [--profile quick|full] [--out pytorch.json]

Writes JSON: {"torch": ..., "device": ..., "results": [{"case", "op", "median_ms", "min_ms", "p90_ms",
"calls"}, ...]} where "case" is KernelBenchmark's kernel parameter (MeanShift_K9_N3000 for the mean shift).
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

CASES = [
    "FPS_B1_N12288_np2048", "FPS_B1_N16384_np4096", "FPS_B8_N16384_np4096",
    "BallQuery_B1_N12288_M2048_S16_r0.0175", "BallQuery_B1_N12288_M2048_S32_r0.025",
    "BallQuery_B8_N16384_M4096_S32_r0.025",
    "GroupPoints_B8_C256_N1024_M512_S32", "GroupPoints_B1_C99_N2048_M1024_S32",
    "ThreeNN_B1_n12288_m2048", "ThreeNN_B8_n16384_m4096",
    "ThreeInterpolate_B1_C128_m2048_n12288", "ThreeInterpolate_B8_C256_m4096_n16384",
    "GatherPoints_B8_C256_N4096_M1024",
    "MeanShift_K9_N3000",
]
# the main size of each operator: the quick profile's set (as run-benchmarks.sh's)
QUICK = ["FPS_B1_N12288_np2048", "BallQuery_B1_N12288_M2048_S16_r0.0175", "GroupPoints_B8_C256_N1024_M512_S32",
         "ThreeNN_B1_n12288_m2048", "ThreeInterpolate_B1_C128_m2048_n12288", "GatherPoints_B8_C256_N4096_M1024",
         "MeanShift_K9_N3000"]


def parse(case):
    parts = case.split("_")
    keys = {}
    for p in parts[1:]:
        j = 0
        while j < len(p) and p[j].isalpha():
            j += 1
        keys[p[:j]] = float(p[j:]) if "." in p[j:] else int(p[j:])
    return parts[0], keys


# ---- the operators in plain PyTorch ----------------------------------------------------------

def fps(xyz, npoint):
    """xyz [B,N,3] -> idx [B,npoint]: the usual loop, one argmax per step."""
    B, N, _ = xyz.shape
    idx = torch.zeros(B, npoint, dtype=torch.long, device=xyz.device)
    dist = torch.full((B, N), 1e10, device=xyz.device)
    far = torch.zeros(B, dtype=torch.long, device=xyz.device)
    bi = torch.arange(B, device=xyz.device)
    for i in range(npoint):
        idx[:, i] = far
        c = xyz[bi, far].unsqueeze(1)
        dist = torch.minimum(dist, ((xyz - c) ** 2).sum(-1))
        far = dist.argmax(-1)
    return idx


def ball_query(xyz, new_xyz, radius, nsample):
    """The first nsample points (index order) within radius of each centre, padded with the first."""
    N = xyz.shape[1]
    d2 = torch.cdist(new_xyz, xyz) ** 2                                  # [B,M,N]
    ar = torch.arange(N, device=xyz.device).view(1, 1, N)
    key = torch.where(d2 < radius * radius, ar, N)                        # non-hits sort last
    idx = key.topk(nsample, dim=-1, largest=False, sorted=True).values    # [B,M,S]
    first = idx[..., :1]
    first = torch.where(first == N, 0, first)
    return torch.where(idx == N, first, idx)


def group_points(features, idx):
    B, C, N = features.shape
    _, M, S = idx.shape
    return torch.gather(features, 2, idx.reshape(B, 1, M * S).expand(B, C, M * S)).view(B, C, M, S)


def three_nn(unknown, known):
    d2 = torch.cdist(unknown, known) ** 2                                 # [B,n,m]
    return d2.topk(3, dim=-1, largest=False, sorted=True)                 # (dist2, idx)


def three_interpolate(features, idx, weight):
    B, C, m = features.shape
    n = idx.shape[1]
    g = torch.gather(features, 2, idx.reshape(B, 1, n * 3).expand(B, C, n * 3)).view(B, C, n, 3)
    return (g * weight.unsqueeze(1)).sum(-1)


def gather_points(features, idx):
    B, C, N = features.shape
    M = idx.shape[1]
    return torch.gather(features, 2, idx.view(B, 1, M).expand(B, C, M))


# ---- inputs (fixed seed, 0.5 m cube) and the call per case -----------------------------------

def make_call(case, dev, seed=1234):
    op, k = parse(case)
    g = torch.Generator(device="cpu").manual_seed(seed)

    def cloud(b, n):
        return (torch.rand(b, n, 3, generator=g) * 0.5).to(dev)

    def feats(*shape):
        return (torch.rand(*shape, generator=g) * 2 - 1).to(dev)

    def ints(limit, *shape):
        return torch.randint(0, limit, shape, generator=g).to(dev)

    if op == "FPS":
        x = cloud(k["B"], k["N"])
        return lambda: fps(x, k["np"])
    if op == "BallQuery":
        x = cloud(k["B"], k["N"])
        pick = torch.randint(0, k["N"], (k["B"], k["M"]), generator=g).to(dev)
        c = torch.gather(x, 1, pick.unsqueeze(-1).expand(-1, -1, 3)).contiguous()
        return lambda: ball_query(x, c, float(k["r"]), k["S"])
    if op == "GroupPoints":
        f = feats(k["B"], k["C"], k["N"])
        i = ints(k["N"], k["B"], k["M"], k["S"])
        return lambda: group_points(f, i)
    if op == "ThreeNN":
        u, kn = cloud(k["B"], k["n"]), cloud(k["B"], k["m"])
        return lambda: three_nn(u, kn)
    if op == "ThreeInterpolate":
        f = feats(k["B"], k["C"], k["m"])
        i = ints(k["m"], k["B"], k["n"], 3)
        w = torch.rand(k["B"], k["n"], 3, generator=g) * 0.99 + 0.01
        w = (w / w.sum(-1, keepdim=True)).to(dev)
        return lambda: three_interpolate(f, i, w)
    if op == "GatherPoints":
        f = feats(k["B"], k["C"], k["N"])
        i = ints(k["N"], k["B"], k["M"])
        return lambda: gather_points(f, i)
    if op == "MeanShift":
        path = os.path.join(REPO, "cuda-ops", "tests", "gpu_test_pose_torch.py")
        spec = importlib.util.spec_from_file_location("gpu_test_pose_torch", path)
        ms = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ms)
        # k["K"] fits in all: the centre over all votes, then one per keypoint over the centre's cluster
        votes = ms.make_votes(k["N"], k["K"], device=dev)
        return lambda: ms.pvn3d_cluster(votes)
    raise ValueError("unknown case " + case)


def time_case(case, dev, calls, warmup):
    call = make_call(case, dev)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            call()
        stream.synchronize()
        times = []
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(calls):
            start.record(stream)
            call()
            end.record(stream)
            end.synchronize()
            times.append(start.elapsed_time(end))
    times.sort()
    return {"case": case, "op": parse(case)[0], "median_ms": statistics.median(times), "min_ms": times[0],
            "p90_ms": times[min(len(times) - 1, int(0.9 * len(times)))], "calls": calls}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", choices=["quick", "full"], default="full")
    ap.add_argument("--cases", default=None, help="comma-separated cases (default: the profile's)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("pytorch_ops_bench: no CUDA device", file=sys.stderr)
        return 77
    dev = "cuda"
    cases = a.cases.split(",") if a.cases else (QUICK if a.profile == "quick" else CASES)
    quick = a.profile == "quick"
    results = []
    t0 = time.time()
    for case in cases:
        op = parse(case)[0]
        slow = op in ("FPS", "MeanShift")
        calls = (5 if quick else 20) if slow else (50 if quick else 300)
        warmup = 2 if slow else 10
        r = time_case(case, dev, calls, warmup)
        results.append(r)
        print("%-45s median %10.4f ms  min %10.4f  p90 %10.4f  (%d calls)" % (
            case, r["median_ms"], r["min_ms"], r["p90_ms"], calls), flush=True)
    doc = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(),
           "profile": a.profile, "timing": "CUDA events around each call on a dedicated stream, median",
           "seconds": round(time.time() - t0, 1), "results": results}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
