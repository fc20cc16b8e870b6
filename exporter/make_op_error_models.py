#!/usr/bin/env -S /usr/bin/python3
"""Write the small one-node models the Java custom-operator tests use to check error messages
into pvn3d-ops/src/test/resources/ops/errors/.

The error cases that depend on input values (npoint > N, an index outside its range, ThreeNN with
m < 3, a wrong rank through ORT's own graph-input check) use the regular one-node models of
make_op_models.py. The models here cover what those cannot:

  furthest_point_sample_npoint0.onnx   attribute npoint = 0           (kernel creation fails)
  furthest_point_sample_no_npoint.onnx attribute npoint missing       (kernel creation fails)
  ball_query_radius0.onnx              attribute radius = 0.0         (kernel creation fails)
  ball_query_radius_neg.onnx           attribute radius = -0.1        (kernel creation fails)
  ball_query_nsample0.onnx             attribute nsample = 0          (kernel creation fails)
  ball_query_nsample_huge.onnx         attribute nsample = 2^40       (its output cannot be allocated)
  furthest_point_sample_double.onnx    xyz declared double            (ORT's type check at load)
  <op>_unshaped.onnx                   every input and output without a shape, so that a wrong
                                       rank reaches the kernel's own check (one per operator)

It also writes the models of the generic custom-operator facility's tests into
runtime/src/test/resources/customop/: java_scale.onnx (node JavaScale in domain test.java: x -> y,
attribute factor = 2.5, optional input bias absent) and java_scale_bias.onnx (the same with bias).

Only the onnx package is needed (no PyTorch). Deterministic.

Usage:  /usr/bin/python3 exporter/make_op_error_models.py [--out DIR]
"""
import argparse
import os
import sys

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(REPO, "pvn3d-ops", "src", "test", "resources", "ops", "errors")
DOMAIN = "ai.onnx.contrib"
F, D, I64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64

# op -> (inputs [(name, type)], outputs [(name, type)], default attributes)
OPS = {
    "FurthestPointSample": ([("xyz", F)], [("idx", I64)], {"npoint": 64}),
    "GatherPoints": ([("features", F), ("idx", I64)], [("out", F)], {}),
    "BallQuery": ([("xyz", F), ("new_xyz", F)], [("idx", I64)], {"radius": 0.2, "nsample": 8}),
    "GroupPoints": ([("features", F), ("idx", I64)], [("out", F)], {}),
    "ThreeNN": ([("unknown", F), ("known", F)], [("dist2", F), ("idx", I64)], {}),
    "ThreeInterpolate": ([("features", F), ("idx", I64), ("weight", F)], [("out", F)], {}),
}
SNAKE = {"FurthestPointSample": "furthest_point_sample", "GatherPoints": "gather_points",
         "BallQuery": "ball_query", "GroupPoints": "group_points", "ThreeNN": "three_nn",
         "ThreeInterpolate": "three_interpolate"}


def model(op, attrs=None, types=None, shaped=True):
    ins, outs, default_attrs = OPS[op]
    attrs = dict(default_attrs) if attrs is None else attrs
    types = types or {}
    node = helper.make_node("PVN3D_" + op, [n for n, _ in ins], [n for n, _ in outs],
                            name=SNAKE[op], domain=DOMAIN, **attrs)

    def info(name, t, rank):
        t = types.get(name, t)
        return helper.make_tensor_value_info(name, t, ["d%d" % i for i in range(rank)] if shaped else None)

    g = helper.make_graph([node], SNAKE[op] + "_error",
                          [info(n, t, 3) for n, t in ins], [info(n, t, 3) for n, t in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)],
                          producer_name="pvn3d-export", producer_version="1")
    m.ir_version = 8
    if shaped:
        # onnx's checker (1.12) insists on a shape field; ORT accepts a value without one, which
        # is the point of the unshaped models
        onnx.checker.check_model(m)
    return m


def models():
    yield "furthest_point_sample_npoint0", model("FurthestPointSample", {"npoint": 0}, shaped=False)
    yield "furthest_point_sample_no_npoint", model("FurthestPointSample", {}, shaped=False)
    yield "ball_query_radius0", model("BallQuery", {"radius": 0.0, "nsample": 8}, shaped=False)
    yield "ball_query_radius_neg", model("BallQuery", {"radius": -0.1, "nsample": 8}, shaped=False)
    yield "ball_query_nsample0", model("BallQuery", {"radius": 0.2, "nsample": 0}, shaped=False)
    yield "ball_query_nsample_huge", model("BallQuery", {"radius": 0.2, "nsample": 1 << 40}, shaped=False)
    yield "furthest_point_sample_double", model("FurthestPointSample", types={"xyz": D})
    for op in OPS:
        yield SNAKE[op] + "_unshaped", model(op, shaped=False)


def scale_model(with_bias):
    ins = ["x", "bias"] if with_bias else ["x"]
    node = helper.make_node("JavaScale", ins, ["y"], name="scale", domain="test.java", factor=2.5)
    g = helper.make_graph([node], "java_scale",
                          [helper.make_tensor_value_info(n, F, None) for n in ins],
                          [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("test.java", 1)],
                          producer_name="pvn3d-export", producer_version="1")
    m.ir_version = 8
    return m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name, m in models():
        path = os.path.join(args.out, name + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))
    facility = os.path.join(REPO, "runtime", "src", "test", "resources", "customop")
    os.makedirs(facility, exist_ok=True)
    for name, m in (("java_scale", scale_model(False)), ("java_scale_bias", scale_model(True))):
        path = os.path.join(facility, name + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
