#!/usr/bin/env -S /usr/bin/python3
"""Write the one-node custom-operator models and their fixtures into
pvn3d-ops/src/test/resources/ops/.

For each of the six PointNet++ operators of spec/ops.md:
  <op_snake>.onnx         one node `PVN3D_<Name>` in domain ai.onnx.contrib (opset imports
                          {"": 17, "ai.onnx.contrib": 1}, IR version 8), every dimension
                          dynamic except the fixed 3 of coordinates and the attribute-given sizes;
  <op_snake>_case1.bin    PVT1 container (see pvn3d_export/pvt.py): the model inputs, then the
  <op_snake>_case2.bin    expected outputs, each tensor named like the graph value; case1 and
                          case2 have different point counts (B = 2 in both).
Expected outputs come from the PyTorch reference (pvn3d_export/ops.py). Deterministic.

Usage:  /usr/bin/python3 exporter/make_op_models.py [--out DIR]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pvn3d_export import ops, pvt  # noqa: E402

REPO = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(REPO, "pvn3d-ops", "src", "test", "resources", "ops")

F, I64 = TensorProto.FLOAT, TensorProto.INT64
NPOINT = 64
RADIUS = 0.2
NSAMPLE = 8

# name -> (inputs [(name, type, shape)], outputs [(name, type, shape)], attributes)
SIGNATURES = {
    "FurthestPointSample": ([("xyz", F, ["B", "N", 3])],
                            [("idx", I64, ["B", NPOINT])], {"npoint": NPOINT}),
    "GatherPoints": ([("features", F, ["B", "C", "N"]), ("idx", I64, ["B", "M"])],
                     [("out", F, ["B", "C", "M"])], {}),
    "BallQuery": ([("xyz", F, ["B", "N", 3]), ("new_xyz", F, ["B", "M", 3])],
                  [("idx", I64, ["B", "M", NSAMPLE])], {"radius": RADIUS, "nsample": NSAMPLE}),
    "GroupPoints": ([("features", F, ["B", "C", "N"]), ("idx", I64, ["B", "M", "S"])],
                    [("out", F, ["B", "C", "M", "S"])], {}),
    "ThreeNN": ([("unknown", F, ["B", "n", 3]), ("known", F, ["B", "m", 3])],
                [("dist2", F, ["B", "n", 3]), ("idx", I64, ["B", "n", 3])], {}),
    "ThreeInterpolate": ([("features", F, ["B", "C", "m"]), ("idx", I64, ["B", "n", 3]),
                          ("weight", F, ["B", "n", 3])],
                         [("out", F, ["B", "C", "n"])], {}),
}


def make_model(name):
    ins, outs, attrs = SIGNATURES[name]
    node = helper.make_node("PVN3D_" + name, [n for n, _, _ in ins], [n for n, _, _ in outs],
                            name=ops.OP_SNAKE[name], domain=ops.DOMAIN, **attrs)
    g = helper.make_graph([node], ops.OP_SNAKE[name],
                          [helper.make_tensor_value_info(*i) for i in ins],
                          [helper.make_tensor_value_info(*o) for o in outs])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid(ops.DOMAIN, ops.OPSET)],
                              producer_name="pvn3d-export", producer_version="1")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def cloud(rng, B, N):
    """Uniform points in a 0.5 m cube centred on the origin, float32 [B,N,3]."""
    return rng.uniform(-0.25, 0.25, (B, N, 3)).astype(np.float32)


def case_inputs(name, case, rng):
    B = 2
    N = {1: 300, 2: 777}[case]
    if name == "FurthestPointSample":
        xyz = cloud(rng, B, N)
        # padding: all-zero points (never picked after the first step), also at index 0 of
        # batch 1 in case 2 (the first pick is 0 regardless)
        for b in range(B):
            xyz[b, rng.choice(N, N // 20, replace=False)] = 0.0
        if case == 2:
            xyz[1, 0] = 0.0
        xyz[0, 7] = xyz[0, 8]  # a duplicate point
        return [xyz]
    if name == "GatherPoints":
        C, M = (4, 64) if case == 1 else (7, 150)
        feats = rng.standard_normal((B, C, N)).astype(np.float32)
        idx = rng.randint(0, N, (B, M)).astype(np.int64)
        idx[:, 0], idx[:, -1] = 0, N - 1
        return [feats, idx]
    if name == "BallQuery":
        M = 64 if case == 1 else 128
        xyz = cloud(rng, B, N)
        # centres: half of them input points, the rest in a larger box (sparse or empty
        # neighbourhoods exercise the fill rule), two far away (no neighbour -> zeros)
        new = np.empty((B, M, 3), np.float32)
        half = M // 2
        for b in range(B):
            new[b, :half] = xyz[b, rng.choice(N, half, replace=False)]
        new[:, half:] = rng.uniform(-0.45, 0.45, (B, M - half, 3)).astype(np.float32)
        new[:, -2:] = np.array([[1.0, 1.0, 1.0], [-0.6, 0.0, 0.0]], np.float32)
        new[:, half] = np.array([0.25 + 0.18, 0.25, 0.25], np.float32)  # corner: few hits
        return [xyz, new]
    if name == "GroupPoints":
        C, M, S = (3, 32, 8) if case == 1 else (6, 96, 16)
        feats = rng.standard_normal((B, C, N)).astype(np.float32)
        idx = rng.randint(0, N, (B, M, S)).astype(np.int64)
        idx[:, 0, 0], idx[:, -1, -1] = 0, N - 1
        return [feats, idx]
    if name == "ThreeNN":
        m = N // 4
        unknown = cloud(rng, B, N)
        known = cloud(rng, B, m)
        known[:, 5] = known[:, 2]  # equal distances: the earlier index wins
        unknown[:, 1] = known[:, 3]  # an unknown point on a known one (distance 0)
        return [unknown, known]
    if name == "ThreeInterpolate":
        C = 5 if case == 1 else 9
        m = N // 4
        unknown = cloud(rng, B, N)
        known = cloud(rng, B, m)
        feats = rng.standard_normal((B, C, m)).astype(np.float32)
        r = ops.run_reference("ThreeNN", [unknown, known])
        d = np.sqrt(r["dist2"])
        recip = (1.0 / (d + np.float32(1e-8))).astype(np.float32)
        w = (recip / recip.sum(axis=2, keepdims=True)).astype(np.float32)
        return [feats, r["idx"], w]
    raise KeyError(name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for k, name in enumerate(ops.OP_NAMES):
        snake = ops.OP_SNAKE[name]
        path = os.path.join(args.out, snake + ".onnx")
        with open(path, "wb") as f:
            f.write(make_model(name).SerializeToString())
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))
        ins, outs, attrs = SIGNATURES[name]
        for case in (1, 2):
            rng = np.random.RandomState(1000 * (k + 1) + case)
            inputs = case_inputs(name, case, rng)
            expected = ops.run_reference(name, inputs, attrs)
            tensors = [(n, a) for (n, _, _), a in zip(ins, inputs)]
            tensors += list(expected.items())
            assert [n for n, _ in tensors[len(ins):]] == [n for n, _, _ in outs]
            path = os.path.join(args.out, "%s_case%d.bin" % (snake, case))
            pvt.save(path, tensors)
            desc = ", ".join("%s%s" % (n, list(a.shape)) for n, a in tensors)
            print("wrote %s (%d bytes): %s" % (path, os.path.getsize(path), desc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
