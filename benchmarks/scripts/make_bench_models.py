#!/usr/bin/env -S /usr/bin/python3
"""Write the one-node models the ORT-node benchmark (OrtNodeBenchmark) runs, at PVN3D's attribute
values, into benchmarks/src/main/resources/bench-models/ (committed: each is a few hundred bytes).

The same graphs as exporter/make_op_models.py (one node PVN3D_<Name> in domain ai.onnx.contrib,
opsets {"": 17, "ai.onnx.contrib": 1}, IR version 8, every size dynamic except the coordinates' 3
and the attribute-given sizes), but with the attributes the benchmark sizes need:
  furthest_point_sample_np<npoint>.onnx    npoint 2048, 4096
  ball_query_r<radius>_s<nsample>.onnx     (0.0175, 16), (0.025, 32)
  gather_points.onnx, group_points.onnx, three_nn.onnx, three_interpolate.onnx (no attributes)
  vote_aggregate.onnx   votes [B,K,N,3], mask float [B,N] -> kps [B,K,3], inliers int64 [B]
  pose_solve.onnx       votes, mask float, model_kps [K,3] -> R [B,3,3], t [B,3], kps, inliers
                        (both with PVN3D's bandwidth 0.08, max_iter 300, center_filter 1 written out,
                        as KernelCase.BANDWIDTH/MAX_ITER/CENTER_FILTER; the graphs of
                        exporter/make_pose_op_models.py, model_kps shaped [K,3])
A new size in KernelBenchmark/OrtNodeBenchmark with other attributes needs a line in NPOINTS or
BALLS here.

The custom-operator dispatch benchmark (DispatchBenchmark) pairs a node of ours with a built-in node
of the same work:
  dispatch_java_nop.onnx   JavaNop (domain bench.java, a Java kernel that copies x to y) x [N] -> y [N]
  dispatch_identity.onnx   Identity x [N] -> y [N]
  dispatch_gather.onnx     Gather(features [B,C,N], idx int64 [M], axis 2) -> out [B,C,M], the work of
                           PVN3D_GatherPoints (gather_points.onnx) at B = 1
Deterministic; needs only the onnx package.

Usage:  /usr/bin/python3 benchmarks/scripts/make_bench_models.py [--out DIR]
"""
import argparse
import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "src", "main", "resources", "bench-models")
DOMAIN = "ai.onnx.contrib"
F, I64 = TensorProto.FLOAT, TensorProto.INT64

NPOINTS = [2048, 4096]
# PVN3D's mean-shift attributes (KernelCase.BANDWIDTH, MAX_ITER, CENTER_FILTER)
POSE_ATTRS = {"bandwidth": 0.08, "max_iter": 300, "center_filter": 1}
BALLS = [("0.0175", 16), ("0.025", 32)]


def model(op, inputs, outputs, attrs, name):
    node = helper.make_node("PVN3D_" + op, [n for n, _, _ in inputs], [n for n, _, _ in outputs],
                            name=name, domain=DOMAIN, **attrs)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)],
                          producer_name="pvn3d-bench", producer_version="1")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def plain_model(node, inputs, outputs, name, opsets):
    g = helper.make_graph([node], name, [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="pvn3d-bench", producer_version="1")
    m.ir_version = 8
    if all(d == "" for d, _ in opsets):
        onnx.checker.check_model(m)
    return m


def dispatch_models():
    yield "dispatch_java_nop", plain_model(
        helper.make_node("JavaNop", ["x"], ["y"], name="java_nop", domain="bench.java"),
        [("x", F, ["N"])], [("y", F, ["N"])], "java_nop", [("", 17), ("bench.java", 1)])
    yield "dispatch_identity", plain_model(
        helper.make_node("Identity", ["x"], ["y"], name="identity"),
        [("x", F, ["N"])], [("y", F, ["N"])], "identity", [("", 17)])
    yield "dispatch_gather", plain_model(
        helper.make_node("Gather", ["features", "idx"], ["out"], name="gather", axis=2),
        [("features", F, ["B", "C", "N"]), ("idx", I64, ["M"])], [("out", F, ["B", "C", "M"])], "gather",
        [("", 17)])


def models():
    for np_ in NPOINTS:
        yield "furthest_point_sample_np%d" % np_, model(
            "FurthestPointSample", [("xyz", F, ["B", "N", 3])], [("idx", I64, ["B", np_])],
            {"npoint": np_}, "furthest_point_sample")
    for r, s in BALLS:
        yield "ball_query_r%s_s%d" % (r, s), model(
            "BallQuery", [("xyz", F, ["B", "N", 3]), ("new_xyz", F, ["B", "M", 3])],
            [("idx", I64, ["B", "M", s])], {"radius": float(r), "nsample": s}, "ball_query")
    yield "gather_points", model(
        "GatherPoints", [("features", F, ["B", "C", "N"]), ("idx", I64, ["B", "M"])],
        [("out", F, ["B", "C", "M"])], {}, "gather_points")
    yield "group_points", model(
        "GroupPoints", [("features", F, ["B", "C", "N"]), ("idx", I64, ["B", "M", "S"])],
        [("out", F, ["B", "C", "M", "S"])], {}, "group_points")
    yield "three_nn", model(
        "ThreeNN", [("unknown", F, ["B", "n", 3]), ("known", F, ["B", "m", 3])],
        [("dist2", F, ["B", "n", 3]), ("idx", I64, ["B", "n", 3])], {}, "three_nn")
    yield "three_interpolate", model(
        "ThreeInterpolate", [("features", F, ["B", "C", "m"]), ("idx", I64, ["B", "n", 3]),
                             ("weight", F, ["B", "n", 3])],
        [("out", F, ["B", "C", "n"])], {}, "three_interpolate")
    votes = [("votes", F, ["B", "K", "N", 3]), ("mask", F, ["B", "N"])]
    kps_inliers = [("kps", F, ["B", "K", 3]), ("inliers", I64, ["B"])]
    yield "vote_aggregate", model("VoteAggregate", votes, kps_inliers, POSE_ATTRS, "vote_aggregate")
    yield "pose_solve", model(
        "PoseSolve", votes + [("model_kps", F, ["K", 3])],
        [("R", F, ["B", 3, 3]), ("t", F, ["B", 3])] + kps_inliers, POSE_ATTRS, "pose_solve")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, m in list(models()) + list(dispatch_models()):
        path = os.path.join(a.out, name + ".onnx")
        onnx.save(m, path)
        print("wrote", os.path.relpath(path))


if __name__ == "__main__":
    main()
