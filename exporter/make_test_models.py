#!/usr/bin/env -S /usr/bin/python3
"""Write the foundation test models into runtime/src/test/resources/models/.

Every model is built with the onnx helper API at opset 17 and IR version 8, so that
ONNX Runtime 1.16 loads it. The output is deterministic: running the script twice gives
byte-identical files.

Usage:  /usr/bin/python3 exporter/make_test_models.py [--out DIR]
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(REPO, "runtime", "src", "test", "resources", "models")

OPSET = 17
IR_VERSION = 8
PRODUCER = "pvn3d-export"

# file suffix -> ONNX element type
IDENTITY_TYPES = [
    ("float", TensorProto.FLOAT),
    ("double", TensorProto.DOUBLE),
    ("float16", TensorProto.FLOAT16),
    ("bfloat16", TensorProto.BFLOAT16),
    ("int8", TensorProto.INT8),
    ("int16", TensorProto.INT16),
    ("int32", TensorProto.INT32),
    ("int64", TensorProto.INT64),
    ("uint8", TensorProto.UINT8),
    ("uint16", TensorProto.UINT16),
    ("uint32", TensorProto.UINT32),
    ("uint64", TensorProto.UINT64),
    ("bool", TensorProto.BOOL),
    ("string", TensorProto.STRING),
]


def make_model(graph, opsets=None, check=True):
    if opsets is None:
        opsets = [helper.make_opsetid("", OPSET)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name=PRODUCER,
                              producer_version="1")
    model.ir_version = IR_VERSION
    if check:
        onnx.checker.check_model(model)
    return model


def save(model, out, name):
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


def arith():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", 4])
            for n in ("sum", "prod", "affine")]
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    nodes = [
        helper.make_node("Add", ["x", "y"], ["sum"], name="add"),
        helper.make_node("Mul", ["x", "y"], ["prod"], name="mul"),
        helper.make_node("Mul", ["x", "two"], ["x2"], name="scale"),
        helper.make_node("Add", ["x2", "one"], ["affine"], name="shift"),
    ]
    g = helper.make_graph(nodes, "arith", [x, y], outs, initializer=[two, one])
    return make_model(g)


def identity(suffix, elem):
    i = helper.make_tensor_value_info("input", elem, ["rows", "cols"])
    o = helper.make_tensor_value_info("output", elem, ["rows", "cols"])
    g = helper.make_graph([helper.make_node("Identity", ["input"], ["output"], name="identity")],
                          "identity_" + suffix, [i], [o])
    return make_model(g)


def add16():
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [16])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [16])
    c = helper.make_tensor_value_info("c", TensorProto.FLOAT, [16])
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"], name="add")],
                          "add16", [a, b], [c])
    return make_model(g)


def unknown_op():
    # A well-formed protobuf whose node type exists in no domain ORT knows:
    # session creation fails ("Could not find an implementation / not a registered op").
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    node = helper.make_node("NoSuchOperator", ["x"], ["y"], name="mystery",
                            domain="com.example.unknown")
    g = helper.make_graph([node], "unknown_op", [x], [y])
    return make_model(g, opsets=[helper.make_opsetid("", OPSET),
                                 helper.make_opsetid("com.example.unknown", 1)])


def contrib_strings():
    # Two string operators of onnxruntime-extensions (domain ai.onnx.contrib), for the test that
    # registers that native library: text -> StringUpper -> upper, text -> StringLength -> length.
    text = helper.make_tensor_value_info("text", TensorProto.STRING, ["n"])
    upper = helper.make_tensor_value_info("upper", TensorProto.STRING, ["n"])
    length = helper.make_tensor_value_info("length", TensorProto.INT64, ["n"])
    nodes = [
        helper.make_node("StringUpper", ["text"], ["upper"], name="upper", domain="ai.onnx.contrib"),
        helper.make_node("StringLength", ["text"], ["length"], name="length", domain="ai.onnx.contrib"),
    ]
    g = helper.make_graph(nodes, "contrib_strings", [text], [upper, length])
    return make_model(g, opsets=[helper.make_opsetid("", OPSET),
                                 helper.make_opsetid("ai.onnx.contrib", 1)])


def matmul_chain():
    rng = np.random.RandomState(20240601)
    w1 = (rng.standard_normal((64, 64)) / 8.0).astype(np.float32)
    w2 = (rng.standard_normal((64, 8)) / 8.0).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="matmul1"),
        helper.make_node("Relu", ["h"], ["hr"], name="relu"),
        helper.make_node("MatMul", ["hr", "w2"], ["y"], name="matmul2"),
    ]
    g = helper.make_graph(nodes, "matmul_chain", [x], [y],
                          initializer=[numpy_helper.from_array(w1, "w1"),
                                       numpy_helper.from_array(w2, "w2")])
    model = make_model(g)
    inp = rng.uniform(-1.0, 1.0, (3, 64)).astype(np.float32)
    h = np.maximum(inp @ w1, np.float32(0)).astype(np.float32)
    out = (h @ w2).astype(np.float32)
    expected = {
        "comment": "matmul_chain.onnx: y = relu(x @ w1) @ w2, computed in numpy float32; "
                   "compare with a tolerance (summation order differs between BLAS "
                   "implementations), e.g. 1e-5 absolute",
        "input": [[float(v) for v in row] for row in inp],
        "output": [[float(v) for v in row] for row in out],
    }
    return model, expected


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    save(arith(), args.out, "arith.onnx")
    for suffix, elem in IDENTITY_TYPES:
        save(identity(suffix, elem), args.out, "identity_%s.onnx" % suffix)
    save(add16(), args.out, "add16.onnx")
    save(unknown_op(), args.out, "unknown_op.onnx")
    save(contrib_strings(), args.out, "contrib_strings.onnx")
    garbage = os.path.join(args.out, "not_a_model.onnx")
    with open(garbage, "wb") as f:
        # not a protobuf: an invalid wire type right at the start
        f.write(b"\xff\xffthis is not an ONNX model\x00\x01\x02\n")
    print("wrote %s (%d bytes)" % (garbage, os.path.getsize(garbage)))
    model, expected = matmul_chain()
    save(model, args.out, "matmul_chain.onnx")
    jpath = os.path.join(args.out, "matmul_chain_expected.json")
    with open(jpath, "w") as f:
        # one matrix row per line; floats are the exact float32 values (repr round-trips)
        f.write("{\n \"comment\": %s,\n" % json.dumps(expected["comment"]))
        for key in ("input", "output"):
            rows = ",\n  ".join(json.dumps(r) for r in expected[key])
            f.write(" \"%s\": [\n  %s\n ]%s\n" % (key, rows, "," if key == "input" else ""))
        f.write("}\n")
    print("wrote %s (%d bytes)" % (jpath, os.path.getsize(jpath)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
