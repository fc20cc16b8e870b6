"""The pose stage's settings on validation scenes, PyTorch on the CPU: how ADD / ADD-S of a trained
checkpoint change with the mean-shift bandwidth, and with a trimmed point-to-point ICP after the voting
pose (the prototype of the Java pipeline's IcpRefiner). Validation split only: the test split stays
held out.

  PVN3D_OPS_PATH=pvn3d-ops/target/cmake/jar/libpvn3d_ops.so /usr/bin/python3 \
      benchmarks/results/2026-12-01-training/pose_sweep.py --bunny-json bunny.json --n 256 \
      exporter/checkpoints/pvn3d_tiny_bunny.pt [last.pt ...]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "exporter"))
import train_pvn3d as T  # noqa: E402


def icp(R, t, obs, M, iters, trim):
    """Trimmed point-to-point ICP: each observed point paired with its nearest model point under (R, t)."""
    R, t, obs = R.double(), t.double(), obs.double()
    for _ in range(iters):
        m = M @ R.T + t
        dmin, j = torch.cdist(obs, m).min(1)
        keep = dmin < trim
        if int(keep.sum()) < 10:
            break
        src, q = M[j[keep]], obs[keep]
        cs, cq = src.mean(0), q.mean(0)
        U, _, Vt = torch.linalg.svd((src - cs).T @ (q - cq))
        D = torch.eye(3, dtype=R.dtype)
        D[2, 2] = torch.sign(torch.det(Vt.T @ U.T))
        R = Vt.T @ D @ U.T
        t = cq - R @ cs
    return R.float(), t.float()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoints", nargs="+", help="state_dict.pt or last.pt files")
    ap.add_argument("--bunny-json", required=True)
    ap.add_argument("--n", type=int, default=256, help="validation scenes (the first n)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    cfg = dict(T.DEFAULTS)
    cfg.update(bunny_json=a.bunny_json, n_val=a.n, val_batch=32)
    ds = T.load_dataset(cfg, torch.device("cpu"))
    val = T.Validator(ds, cfg, torch.device("cpu"))
    thr = 0.1 * val.diameter
    M = val.model_points.double()
    for path in a.checkpoints:
        ck = T.torch_load(path)
        net = T.build_model(cfg)
        net.load_state_dict(ck.get("model", ck))
        net.eval()
        with torch.no_grad():
            outs = [tuple(o.float() for o in net(b["rgb"], b["cld_rgb_nrm"], b["choose"])[:3]) for b in val.batches]
        cases = [("bandwidth %.3f" % bw, bw, 0, 0.0) for bw in (0.08, 0.06, 0.04, 0.03, 0.02, 0.015, 0.01)]
        cases += [("icp %d x trim %.0f mm" % (n, 1e3 * tr), 0.08, n, tr)
                  for n, tr in ((10, 0.02), (30, 0.01), (30, 0.02), (30, 0.03), (30, 9.0))]
        for name, bw, iters, trim in cases:
            add_all, adds_all = [], []
            for b, (seg, kp, ctr) in zip(val.batches, outs):
                R, t, _, _ = T.solve_poses(b["cld_rgb_nrm"], seg, kp, ctr, val.model_kps, bw, 300)
                if iters:
                    mask = seg.argmax(2) == 1
                    pairs = [icp(R[i], t[i], b["cld_rgb_nrm"][i, mask[i], :3], M, iters, trim) for i in range(R.shape[0])]
                    R = torch.stack([p[0] for p in pairs])
                    t = torch.stack([p[1] for p in pairs])
                add, adds = T.pose_errors(R, t, b["gt_R"].float(), b["gt_t"].float(), val.model_points)
                add_all.append(add)
                adds_all.append(adds)
            add, adds = torch.cat(add_all), torch.cat(adds_all)
            print("%s  %-22s ADD %.3f  ADD-S %.3f  median ADD %.1f mm" % (
                os.path.basename(path), name, float((add < thr).float().mean()),
                float((adds < thr).float().mean()), 1e3 * float(add.median())), flush=True)


if __name__ == "__main__":
    main()
