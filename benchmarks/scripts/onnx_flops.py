#!/usr/bin/env python3
"""Multiply-add work of an ONNX model's Conv, ConvTranspose, Gemm and MatMul nodes, from ONNX shape
inference (no runtime needed): the total, the share per part of the network (by the node name's first
path segment) and the largest nodes, and the time those FLOPs need at a given throughput. It answers
how far a latency target is from the arithmetic floor.

    python3 benchmarks/scripts/onnx_flops.py MODEL.onnx [--top 15] [--tflops 67,494,989]

FLOPs are 2 x multiply-adds. --tflops lists throughputs (TFLOP/s) to turn the total into milliseconds,
e.g. an H200's dense peaks: 67 (fp32 on CUDA cores), 494 (TF32 tensor cores), 989 (fp16 tensor cores).
Symbolic dimensions of the graph inputs are taken as --batch (default 1). The PVN3D operators' output
shapes (spec/ops.md) are filled in between rounds of ONNX shape inference, so that what follows them is
counted; their own work is not counted.
"""
import argparse
import collections
import sys

import onnx
from onnx import shape_inference


def dims(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    out = []
    for d in t.shape.dim:
        if not d.HasField("dim_value"):
            return None
        out.append(d.dim_value)
    return out


def pvn3d_output_shapes(node, shapes):
    """Output shapes of a PVN3D operator from its input shapes (spec/ops.md), or None if unknown."""
    ins = [shapes.get(i) for i in node.input]
    if any(x is None for x in ins):
        return None
    attr = {a.name: a for a in node.attribute}
    op = node.op_type
    if op == "PVN3D_FurthestPointSample":
        return [[ins[0][0], attr["npoint"].i]]
    if op == "PVN3D_GatherPoints":
        return [[ins[0][0], ins[0][1], ins[1][1]]]
    if op == "PVN3D_BallQuery":
        return [[ins[1][0], ins[1][1], attr["nsample"].i]]
    if op == "PVN3D_GroupPoints":
        return [[ins[0][0], ins[0][1], ins[1][1], ins[1][2]]]
    if op == "PVN3D_ThreeNN":
        return [[ins[0][0], ins[0][1], 3]] * 2
    if op == "PVN3D_ThreeInterpolate":
        return [[ins[0][0], ins[0][1], ins[1][1]]]
    return None


def infer(model, batch):
    """ONNX shape inference with the PVN3D operators' shapes added until nothing changes; name -> dims."""
    for vi in model.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if not d.HasField("dim_value"):
                d.dim_value = batch
    while True:
        inferred = shape_inference.infer_shapes(model, strict_mode=False)
        g = inferred.graph
        shapes = {}
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            d = dims(vi)
            if d is not None:
                shapes[vi.name] = d
        for init in g.initializer:
            shapes[init.name] = list(init.dims)
        added = 0
        for n in g.node:
            if not n.op_type.startswith("PVN3D_") or all(o in shapes for o in n.output):
                continue
            outs = pvn3d_output_shapes(n, shapes)
            if outs is None:
                continue
            for name, shape in zip(n.output, outs):
                if name and name not in shapes:
                    float_out = n.op_type in ("PVN3D_GatherPoints", "PVN3D_GroupPoints", "PVN3D_ThreeInterpolate") or (
                        n.op_type == "PVN3D_ThreeNN" and name == n.output[0])
                    t = onnx.TensorProto.FLOAT if float_out else onnx.TensorProto.INT64
                    model.graph.value_info.append(onnx.helper.make_tensor_value_info(name, t, shape))
                    added += 1
        if added == 0:
            return g, shapes


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--tflops", default="67,494,989")
    ap.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    g, shapes = infer(onnx.load(a.model), a.batch)

    rows, unknown = [], []
    for n in g.node:
        if n.domain not in ("", "ai.onnx") or n.op_type not in ("Conv", "ConvTranspose", "Gemm", "MatMul"):
            continue
        try:
            if n.op_type in ("Conv", "ConvTranspose"):
                # Conv: each output element takes (C_in / group) x kernel multiply-adds, prod(w[1:]);
                # ConvTranspose: each input element feeds (C_out / group) x kernel outputs, prod(w[1:]) too
                w = shapes[n.input[1]]
                per = shapes[n.output[0]] if n.op_type == "Conv" else shapes[n.input[0]]
                macs = prod(per) * prod(w[1:])
            elif n.op_type == "Gemm":
                x, y = shapes[n.input[0]], shapes[n.output[0]]
                trans_a = next((at.i for at in n.attribute if at.name == "transA"), 0)
                k = x[0] if trans_a else x[1]
                macs = prod(y) * k
            else:
                x, y = shapes[n.input[0]], shapes[n.output[0]]
                macs = prod(y) * x[-1]
        except (KeyError, IndexError):
            unknown.append(n.name or n.op_type)
            continue
        rows.append((2 * macs, n.op_type, n.name or n.output[0]))

    total = sum(r[0] for r in rows)
    print(f"{a.model}: {len(rows)} nodes counted, {total / 1e9:.1f} GFLOP"
          + (f" ({len(unknown)} without shapes: {', '.join(unknown[:5])})" if unknown else ""))
    for t in a.tflops.split(","):
        t = float(t)
        print(f"  at {t:g} TFLOP/s: {total / (t * 1e12) * 1e3:.2f} ms")
    parts = collections.Counter()
    for f, _, name in rows:
        seg = name.strip("/").split("/")[0] if "/" in name else name
        parts[seg] += f
    print("by part:")
    for seg, f in parts.most_common():
        print(f"  {seg:40s} {f / 1e9:8.2f} GFLOP  {100 * f / max(total, 1):5.1f}%")
    print(f"largest {a.top} nodes:")
    for f, op, name in sorted(rows, reverse=True)[:a.top]:
        print(f"  {f / 1e9:8.2f} GFLOP  {op:14s} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
