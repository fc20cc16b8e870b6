"""Analytic ray casting of planes, spheres, boxes and cylinders, and their normals.

Rays leave the camera centre with direction (dx, dy, 1), so a ray parameter is the depth z.
Shapes are given by a centre c [...,3], local axes Q [...,3,3] (columns, camera frame) and a size
[...,3] (sphere: radius; box: half sizes along the axes; cylinder: radius, radius, half height
along the third axis). Plane: a point c and its normal = Q's third column. Everything broadcasts:
ray tensors [..., P] against parameters [..., 1]. Every product is written out (no matmul/sum), so
each element's value depends on its own inputs only.
"""
import torch

INF = float("inf")


def _dot3(ax, ay, az, bx, by, bz):
    return ax * bx + ay * by + az * bz


def _local(dx, dy, c, Q):
    """Ray origin and direction in the shape's frame: o' = -Q^T c, d' = Q^T d."""
    o, d = [], []
    for i in range(3):
        qx, qy, qz = Q[..., 0, i], Q[..., 1, i], Q[..., 2, i]
        o.append(-_dot3(qx, qy, qz, c[..., 0], c[..., 1], c[..., 2]))
        d.append(qx * dx + qy * dy + qz)
    return o, d


def plane(dx, dy, c, Q):
    nx, ny, nz = Q[..., 0, 2], Q[..., 1, 2], Q[..., 2, 2]
    num = _dot3(nx, ny, nz, c[..., 0], c[..., 1], c[..., 2])
    den = nx * dx + ny * dy + nz
    den_safe = torch.where(den == 0, torch.ones_like(den), den)
    lam = num / den_safe
    return torch.where((den != 0) & (lam > 0), lam, torch.full_like(lam, INF))


def sphere(dx, dy, c, size):
    r = size[..., 0]
    a = dx * dx + dy * dy + 1.0
    b = dx * c[..., 0] + dy * c[..., 1] + c[..., 2]
    cc = _dot3(c[..., 0], c[..., 1], c[..., 2], c[..., 0], c[..., 1], c[..., 2]) - r * r
    disc = b * b - a * cc
    lam = (b - torch.sqrt(disc.clamp(min=0))) / a
    return torch.where((disc >= 0) & (lam > 0), lam, torch.full_like(lam, INF))


def _safe(d):
    tiny = 1e-12
    signed = torch.where(d < 0, torch.full_like(d, -tiny), torch.full_like(d, tiny))
    return torch.where(d.abs() < tiny, signed, d)


def box(dx, dy, c, Q, size):
    o, d = _local(dx, dy, c, Q)
    tn, tf = None, None
    for i in range(3):
        di = _safe(d[i])
        t1 = (-size[..., i] - o[i]) / di
        t2 = (size[..., i] - o[i]) / di
        lo, hi = torch.minimum(t1, t2), torch.maximum(t1, t2)
        tn = lo if tn is None else torch.maximum(tn, lo)
        tf = hi if tf is None else torch.minimum(tf, hi)
    return torch.where((tn <= tf) & (tn > 0), tn, torch.full_like(tn, INF))


def cylinder(dx, dy, c, Q, size):
    o, d = _local(dx, dy, c, Q)
    r, hh = size[..., 0], size[..., 2]
    A = d[0] * d[0] + d[1] * d[1]
    Bq = o[0] * d[0] + o[1] * d[1]
    C = o[0] * o[0] + o[1] * o[1] - r * r
    disc = Bq * Bq - A * C
    A_safe = torch.where(A > 0, A, torch.ones_like(A))
    ls = (-Bq - torch.sqrt(disc.clamp(min=0))) / A_safe
    zs = o[2] + ls * d[2]
    side_ok = (disc >= 0) & (A > 0) & (ls > 0) & (zs.abs() <= hh)
    lam = torch.where(side_ok, ls, torch.full_like(ls, INF))
    d2 = _safe(d[2])
    for sgn in (-1.0, 1.0):
        lc = (sgn * hh - o[2]) / d2
        xc, yc = o[0] + lc * d[0], o[1] + lc * d[1]
        ok = (lc > 0) & (xc * xc + yc * yc <= r * r)
        lam = torch.where(ok & (lc < lam), lc, lam)
    return lam


def normals(kind, px, py, pz, c, Q, size):
    """Outward unit normal at surface points p (tensors [...]) of shapes of the given kinds
    (int tensor: 1 plane, 2 sphere, 3 box, 4 cylinder); parameters broadcast against p."""
    q = [(Q[..., 0, i], Q[..., 1, i], Q[..., 2, i]) for i in range(3)]
    rx, ry, rz = px - c[..., 0], py - c[..., 1], pz - c[..., 2]
    loc = [_dot3(qi[0], qi[1], qi[2], rx, ry, rz) for qi in q]
    one = torch.ones_like(px)
    zero = torch.zeros_like(px)
    # box: the face whose normalised coordinate is largest
    m = [loc[i].abs() / size[..., i].clamp(min=1e-9) for i in range(3)]
    ax0 = (m[0] >= m[1]) & (m[0] >= m[2])
    ax1 = ~ax0 & (m[1] >= m[2])
    ax2 = ~ax0 & ~ax1
    sg = [torch.where(loc[i] < 0, -one, one) for i in range(3)]
    box_l = [torch.where(ax0, sg[0], zero), torch.where(ax1, sg[1], zero), torch.where(ax2, sg[2], zero)]
    # cylinder: side (radial) or cap
    rad = torch.sqrt(loc[0] * loc[0] + loc[1] * loc[1])
    cap = (loc[2].abs() - size[..., 2]) > (rad - size[..., 0])
    rad_s = rad.clamp(min=1e-12)
    cyl_l = [torch.where(cap, zero, loc[0] / rad_s), torch.where(cap, zero, loc[1] / rad_s),
             torch.where(cap, sg[2], zero)]
    plane_l = [zero, zero, one]
    out = []
    for j in range(3):  # back to the camera frame: n = Q n_local
        lx = torch.where(kind == 3, box_l[0], torch.where(kind == 4, cyl_l[0], plane_l[0]))
        ly = torch.where(kind == 3, box_l[1], torch.where(kind == 4, cyl_l[1], plane_l[1]))
        lz = torch.where(kind == 3, box_l[2], torch.where(kind == 4, cyl_l[2], plane_l[2]))
        out.append(Q[..., j, 0] * lx + Q[..., j, 1] * ly + Q[..., j, 2] * lz)
    sph = [rx, ry, rz]
    out = [torch.where(kind == 2, sph[j], out[j]) for j in range(3)]
    n = torch.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]).clamp(min=1e-12)
    return [o / n for o in out], loc
