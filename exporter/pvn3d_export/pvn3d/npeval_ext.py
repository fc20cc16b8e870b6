"""A numpy evaluator for the exported PVN3D graph (no onnxruntime for Python here).

Extends the idea of pvn3d_export.npeval (which it leaves untouched) to every op the full PVN3D
export uses: general Conv (kernel, stride, padding, dilation, group), MaxPool, Resize (linear,
align_corners / half_pixel / pytorch_half_pixel / asymmetric), MatMul, PRelu, GatherElements,
Tile, Expand, Shape/Gather/Slice/Reshape/Squeeze/Unsqueeze/Cast/ConstantOfShape, reductions,
elementwise ops, and the ai.onnx.contrib PVN3D_* nodes through the reference implementations of
pvn3d_export.ops (and pvn3d_export.pvn3d.pose for PVN3D_PoseSolve). Convolutions and matrix
products accumulate in float64 and round to float32 once.
"""
import numpy as np
from onnx import helper, numpy_helper

from .. import ops


def _np_dtype(code):
    """numpy dtype of an ONNX element type (onnx 1.12: mapping; onnx >= 1.13: helper)."""
    if hasattr(helper, "tensor_dtype_to_np_dtype"):
        return np.dtype(helper.tensor_dtype_to_np_dtype(code))
    from onnx import mapping
    return np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[code])


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _pads(a, nd):
    p = list(a.get("pads", [0] * (2 * nd)))
    return p[:nd], p[nd:]


def conv(x, w, b, a):
    nd = x.ndim - 2
    k = w.shape[2:]
    s = list(a.get("strides", [1] * nd))
    d = list(a.get("dilations", [1] * nd))
    g = int(a.get("group", 1))
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("auto_pad")
    lo, hi = _pads(a, nd)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(lo, hi)))
    out_sz = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    B, C = x.shape[:2]
    O = w.shape[0]
    cg, og = C // g, O // g
    w64 = w.astype(np.float64)
    y = np.zeros((B, O) + tuple(out_sz), np.float64)
    for tap in np.ndindex(*k):
        sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (out_sz[i] - 1) + 1, s[i])
                   for i in range(nd))
        xs = xp[(slice(None), slice(None)) + sl]
        for gi in range(g):
            wt = w64[(slice(gi * og, (gi + 1) * og), slice(None)) + tap]  # [og, cg]
            y[:, gi * og:(gi + 1) * og] += np.tensordot(wt, xs[:, gi * cg:(gi + 1) * cg],
                                                        axes=([1], [1])).swapaxes(0, 1)
    if b is not None:
        y += b.astype(np.float64).reshape((1, -1) + (1,) * nd)
    return y.astype(np.float32)


def maxpool(x, a):
    nd = x.ndim - 2
    k = a["kernel_shape"]
    s = list(a.get("strides", [1] * nd))
    d = list(a.get("dilations", [1] * nd))
    if a.get("ceil_mode", 0):
        raise NotImplementedError("ceil_mode")
    lo, hi = _pads(a, nd)
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(lo, hi)), constant_values=-np.inf)
    out_sz = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    y = None
    for tap in np.ndindex(*k):
        sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (out_sz[i] - 1) + 1, s[i])
                   for i in range(nd))
        v = xp[(slice(None), slice(None)) + sl]
        y = v if y is None else np.maximum(y, v)
    return y.astype(x.dtype)


def _linear_matrix(n_out, n_in, scale, mode):
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        if mode == "align_corners":
            src = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        elif mode == "asymmetric":
            src = i / scale
        elif mode in ("half_pixel", "pytorch_half_pixel"):
            src = 0.0 if (mode == "pytorch_half_pixel" and n_out == 1) else (i + 0.5) / scale - 0.5
        else:
            raise NotImplementedError("Resize coordinate_transformation_mode " + mode)
        src = min(max(src, 0.0), n_in - 1)
        i0 = int(np.floor(src))
        i1 = min(i0 + 1, n_in - 1)
        f = src - i0
        m[i, i0] += 1 - f
        m[i, i1] += f
    return m


def resize(x, scales, sizes, a):
    mode = a.get("mode", b"nearest")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    ctm = a.get("coordinate_transformation_mode", b"half_pixel")
    ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
    if mode != "linear":
        raise NotImplementedError("Resize mode " + mode)
    if sizes is not None and sizes.size:
        out = [int(v) for v in sizes]
        sc = [o / i for o, i in zip(out, x.shape)]
    else:
        sc = [float(v) for v in scales]
        out = [int(np.floor(i * s)) for i, s in zip(x.shape, sc)]
    y = x.astype(np.float64)
    for ax in range(x.ndim):
        if out[ax] == x.shape[ax] and sc[ax] == 1:
            continue
        if ax < 2:
            raise NotImplementedError("Resize over batch/channel axes")
        m = _linear_matrix(out[ax], x.shape[ax], sc[ax], ctm)
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, ax, 0), axes=([1], [0])), 0, ax)
    return y.astype(np.float32)


def _ints(v):
    return [int(t) for t in np.asarray(v).reshape(-1)]


def _reshape(x, shape):
    shape = _ints(shape)
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _slice(x, starts, ends, axes, steps):
    axes = _ints(axes) if axes is not None else list(range(len(_ints(starts))))
    steps = _ints(steps) if steps is not None else [1] * len(axes)
    sl = [slice(None)] * x.ndim
    for st, en, ax, sp in zip(_ints(starts), _ints(ends), axes, steps):
        sl[ax] = slice(st, en, sp)
    return x[tuple(sl)]


def _reduce(fn, x, axes, keep):
    axes = tuple(range(x.ndim)) if axes is None else tuple(int(v) for v in np.asarray(axes).ravel())
    return fn(x, axis=axes, keepdims=bool(keep)).astype(x.dtype)


def _custom(node, x, a):
    name = node.op_type[len("PVN3D_"):]
    if name in ops.REFS:
        return list(ops.run_reference(name, x, a).values())
    from . import pose
    return pose.run_reference(name, x, a)


BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
          "Equal": np.equal, "Less": np.less, "Greater": np.greater, "Pow": np.power}


def run(model, feeds, keep_all=True):
    """Evaluate every node in order; returns a dict of values by name (all values, or only the
    graph outputs with keep_all=False)."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update({k: np.asarray(v) for k, v in feeds.items()})
    for n in model.graph.node:
        a = _attrs(n)
        x = [env[i] if i else None for i in n.input]
        t = n.op_type
        if n.domain == ops.DOMAIN:
            out = _custom(n, x, a)
        elif t == "Constant":
            out = [numpy_helper.to_array(a["value"])]
        elif t == "Identity":
            out = [x[0]]
        elif t in BINARY:
            r = BINARY[t](x[0], x[1])
            out = [r if r.dtype == np.bool_ else r.astype(x[0].dtype)]
        elif t == "Where":
            out = [np.where(x[0], x[1], x[2])]
        elif t == "Sqrt":
            out = [np.sqrt(x[0])]
        elif t == "Reciprocal":
            out = [(np.float32(1) / x[0]).astype(x[0].dtype)]
        elif t == "Relu":
            out = [np.maximum(x[0], 0).astype(x[0].dtype)]
        elif t == "PRelu":
            out = [np.where(x[0] < 0, x[0] * x[1], x[0]).astype(x[0].dtype)]
        elif t == "Neg":
            out = [-x[0]]
        elif t == "Conv":
            out = [conv(x[0], x[1], x[2] if len(x) > 2 else None, a)]
        elif t == "MaxPool":
            out = [maxpool(x[0], a)]
        elif t == "MatMul":
            out = [np.matmul(x[0].astype(np.float64), x[1].astype(np.float64)).astype(np.float32)]
        elif t == "Resize":
            out = [resize(x[0], x[2] if len(x) > 2 else None, x[3] if len(x) > 3 else None, a)]
        elif t == "Concat":
            out = [np.concatenate(x, axis=a["axis"])]
        elif t == "Transpose":
            out = [np.transpose(x[0], a.get("perm"))]
        elif t == "Reshape":
            out = [_reshape(x[0], x[1])]
        elif t == "Flatten":
            ax = a.get("axis", 1)
            out = [x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)]
        elif t == "Unsqueeze":
            out = [np.expand_dims(x[0], tuple(_ints(x[1])))]
        elif t == "Squeeze":
            out = [np.squeeze(x[0], tuple(_ints(x[1]))) if len(x) > 1 else np.squeeze(x[0])]
        elif t == "Shape":
            s = np.array(x[0].shape, np.int64)
            out = [s[a.get("start", 0):a.get("end", len(s))]]
        elif t == "Gather":
            out = [np.take(x[0], x[1], axis=a.get("axis", 0))]
        elif t == "GatherElements":
            out = [np.take_along_axis(x[0], x[1], axis=a.get("axis", 0))]
        elif t == "Slice":
            out = [_slice(x[0], x[1], x[2], x[3] if len(x) > 3 else None,
                          x[4] if len(x) > 4 else None)]
        elif t == "Cast":
            out = [x[0].astype(_np_dtype(a["to"]))]
        elif t == "ConstantOfShape":
            v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
            out = [np.full(_ints(x[0]), v.reshape(-1)[0], v.dtype)]
        elif t == "Expand":
            shp = np.broadcast_shapes(x[0].shape, tuple(_ints(x[1])))
            out = [np.broadcast_to(x[0], shp).copy()]
        elif t == "Tile":
            out = [np.tile(x[0], _ints(x[1]))]
        elif t == "ReduceMax":
            out = [_reduce(np.max, x[0], a.get("axes", x[1] if len(x) > 1 else None),
                           a.get("keepdims", 1))]
        elif t == "ReduceMean":
            out = [_reduce(np.mean, x[0], a.get("axes", x[1] if len(x) > 1 else None),
                           a.get("keepdims", 1))]
        elif t == "ReduceSum":
            out = [_reduce(np.sum, x[0], x[1] if len(x) > 1 else a.get("axes"),
                           a.get("keepdims", 1))]
        elif t == "ArgMax":
            r = np.argmax(x[0], axis=a.get("axis", 0))
            out = [np.expand_dims(r, a.get("axis", 0)) if a.get("keepdims", 1) else r]
        else:
            raise NotImplementedError("npeval_ext: op %s" % t)
        for name, v in zip(n.output, out):
            env[name] = v
    if keep_all:
        return env
    return {o.name: env[o.name] for o in model.graph.output}
