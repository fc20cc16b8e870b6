"""The six PointNet++ operators of spec/ops.md: plain-PyTorch reference and ONNX symbolics.

Every operator has
  * ``<snake>_ref(...)``: the reference forward in plain PyTorch (CPU or GPU tensors). Exactness
    comes first: squared distances are computed elementwise as ``d = dx*dx; d = d + dy*dy;
    d = d + dz*dz`` in float32 (separate tensor ops, so no fused multiply-add and no cdist/matmul
    shortcuts), so the selected indices match the native kernels bit for bit;
  * a ``torch.autograd.Function`` (``FurthestPointSample`` ...) whose forward is that reference
    and whose ``symbolic`` emits the ``ai.onnx.contrib::PVN3D_<Name>`` node with its attributes;
  * a functional alias (``furthest_point_sample(xyz, npoint)`` ...) for use in models; it runs the
    reference Function, or libpvn3d_ops (``native_ops``, trainable) after
    ``use_backend("native")``; tracing for export always takes the reference Function.

``run_reference(op_name, inputs, attrs)`` runs an operator on numpy arrays (for fixtures).

Export with ``torch.onnx.export(..., opset_version=17, custom_opsets={DOMAIN: 1})``.

Notes on the exact rules (spec/ops.md is authoritative):
  * FPS padding test: a point is padding when its float32 squared norm ``x*x + y*y + z*z``
    (left to right) is ``<= 1e-3`` compared in double precision, as C's ``mag <= 1e-3``.
    (This differs from comparing with ``1e-3f`` only when the norm is exactly
    float32(1e-3).) The running distance starts at 1e10 (as float32) and is updated for every
    point; only candidates (non-padding points) can be picked after the first step.
  * BallQuery: ``r2 = float32(radius) * float32(radius)`` in float32, hit when ``d2 < r2``.
  * ThreeNN: result equals a stable ascending sort of the distances by (d2, index).
"""
import inspect

import numpy as np
import torch

DOMAIN = "ai.onnx.contrib"
OPSET = 1

OP_NAMES = ["FurthestPointSample", "GatherPoints", "BallQuery", "GroupPoints", "ThreeNN",
            "ThreeInterpolate"]
OP_SNAKE = {
    "FurthestPointSample": "furthest_point_sample",
    "GatherPoints": "gather_points",
    "BallQuery": "ball_query",
    "GroupPoints": "group_points",
    "ThreeNN": "three_nn",
    "ThreeInterpolate": "three_interpolate",
}

PAD_NORM2 = 1e-3
FPS_INIT = 1e10


class OpError(ValueError):
    """A bad input as listed under "error" in spec/ops.md."""


def onnx_export(model, args, f, **kw):
    """torch.onnx.export with the TorchScript exporter these graphs are written for (the custom nodes come
    from symbolic functions): torch >= 2.5 defaults to the dynamo exporter, which knows none of them and
    spends minutes failing to trace the operators' Python fallbacks before it gives up."""
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw.setdefault("dynamo", False)
    torch.onnx.export(model, args, f, **kw)


def _check(cond, op, msg):
    if not cond:
        raise OpError("PVN3D_%s: %s" % (op, msg))


def _sqdist(a, b):
    """Squared distances between broadcastable [..., 3] tensors, float32, left to right."""
    dx = a[..., 0] - b[..., 0]
    dy = a[..., 1] - b[..., 1]
    dz = a[..., 2] - b[..., 2]
    d = dx * dx
    d = d + dy * dy
    d = d + dz * dz
    return d


def _first_index_where(mask, dim):
    """Index of the first True along dim, and whether any is True. mask: bool tensor."""
    n = mask.shape[dim]
    shape = [1] * mask.dim()
    shape[dim] = n
    ar = torch.arange(n, device=mask.device, dtype=torch.int64).view(shape)
    big = torch.full_like(ar, n)
    first = torch.where(mask, ar, big).amin(dim=dim)
    anyhit = first < n
    return torch.where(anyhit, first, torch.zeros_like(first)), anyhit


# ---------------------------------------------------------------------------------------------
# Reference forwards


def furthest_point_sample_ref(xyz, npoint):
    """xyz [B,N,3] float32 -> idx int64 [B,npoint]."""
    op = "FurthestPointSample"
    _check(xyz.dim() == 3 and xyz.shape[2] == 3, op, "input xyz must be [B,N,3], got %s"
           % (tuple(xyz.shape),))
    _check(xyz.dtype == torch.float32, op, "input xyz must be float32, got %s" % xyz.dtype)
    npoint = int(npoint)
    _check(npoint >= 1, op, "attribute npoint must be >= 1, got %d" % npoint)
    B, N, _ = xyz.shape
    _check(npoint <= N, op, "attribute npoint=%d > N=%d of input xyz" % (npoint, N))
    x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    mag = x * x
    mag = mag + y * y
    mag = mag + z * z
    cand = mag.double() > PAD_NORM2  # [B,N]
    dist = torch.full((B, N), FPS_INIT, dtype=torch.float32, device=xyz.device)
    idx = torch.zeros((B, npoint), dtype=torch.int64, device=xyz.device)
    bidx = torch.arange(B, device=xyz.device)
    last = torch.zeros(B, dtype=torch.int64, device=xyz.device)
    neg = torch.tensor(-1.0, dtype=torch.float32, device=xyz.device)
    for i in range(1, npoint):
        p = xyz[bidx, last]  # [B,3]
        d = _sqdist(xyz, p.unsqueeze(1))  # [B,N]
        dist = torch.minimum(dist, d)
        masked = torch.where(cand, dist, neg)
        best = masked.amax(dim=1, keepdim=True)
        hit = cand & (masked == best)
        first, anyhit = _first_index_where(hit, 1)
        last = torch.where(anyhit, first, torch.zeros_like(first))
        idx[:, i] = last
    return idx


def _check_index(idx, n, op, name):
    if idx.numel() == 0:
        return
    lo = int(idx.min())
    hi = int(idx.max())
    _check(lo >= 0 and hi < n, op, "input %s holds index %d outside [0,%d)"
           % (name, lo if lo < 0 else hi, n))


def gather_points_ref(features, idx):
    """features [B,C,N], idx int64 [B,M] -> [B,C,M]."""
    op = "GatherPoints"
    _check(features.dim() == 3, op, "input features must be [B,C,N]")
    _check(idx.dim() == 2 and idx.shape[0] == features.shape[0], op, "input idx must be [B,M]")
    _check(idx.dtype == torch.int64, op, "input idx must be int64")
    B, C, N = features.shape
    _check_index(idx, N, op, "idx")
    M = idx.shape[1]
    return torch.gather(features, 2, idx.view(B, 1, M).expand(B, C, M))


def ball_query_ref(xyz, new_xyz, radius, nsample):
    """xyz [B,N,3], new_xyz [B,M,3] -> idx int64 [B,M,nsample]."""
    op = "BallQuery"
    _check(xyz.dim() == 3 and xyz.shape[2] == 3, op, "input xyz must be [B,N,3]")
    _check(new_xyz.dim() == 3 and new_xyz.shape[2] == 3 and new_xyz.shape[0] == xyz.shape[0],
           op, "input new_xyz must be [B,M,3]")
    nsample = int(nsample)
    _check(nsample >= 1, op, "attribute nsample must be >= 1, got %d" % nsample)
    r = np.float32(radius)
    _check(r > 0, op, "attribute radius must be > 0, got %r" % float(radius))
    r2 = float(np.float32(r * r))
    B, N, _ = xyz.shape
    M = new_xyz.shape[1]
    out = torch.zeros((B, M, nsample), dtype=torch.int64, device=xyz.device)
    if N == 0 or M == 0:
        return out
    d2 = _sqdist(xyz.unsqueeze(1), new_xyz.unsqueeze(2))  # [B,M,N]
    hit = d2 < torch.tensor(r2, dtype=torch.float32, device=xyz.device)
    ar = torch.arange(N, dtype=torch.int64, device=xyz.device).view(1, 1, N)
    key = torch.where(hit, ar, torch.full_like(ar, N))  # non-hits sort last
    k = min(nsample, N)
    order = torch.sort(key, dim=2).values[..., :k]  # first k hits in index order, then N
    nhit = hit.sum(dim=2, keepdim=True)  # [B,M,1]
    first = torch.where(nhit > 0, order[..., :1], torch.zeros_like(order[..., :1]))
    out[:] = first  # first hit fills every slot (or 0 when none)
    slots = torch.arange(k, device=xyz.device).view(1, 1, k)
    out[..., :k] = torch.where(slots < nhit, order, first.expand(B, M, k))
    return out


def group_points_ref(features, idx):
    """features [B,C,N], idx int64 [B,M,S] -> [B,C,M,S]."""
    op = "GroupPoints"
    _check(features.dim() == 3, op, "input features must be [B,C,N]")
    _check(idx.dim() == 3 and idx.shape[0] == features.shape[0], op, "input idx must be [B,M,S]")
    _check(idx.dtype == torch.int64, op, "input idx must be int64")
    B, C, N = features.shape
    _check_index(idx, N, op, "idx")
    _, M, S = idx.shape
    g = torch.gather(features, 2, idx.reshape(B, 1, M * S).expand(B, C, M * S))
    return g.view(B, C, M, S)


def three_nn_ref(unknown, known):
    """unknown [B,n,3], known [B,m,3] -> (dist2 [B,n,3] float32, idx int64 [B,n,3])."""
    op = "ThreeNN"
    _check(unknown.dim() == 3 and unknown.shape[2] == 3, op, "input unknown must be [B,n,3]")
    _check(known.dim() == 3 and known.shape[2] == 3 and known.shape[0] == unknown.shape[0], op,
           "input known must be [B,m,3]")
    m = known.shape[1]
    _check(m >= 3, op, "input known has m=%d points, needs at least 3" % m)
    d2 = _sqdist(unknown.unsqueeze(2), known.unsqueeze(1))  # [B,n,m]
    vals, order = torch.sort(d2, dim=2, stable=True)
    return vals[..., :3].contiguous(), order[..., :3].contiguous()


def three_interpolate_ref(features, idx, weight):
    """features [B,C,m], idx int64 [B,n,3], weight [B,n,3] -> [B,C,n]."""
    op = "ThreeInterpolate"
    _check(features.dim() == 3, op, "input features must be [B,C,m]")
    _check(idx.dim() == 3 and idx.shape[2] == 3 and idx.shape[0] == features.shape[0], op,
           "input idx must be [B,n,3]")
    _check(weight.shape == idx.shape, op, "input weight must have the shape of idx")
    _check(idx.dtype == torch.int64, op, "input idx must be int64")
    B, C, m = features.shape
    _check_index(idx, m, op, "idx")
    n = idx.shape[1]
    out = None
    for j in range(3):
        f = torch.gather(features, 2, idx[..., j].reshape(B, 1, n).expand(B, C, n))
        t = f * weight[..., j].reshape(B, 1, n)
        out = t if out is None else out + t
    return out


# ---------------------------------------------------------------------------------------------
# autograd Functions with ONNX symbolics


def _set_type(value, like, dtype, sizes):
    """Give an exported custom-node output its element type and (partly symbolic) shape."""
    try:
        t = like.type().with_dtype(dtype).with_sizes(sizes)
        value.setType(t)
    except Exception:  # older/newer torch without with_sizes on this type: dtype only
        try:
            value.setType(like.type().with_dtype(dtype))
        except Exception:
            pass
    return value


class FurthestPointSample(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xyz, npoint):
        return furthest_point_sample_ref(xyz, npoint)

    @staticmethod
    def symbolic(g, xyz, npoint):
        out = g.op(DOMAIN + "::PVN3D_FurthestPointSample", xyz, npoint_i=int(npoint))
        return _set_type(out, xyz, torch.int64, [None, int(npoint)])


class GatherPoints(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, idx):
        return gather_points_ref(features, idx)

    @staticmethod
    def symbolic(g, features, idx):
        out = g.op(DOMAIN + "::PVN3D_GatherPoints", features, idx)
        return _set_type(out, features, torch.float32, [None, _static(features, 1), None])


class BallQuery(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xyz, new_xyz, radius, nsample):
        return ball_query_ref(xyz, new_xyz, radius, nsample)

    @staticmethod
    def symbolic(g, xyz, new_xyz, radius, nsample):
        out = g.op(DOMAIN + "::PVN3D_BallQuery", xyz, new_xyz, radius_f=float(radius),
                   nsample_i=int(nsample))
        return _set_type(out, xyz, torch.int64, [None, None, int(nsample)])


class GroupPoints(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, idx):
        return group_points_ref(features, idx)

    @staticmethod
    def symbolic(g, features, idx):
        out = g.op(DOMAIN + "::PVN3D_GroupPoints", features, idx)
        return _set_type(out, features, torch.float32,
                         [None, _static(features, 1), None, _static(idx, 2)])


class ThreeNN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, unknown, known):
        return three_nn_ref(unknown, known)

    @staticmethod
    def symbolic(g, unknown, known):
        dist2, idx = g.op(DOMAIN + "::PVN3D_ThreeNN", unknown, known, outputs=2)
        _set_type(dist2, unknown, torch.float32, [None, None, 3])
        _set_type(idx, unknown, torch.int64, [None, None, 3])
        return dist2, idx


class ThreeInterpolate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, idx, weight):
        return three_interpolate_ref(features, idx, weight)

    @staticmethod
    def symbolic(g, features, idx, weight):
        out = g.op(DOMAIN + "::PVN3D_ThreeInterpolate", features, idx, weight)
        return _set_type(out, features, torch.float32, [None, _static(features, 1), None])


def _static(v, i):
    """A dimension of an exported value when it is a fixed channel count, else None."""
    try:
        sizes = v.type().sizes()
        if sizes is not None and sizes[i] is not None:
            return int(sizes[i])
    except Exception:
        pass
    return None


# ---------------------------------------------------------------------------------------------
# functional aliases and the backend switch

BACKENDS = ("reference", "native")
_backend = "reference"


def get_backend():
    return _backend


def set_backend(name):
    """Selects what the functional aliases below run outside an export: "reference" (the autograd
    Functions above: plain PyTorch forward, ONNX symbolic, no backward) or "native" (libpvn3d_ops
    through ctypes, pvn3d_export.native_ops, with backward for GatherPoints, GroupPoints and
    ThreeInterpolate: the training path). Loads the library at once for "native" (fails early
    with native_ops.LibraryNotFound). Returns the previous backend."""
    global _backend
    if name not in BACKENDS:
        raise ValueError("backend must be one of %s, got %r" % (BACKENDS, name))
    if name == "native":
        from . import native_ops
        native_ops.library()
    prev, _backend = _backend, name
    return prev


class use_backend:
    """``with ops.use_backend("native"): ...`` runs model code on the native kernels and restores
    the previous backend on exit; a plain call ``ops.use_backend("native")`` switches for good.

    While torch traces (``torch.onnx.export``, ``torch.jit.trace``) the aliases always use the
    reference Functions, so an export emits the same ``PVN3D_*`` custom nodes (byte-identical
    ONNX) whichever backend is selected."""

    def __init__(self, name):
        self.prev = set_backend(name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_backend(self.prev)
        return False


def _native():
    """native_ops when the native backend is selected and nothing is being traced, else None."""
    if _backend != "native" or torch.jit.is_tracing() or torch.onnx.is_in_onnx_export():
        return None
    from . import native_ops
    return native_ops


def furthest_point_sample(xyz, npoint):
    n = _native()
    if n is not None:
        return n.FurthestPointSample.apply(xyz, int(npoint))
    return FurthestPointSample.apply(xyz, int(npoint))


def gather_points(features, idx):
    n = _native()
    if n is not None:
        return n.GatherPoints.apply(features, idx)
    return GatherPoints.apply(features, idx)


def ball_query(xyz, new_xyz, radius, nsample):
    n = _native()
    if n is not None:
        return n.BallQuery.apply(xyz, new_xyz, float(radius), int(nsample))
    return BallQuery.apply(xyz, new_xyz, float(radius), int(nsample))


def group_points(features, idx):
    n = _native()
    if n is not None:
        return n.GroupPoints.apply(features, idx)
    return GroupPoints.apply(features, idx)


def three_nn(unknown, known):
    n = _native()
    if n is not None:
        return n.ThreeNN.apply(unknown, known)
    return ThreeNN.apply(unknown, known)


def three_interpolate(features, idx, weight):
    n = _native()
    if n is not None:
        return n.ThreeInterpolate.apply(features, idx, weight)
    return ThreeInterpolate.apply(features, idx, weight)


# ---------------------------------------------------------------------------------------------
# numpy entry point for fixtures

REFS = {
    "FurthestPointSample": (furthest_point_sample_ref, ["xyz"], ["npoint"], ["idx"]),
    "GatherPoints": (gather_points_ref, ["features", "idx"], [], ["out"]),
    "BallQuery": (ball_query_ref, ["xyz", "new_xyz"], ["radius", "nsample"], ["idx"]),
    "GroupPoints": (group_points_ref, ["features", "idx"], [], ["out"]),
    "ThreeNN": (three_nn_ref, ["unknown", "known"], [], ["dist2", "idx"]),
    "ThreeInterpolate": (three_interpolate_ref, ["features", "idx", "weight"], [], ["out"]),
}


def run_reference(op_name, inputs, attrs=None):
    """Run one operator's reference on numpy arrays.

    op_name: "FurthestPointSample" or "PVN3D_FurthestPointSample" (or the snake-case name);
    inputs: list of arrays in the operator's input order, or a dict by input name;
    attrs: dict of attributes (npoint / radius, nsample).
    Returns an OrderedDict output name -> numpy array.
    """
    from collections import OrderedDict
    name = op_name[len("PVN3D_"):] if op_name.startswith("PVN3D_") else op_name
    inv = {v: k for k, v in OP_SNAKE.items()}
    name = inv.get(name, name)
    fn, in_names, attr_names, out_names = REFS[name]
    if isinstance(inputs, dict):
        inputs = [inputs[n] for n in in_names]
    tens = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs]
    attrs = attrs or {}
    res = fn(*tens, *[attrs[a] for a in attr_names])
    if not isinstance(res, tuple):
        res = (res,)
    return OrderedDict((n, r.cpu().numpy()) for n, r in zip(out_names, res))
