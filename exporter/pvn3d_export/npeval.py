"""A minimal numpy evaluator for the exported PointNet++ graphs (no onnxruntime needed).

It knows just the standard ops torch.onnx.export emits for pvn3d_export.pointnet2 (1x1 Conv,
Relu, ReduceMax, ReduceSum, Concat, Transpose, Unsqueeze, elementwise arithmetic, Sqrt,
Reciprocal, Constant, Identity) plus the six ai.onnx.contrib PVN3D_* nodes (through the reference
of pvn3d_export.ops). Used to check that a committed ONNX file computes what the PyTorch model
computes, for any batch and point count.
"""
import numpy as np
from onnx import helper, numpy_helper

from . import ops


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _conv(x, w, b, a):
    if any(k != 1 for k in w.shape[2:]) or a.get("group", 1) != 1:
        raise NotImplementedError("only 1x1 convolutions, group 1")
    if any(s != 1 for s in a.get("strides", [1])) or any(p for p in a.get("pads", [0])):
        raise NotImplementedError("only stride 1, no padding")
    w2 = w.reshape(w.shape[0], w.shape[1])
    y = np.einsum("oc,bc...->bo...", w2, x, optimize=True).astype(np.float32)
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * (x.ndim - 2))
    return y.astype(np.float32)


def run(model, feeds):
    """Evaluate every node in order; returns a dict of all values by name."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update(feeds)
    for n in model.graph.node:
        a = _attrs(n)
        x = [env[i] if i else None for i in n.input]
        t = n.op_type
        if n.domain == ops.DOMAIN:
            name = t[len("PVN3D_"):]
            res = ops.run_reference(name, x, a)
            out = list(res.values())
        elif t == "Constant":
            out = [numpy_helper.to_array(a["value"])]
        elif t == "Identity":
            out = [x[0]]
        elif t == "Transpose":
            out = [np.transpose(x[0], a["perm"])]
        elif t == "Unsqueeze":
            out = [np.expand_dims(x[0], tuple(int(v) for v in x[1]))]
        elif t in ("Add", "Sub", "Mul", "Div"):
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[t]
            out = [f(x[0], x[1]).astype(x[0].dtype)]
        elif t == "Sqrt":
            out = [np.sqrt(x[0])]
        elif t == "Reciprocal":
            out = [(np.float32(1) / x[0]).astype(x[0].dtype)]
        elif t == "Relu":
            out = [np.maximum(x[0], 0).astype(x[0].dtype)]
        elif t == "Concat":
            out = [np.concatenate(x, axis=a["axis"])]
        elif t == "ReduceMax":
            out = [np.max(x[0], axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))]
        elif t == "ReduceSum":
            out = [np.sum(x[0], axis=tuple(int(v) for v in x[1]),
                          keepdims=bool(a.get("keepdims", 1))).astype(x[0].dtype)]
        elif t == "Conv":
            out = [_conv(x[0], x[1], x[2] if len(x) > 2 else None, a)]
        else:
            raise NotImplementedError(t)
        for name, v in zip(n.output, out):
            env[name] = v
    return env
