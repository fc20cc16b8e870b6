#!/usr/bin/env -S /usr/bin/python3
"""Build, export and check the embedded default model, its bunny sample and the
reference output.

Writes
  pvn3d-pipeline/src/main/resources/models/pointnet2_default.onnx   the SmallPointNet2 graph (opset 17,
        custom domain ai.onnx.contrib v1, dynamic B and N; N must be >= 256)
  pvn3d-pipeline/src/main/resources/models/bunny_sample.bin         PVT1: xyz float32 [1,2048,3]
  pvn3d-pipeline/src/test/resources/models/pointnet2_default_expected.bin
        PVT1: point_features float32 [1,13,2048] (PyTorch eval-mode output on the sample),
              sa1_idx int64 [1,256] (the first set-abstraction level's FPS indices)

The bunny comes from exporter/fetch_bunny.sh (npm package `bunny`), or --bunny-json PATH.
Usage:  /usr/bin/python3 exporter/make_pointnet2_default.py [--bunny-json PATH]
"""
import argparse
import collections
import io
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pvn3d_export.bunny import bunny_json  # noqa: E402
from pvn3d_export import npeval, ops, pvt  # noqa: E402
from pvn3d_export.pointnet2 import SmallPointNet2, init_batchnorm  # noqa: E402

REPO = os.path.dirname(HERE)
MAIN_MODELS = os.path.join(REPO, "pvn3d-pipeline", "src", "main", "resources", "models")
TEST_MODELS = os.path.join(REPO, "pvn3d-pipeline", "src", "test", "resources", "models")
NUM_POINTS = 2048
EXTENT = 0.15  # metres, largest side of the bounding box
# Where the bunny's bounding-box centre goes. Not the origin: FPS treats points with
# |p|^2 <= 1e-3 (within ~3.2 cm of the origin) as padding, and a cloud centred on the origin
# would lose 144 of its 2048 points that way. 0.5 m in front of a camera looking down +z.
CENTRE = (0.0, 0.0, 0.5)
SEED = 20240607


def bunny_sample(bunny_json, n=NUM_POINTS, seed=SEED):
    """Area-weighted uniform samples on the bunny's surface, scaled so the largest bounding-box
    side is EXTENT, bounding-box centre moved to CENTRE. float32 [1,n,3]. Deterministic."""
    import json
    with open(bunny_json) as f:
        d = json.load(f)
    v = np.asarray(d["positions"], np.float64)
    t = np.asarray(d["cells"], np.int64)
    lo, hi = v.min(0), v.max(0)
    v = (v - (lo + hi) / 2) * (EXTENT / (hi - lo).max())
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    rng = np.random.RandomState(seed)
    tri = rng.choice(len(t), size=n, p=area / area.sum())
    u, w = rng.random_sample(n), rng.random_sample(n)
    flip = u + w > 1
    u[flip], w[flip] = 1 - u[flip], 1 - w[flip]
    p = a[tri] + u[:, None] * (b[tri] - a[tri]) + w[:, None] * (c[tri] - a[tri])
    return (p + np.asarray(CENTRE)).astype(np.float32)[None]


def build_model(sample):
    """Seeded weights (torch's default init after manual_seed), BatchNorm calibrated on the
    sample (see init_batchnorm), eval mode."""
    torch.manual_seed(SEED)
    model = SmallPointNet2(out_channels=13)
    return init_batchnorm(model, torch.from_numpy(sample),
                          torch.Generator().manual_seed(SEED + 1))


def export(model, sample):
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        # the reference forwards' input checks run at trace time only (the custom nodes replace
        # them in the graph): their TracerWarnings, and torch 1.13's g.op deprecation, are noise
        warnings.simplefilter("ignore")
        ops.onnx_export(model, (torch.from_numpy(sample),), buf, opset_version=17,
                          input_names=["xyz"], output_names=["point_features"],
                          dynamic_axes={"xyz": {0: "B", 1: "N"},
                                        "point_features": {0: "B", 2: "N"}},
                          custom_opsets={ops.DOMAIN: ops.OPSET},
                          do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL)
    m = onnx.load_from_string(buf.getvalue())
    m.producer_name = "pvn3d-export"
    m.producer_version = "1"
    m.doc_string = ("PVN3D embedded default: small PointNet++ (2 MSG set-abstraction levels, 2 "
                    "feature-propagation levels, 13-channel head), seeded random weights, "
                    "made by exporter/make_pointnet2_default.py")
    if m.ir_version > 8:
        m.ir_version = 8
    return m


def verify(m, model, sample):
    """Evaluate the exported graph with the numpy evaluator (custom nodes through the reference)
    against the PyTorch model: on the sample, and on another batch size and point count."""
    rng = np.random.RandomState(SEED + 2)
    other = (rng.uniform(-0.1, 0.1, (2, 700, 3)) + np.asarray(CENTRE)).astype(np.float32)
    for x in (sample, other):
        got = npeval.run(m, {"xyz": x})["point_features"]
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        err = np.abs(got - want).max()
        print("numpy evaluation of the ONNX graph vs PyTorch, xyz %s: max abs diff %.3g "
              "(max |value| %.3g)" % (list(x.shape), err, np.abs(want).max()))
        assert got.shape == want.shape and err < 1e-4, err


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bunny-json", help="output of exporter/fetch_bunny.sh (else run it)")
    ap.add_argument("--main-out", default=MAIN_MODELS)
    ap.add_argument("--test-out", default=TEST_MODELS)
    args = ap.parse_args(argv)
    bj, tmp = bunny_json(args.bunny_json)
    try:
        sample = bunny_sample(bj)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    pad = (sample.astype(np.float64) ** 2).sum(-1) <= 1e-3
    print("bunny sample: %s, extent %s m, %d points with |p|^2 <= 1e-3 (FPS padding)"
          % (sample.shape, np.round(sample[0].max(0) - sample[0].min(0), 4), pad.sum()))

    model = build_model(sample)
    with torch.no_grad():
        expected = model(torch.from_numpy(sample))
        sa1_idx = ops.furthest_point_sample_ref(torch.from_numpy(sample), model.sa1.npoint)
    m = export(model, sample)
    onnx.checker.check_model(m)
    inferred = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(inferred)

    inv = collections.Counter(("%s::%s" % (n.domain, n.op_type)) if n.domain else n.op_type
                              for n in m.graph.node)
    print("node inventory (%d nodes):" % sum(inv.values()))
    for k, v in sorted(inv.items()):
        print("  %-40s %d" % (k, v))
    for name in ops.OP_NAMES:
        assert inv["%s::PVN3D_%s" % (ops.DOMAIN, name)] > 0, name
    assert "MaxPool" not in inv and not any("MaxPool" in k for k in inv), inv
    for o in inferred.graph.output:
        print("output:", onnx.helper.printable_value_info(o))

    verify(m, model, sample)

    os.makedirs(args.main_out, exist_ok=True)
    os.makedirs(args.test_out, exist_ok=True)
    path = os.path.join(args.main_out, "pointnet2_default.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    print("wrote %s (%d bytes, %d parameters)"
          % (path, os.path.getsize(path), sum(p.numel() for p in model.parameters())))
    path = os.path.join(args.main_out, "bunny_sample.bin")
    pvt.save(path, [("xyz", sample)])
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))
    path = os.path.join(args.test_out, "pointnet2_default_expected.bin")
    pvt.save(path, [("point_features", expected.numpy()), ("sa1_idx", sa1_idx.numpy())])
    e = expected.numpy().astype(np.float64)
    print("wrote %s (%d bytes): point_features %s sum %.6f abs-sum %.6f, per-channel std over "
          "points %.3f..%.3f, sa1_idx[:8] %s"
          % (path, os.path.getsize(path), list(e.shape), e.sum(), np.abs(e).sum(),
             e[0].std(axis=1).min(), e[0].std(axis=1).max(), sa1_idx[0, :8].tolist()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
