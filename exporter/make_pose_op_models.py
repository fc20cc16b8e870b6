#!/usr/bin/env -S /usr/bin/python3
"""Write the one-node pose-operator models and their fixtures into
pvn3d-ops/src/test/resources/ops/pose/.

Models (domain ai.onnx.contrib, opset imports {"": 17, "ai.onnx.contrib": 1}, IR version 8,
every dimension dynamic except the fixed 3 of coordinates):
  vote_aggregate.onnx          votes [B,K,N,3], mask float [B,N] -> kps, inliers (default attributes)
  vote_aggregate_bool.onnx     the same with a bool mask
  vote_aggregate_cf0.onnx      bandwidth 0.05, max_iter 40, center_filter 0 (float mask)
  kabsch_solver.onnx           model_kps (any rank), pred_kps [B,K,3] -> R, t
  pose_solve.onnx              votes, mask float, model_kps (any rank) -> R, t, kps, inliers
  pose_solve_bool.onnx         the same with a bool mask
  pose_solve_no_inliers.onnx   the same (float mask) without the optional inliers output
  errors/*.onnx                unshaped inputs (rank and dtype checks reach the kernel) and bad
                               attributes (session creation fails)
Fixtures (PVT1, see pvn3d_export/pvt.py; inputs first, then the expected outputs; the mask is
stored as float32 0/1, the tests feed it as bool to the *_bool models):
  pose_case{1,2,3}.bin         votes, mask, model_kps -> R, t, kps, inliers (default attributes;
                               VoteAggregate's kps/inliers are the same numbers)
                               1: B=2, K=9, N=300, shared model, noise + 20% outliers, a few NaN
                                  votes, one rotation 1e-3 rad short of 180 degrees
                               2: B=3, K=9, N=250, 35% outliers, item 1 with an empty mask, one
                                  rotation of exactly 180 degrees
                               3: B=2, K=3, N=200, one model per batch item [B,K,3]
  vote_aggregate_cf0_case1.bin votes, mask -> kps, inliers for vote_aggregate_cf0.onnx
                               (B=2, K=4, N=180)
  kabsch_case1.bin             model_kps [9,3], pred_kps [5,9,3] -> R, t: random, near-180,
                               exactly-180 rotations, noise, and a mirrored prediction (the
                               det < 0 fix)
  kabsch_case2.bin             model_kps [3,3,3] (one per item), pred_kps [3,3,3] -> R, t (K = 3)
Expected outputs come from the plain-PyTorch/numpy reference pvn3d_export/pvn3d/pose.py.
Deterministic.

Usage:  /usr/bin/python3 exporter/make_pose_op_models.py [--out DIR]
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pvn3d_export import ops, pvt  # noqa: E402
from pvn3d_export.pvn3d import pose  # noqa: E402

REPO = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(REPO, "pvn3d-ops", "src", "test", "resources", "ops", "pose")

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
VOTES = ("votes", F, ["B", "K", "N", 3])
KPS = ("kps", F, ["B", "K", 3])
INLIERS = ("inliers", I64, ["B"])
R_OUT = ("R", F, ["B", 3, 3])
T_OUT = ("t", F, ["B", 3])
MODEL_ANY = ("model_kps", F, None)  # [K,3] or [B,K,3]
CF0_ATTRS = {"bandwidth": 0.05, "max_iter": 40, "center_filter": 0}


def mask_in(t):
    return ("mask", t, ["B", "N"])


def make_model(op, ins, outs, attrs=None, name=None, unshaped=False):
    if unshaped:
        ins = [(n, t, None) for n, t, _ in ins]
        outs = [(n, t, None) for n, t, _ in outs]
    node = helper.make_node("PVN3D_" + op, [n for n, _, _ in ins], [n for n, _, _ in outs],
                            name=name or op, domain=ops.DOMAIN, **(attrs or {}))
    g = helper.make_graph([node], name or op,
                          [helper.make_tensor_value_info(*i) for i in ins],
                          [helper.make_tensor_value_info(*o) for o in outs])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid(ops.DOMAIN, ops.OPSET)],
                              producer_name="pvn3d-export", producer_version="1")
    model.ir_version = 8
    if all(s is not None for _, _, s in list(ins) + list(outs)):
        # onnx's checker (1.12) insists on a shape field; ORT accepts a value without one (any
        # rank: model_kps is [K,3] or [B,K,3]; the unshaped error models)
        onnx.checker.check_model(model)
    return model


def models():
    va = ([VOTES, mask_in(F)], [KPS, INLIERS])
    ks = ([MODEL_ANY, ("pred_kps", F, ["B", "K", 3])], [R_OUT, T_OUT])
    ps = ([VOTES, mask_in(F), MODEL_ANY], [R_OUT, T_OUT, KPS, INLIERS])
    out = {
        "vote_aggregate": make_model("VoteAggregate", *va, name="vote_aggregate"),
        "vote_aggregate_bool": make_model("VoteAggregate", [VOTES, mask_in(BOOL)], va[1],
                                          name="vote_aggregate_bool"),
        "vote_aggregate_cf0": make_model("VoteAggregate", *va, attrs=CF0_ATTRS,
                                         name="vote_aggregate_cf0"),
        "kabsch_solver": make_model("KabschSolver", *ks, name="kabsch_solver"),
        "pose_solve": make_model("PoseSolve", *ps, name="pose_solve"),
        "pose_solve_bool": make_model("PoseSolve", [VOTES, mask_in(BOOL), MODEL_ANY], ps[1],
                                      name="pose_solve_bool"),
        "pose_solve_no_inliers": make_model("PoseSolve", ps[0], ps[1][:3],
                                            name="pose_solve_no_inliers"),
        # errors: unshaped graphs let wrong ranks and mask dtypes reach the kernels
        "errors/vote_aggregate_unshaped": make_model("VoteAggregate", *va, unshaped=True,
                                                     name="vote_aggregate_unshaped"),
        "errors/kabsch_solver_unshaped": make_model("KabschSolver", *ks, unshaped=True,
                                                    name="kabsch_solver_unshaped"),
        "errors/pose_solve_unshaped": make_model("PoseSolve", *ps, unshaped=True,
                                                 name="pose_solve_unshaped"),
        "errors/pose_solve_int_mask": make_model("PoseSolve", [VOTES, mask_in(I64), MODEL_ANY],
                                                 ps[1], unshaped=True, name="pose_solve_int_mask"),
    }
    bad = {
        "vote_aggregate_bandwidth0": {"bandwidth": 0.0},
        "vote_aggregate_bandwidth_neg": {"bandwidth": -0.08},
        "vote_aggregate_bandwidth_nan": {"bandwidth": float("nan")},
        "vote_aggregate_max_iter_neg": {"max_iter": -1},
        "vote_aggregate_center_filter2": {"center_filter": 2},
    }
    for n, attrs in bad.items():
        out["errors/" + n] = make_model("VoteAggregate", *va, attrs=attrs, name=n)
    out["errors/pose_solve_bandwidth_inf"] = make_model("PoseSolve", *ps,
                                                        attrs={"bandwidth": float("inf")},
                                                        name="pose_solve_bandwidth_inf")
    return out


# ---- scenes ----

def rotation(axis, angle):
    axis = np.asarray(axis, np.float64)
    axis = axis / np.linalg.norm(axis)
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    C = 1 - c
    return np.array([[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                     [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                     [z * x * C - y * s, z * y * C + x * s, c + z * z * C]])


def random_rotation(rng):
    return rotation(rng.standard_normal(3), rng.uniform(0.2, math.pi - 0.2))


def model_keypoints(rng, K):
    """K-1 keypoints within 0.12 m of the object's centre, and the centre (0,0,0) last."""
    kp = rng.uniform(-0.12, 0.12, (K, 3))
    kp[-1] = 0.0
    return kp


def scene_votes(rng, model, R, t, N, noise=0.006, outliers=0.2):
    """votes [K,N,3] float32 for one object: each point votes for every keypoint (model in the
    camera frame) with Gaussian noise; a fraction of points are outliers voting uniformly."""
    K = model.shape[0]
    world = model @ R.T + t
    votes = world[:, None, :] + rng.standard_normal((K, N, 3)) * noise
    bad = rng.rand(N) < outliers
    votes[:, bad] = t + rng.uniform(-0.35, 0.35, (K, int(bad.sum()), 3))
    return votes.astype(np.float32)


def pose_case(case):
    rng = np.random.RandomState(8000 + case)
    if case == 1:
        B, K, N = 2, 9, 300
        model = model_keypoints(rng, K)
        models_b = [model] * B
        Rs = [random_rotation(rng), rotation(rng.standard_normal(3), math.pi - 1e-3)]
        outl = [0.2, 0.2]
    elif case == 2:
        B, K, N = 3, 9, 250
        model = model_keypoints(rng, K)
        models_b = [model] * B
        Rs = [rotation([0, 0, 1], math.pi), random_rotation(rng), random_rotation(rng)]
        outl = [0.35, 0.35, 0.35]
    else:
        B, K, N = 2, 3, 200
        models_b = [model_keypoints(rng, K) for _ in range(B)]
        model = np.stack(models_b)
        Rs = [random_rotation(rng), rotation(rng.standard_normal(3), math.pi - 1e-2)]
        outl = [0.15, 0.25]
    votes = np.empty((B, K, N, 3), np.float32)
    mask = np.zeros((B, N), np.float32)
    for b in range(B):
        tb = rng.uniform(-0.2, 0.2, 3) + np.array([0, 0, 0.8])
        votes[b] = scene_votes(rng, models_b[b], Rs[b], tb, N, outliers=outl[b])
        mask[b] = (rng.rand(N) < 0.85).astype(np.float32)
    if case == 1:
        votes[0, 3, 17, 1] = np.nan  # a broken prediction: point 17 takes no part
        votes[1, 8, 42, 0] = np.inf
        mask[0, 17] = mask[1, 42] = 1.0
    if case == 2:
        mask[1] = 0.0  # empty mask: NaN keypoints, NaN pose, inliers 0
    return votes, mask, np.asarray(model, np.float32)


def kabsch_case(case):
    rng = np.random.RandomState(9000 + case)
    if case == 1:
        B, K = 5, 9
        model = rng.uniform(-0.1, 0.1, (K, 3)).astype(np.float32)
        models_b = [model] * B
        Rs = [random_rotation(rng), rotation(rng.standard_normal(3), math.pi - 1e-3),
              rotation([1, 1, 0], math.pi), random_rotation(rng), random_rotation(rng)]
    else:
        B, K = 3, 3
        models_b = [rng.uniform(-0.1, 0.1, (K, 3)).astype(np.float32) for _ in range(B)]
        model = np.stack(models_b)
        Rs = [random_rotation(rng), rotation(rng.standard_normal(3), math.pi - 1e-4),
              random_rotation(rng)]
    pred = np.empty((B, K, 3), np.float32)
    for b in range(B):
        t = rng.uniform(-0.3, 0.3, 3)
        p = models_b[b].astype(np.float64) @ Rs[b].T + t + rng.standard_normal((K, 3)) * 2e-3
        if case == 1 and b == 4:
            p = p * np.array([1.0, 1.0, -1.0])  # mirrored: the best orthogonal fit has det -1
        pred[b] = p
    return model, pred


def as_np(x):
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    os.makedirs(os.path.join(args.out, "errors"), exist_ok=True)
    for name, m in models().items():
        path = os.path.join(args.out, name + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))

    def save(fname, tensors):
        path = os.path.join(args.out, fname)
        pvt.save(path, tensors)
        print("wrote %s (%d bytes): %s" % (path, os.path.getsize(path),
                                           ", ".join("%s%s" % (n, list(a.shape)) for n, a in tensors)))

    for case in (1, 2, 3):
        votes, mask, model = pose_case(case)
        R, t, kps, inl = pose.pose_solve_ref(torch.from_numpy(votes), torch.from_numpy(mask),
                                             torch.from_numpy(model))
        save("pose_case%d.bin" % case, [("votes", votes), ("mask", mask), ("model_kps", model),
                                        ("R", as_np(R)), ("t", as_np(t)), ("kps", as_np(kps)),
                                        ("inliers", as_np(inl).astype(np.int64))])
        print("  inliers %s, mask sizes %s" % (as_np(inl).tolist(), mask.sum(1).tolist()))

    rng = np.random.RandomState(8100)
    B, K, N = 2, 4, 180
    votes = np.empty((B, K, N, 3), np.float32)
    mask = (rng.rand(B, N) < 0.8).astype(np.float32)
    for b in range(B):
        votes[b] = scene_votes(rng, model_keypoints(rng, K), random_rotation(rng),
                               rng.uniform(-0.2, 0.2, 3), N, noise=0.01, outliers=0.3)
    kps, inl = pose.vote_aggregate_ref(torch.from_numpy(votes), torch.from_numpy(mask),
                                       **CF0_ATTRS)
    save("vote_aggregate_cf0_case1.bin", [("votes", votes), ("mask", mask), ("kps", as_np(kps)),
                                          ("inliers", as_np(inl).astype(np.int64))])

    for case in (1, 2):
        model, pred = kabsch_case(case)
        R, t = pose.kabsch_ref(torch.from_numpy(model), torch.from_numpy(pred))
        save("kabsch_case%d.bin" % case, [("model_kps", model), ("pred_kps", pred),
                                          ("R", as_np(R)), ("t", as_np(t))])
    return 0


if __name__ == "__main__":
    sys.exit(main())
