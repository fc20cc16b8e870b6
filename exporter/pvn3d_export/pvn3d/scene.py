"""The synthetic sample: the Stanford bunny (npm `bunny`, via exporter/fetch_bunny.sh) on a table in
front of a wall, seen by a LineMOD-like camera, rendered (z-buffered triangles) to an RGB image and
a depth map, from which the point cloud is made as PVN3D does: back-projected depth pixels with
their colour and surface normal, `choose` = the pixel index of each point.

Object model frame: bunny vertices, bounding-box centre at the origin, scaled to a 0.15 m largest
side (metres). Model keypoints: 8 by farthest point sampling on the vertices starting from the
centre (PVN3D's rule: the first pick is the vertex farthest from the centre), then the centre as
a 9th row. Ground-truth pose (R, t): model frame -> camera frame (x right, y down, z forward),
t ~ 0.5 m in front of the camera. Everything is deterministic (fixed seed).
"""
import json
import math

import numpy as np

EXTENT = 0.15
LINEMOD_K = np.array([[572.4114, 0.0, 325.2611], [0.0, 573.57043, 242.04899], [0.0, 0.0, 1.0]])
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
SEED = 20240611


def load_bunny(path):
    """-> (vertices [V,3] float64 in the model frame (metres), triangles [T,3] int64)."""
    with open(path) as f:
        d = json.load(f)
    v = np.asarray(d["positions"], np.float64)
    t = np.asarray(d["cells"], np.int64)
    lo, hi = v.min(0), v.max(0)
    return (v - (lo + hi) / 2) * (EXTENT / (hi - lo).max()), t


def vertex_normals(v, t):
    fn = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])  # area-weighted
    n = np.zeros_like(v)
    for j in range(3):
        np.add.at(n, t[:, j], fn)
    return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)


def model_keypoints(v, n_kps=8):
    """FPS on the vertices starting from the centre (origin): [n_kps + 1, 3], centre last."""
    ctr = np.zeros(3)
    d = ((v - ctr) ** 2).sum(1)
    kps = []
    for _ in range(n_kps):
        i = int(np.argmax(d))
        kps.append(v[i])
        d = np.minimum(d, ((v - v[i]) ** 2).sum(1))
    return np.vstack(kps + [ctr])


def rot(axis, deg):
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    i = "xyz".index(axis)
    r = np.eye(3)
    j, k = (i + 1) % 3, (i + 2) % 3
    r[j, j], r[j, k], r[k, j], r[k, k] = c, -s, s, c
    return r


def gt_pose():
    # model y is up: turn it to camera -y (up in the image), then a view from above-left
    R = rot("z", 8.0) @ rot("x", 25.0) @ rot("y", 35.0) @ rot("x", 180.0)
    t = np.array([0.012, -0.006, 0.5])
    return R, t


def camera(h, w, centre_uv, crop_scale):
    """Intrinsics of the H x W input image: LineMOD's for 480 x 640, otherwise a crop of the
    LineMOD frame of (crop_scale*H) x (crop_scale*W) pixels around the object, downscaled by
    crop_scale (fx' = fx/s, cx' = (cx - u0 - (s-1)/2)/s)."""
    if (h, w) == (480, 640):
        return LINEMOD_K.copy()
    s = float(crop_scale)
    u0 = round(centre_uv[0] - s * w / 2)
    v0 = round(centre_uv[1] - s * h / 2)
    k = LINEMOD_K.copy()
    k[0, 0] /= s
    k[1, 1] /= s
    k[0, 2] = (k[0, 2] - u0 - (s - 1) / 2) / s
    k[1, 2] = (k[1, 2] - v0 - (s - 1) / 2) / s
    return k


def render(vc, tri, nc, K, h, w, R, t, ymin):
    """Z-buffer the bunny (camera-frame vertices vc, normals nc) over a table plane (under the
    bunny) and a wall (0.25 m behind its centre). Returns depth [h,w] (z, metres), normal [h,w,3],
    label [h,w] (1 = bunny), albedo kind [h,w] and the table coordinates for texturing."""
    uu, vv = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    rays = np.stack([(uu - K[0, 2]) / K[0, 0], (vv - K[1, 2]) / K[1, 1], np.ones_like(uu)], -1)
    # background: table (plane through the bunny's lowest point, normal = model up) and wall
    p0 = t + R @ np.array([0.0, ymin, 0.0])
    n_t = R @ np.array([0.0, 1.0, 0.0])
    den = rays @ n_t
    lam_t = np.where(np.abs(den) > 1e-9, (p0 @ n_t) / np.where(den == 0, 1, den), np.inf)
    lam_t = np.where(lam_t > 0, lam_t, np.inf)
    z_wall = t[2] + 0.25
    depth = np.minimum(lam_t, z_wall)
    kind = np.where(lam_t < z_wall, 1, 2)  # 1 table, 2 wall
    normal = np.where((kind == 1)[..., None], n_t, np.array([0.0, 0.0, -1.0]))
    label = np.zeros((h, w), np.int64)
    # bunny triangles
    uv = np.stack([K[0, 0] * vc[:, 0] / vc[:, 2] + K[0, 2], K[1, 1] * vc[:, 1] / vc[:, 2] + K[1, 2]], 1)
    for a, b, c in tri:
        pa, pb, pc = uv[a], uv[b], uv[c]
        x0 = max(int(math.floor(min(pa[0], pb[0], pc[0]))), 0)
        x1 = min(int(math.ceil(max(pa[0], pb[0], pc[0]))), w - 1)
        y0 = max(int(math.floor(min(pa[1], pb[1], pc[1]))), 0)
        y1 = min(int(math.ceil(max(pa[1], pb[1], pc[1]))), h - 1)
        if x0 > x1 or y0 > y1:
            continue
        area = (pb[0] - pa[0]) * (pc[1] - pa[1]) - (pb[1] - pa[1]) * (pc[0] - pa[0])
        if abs(area) < 1e-12:
            continue
        gx, gy = np.meshgrid(np.arange(x0, x1 + 1, dtype=np.float64),
                             np.arange(y0, y1 + 1, dtype=np.float64))
        wa = ((pb[0] - gx) * (pc[1] - gy) - (pb[1] - gy) * (pc[0] - gx)) / area
        wb = ((pc[0] - gx) * (pa[1] - gy) - (pc[1] - gy) * (pa[0] - gx)) / area
        wc = 1.0 - wa - wb
        inside = (wa >= 0) & (wb >= 0) & (wc >= 0)
        if not inside.any():
            continue
        # perspective-correct: interpolate 1/z
        iz = wa / vc[a, 2] + wb / vc[b, 2] + wc / vc[c, 2]
        z = 1.0 / iz
        sub = depth[y0:y1 + 1, x0:x1 + 1]
        upd = inside & (z < sub)
        if not upd.any():
            continue
        pw = np.stack([wa / vc[a, 2], wb / vc[b, 2], wc / vc[c, 2]], -1) * z[..., None]
        nrm = pw[..., 0:1] * nc[a] + pw[..., 1:2] * nc[b] + pw[..., 2:3] * nc[c]
        nrm /= np.maximum(np.linalg.norm(nrm, axis=-1, keepdims=True), 1e-12)
        sub[upd] = z[upd]
        normal[y0:y1 + 1, x0:x1 + 1][upd] = nrm[upd]
        label[y0:y1 + 1, x0:x1 + 1][upd] = 1
        kind[y0:y1 + 1, x0:x1 + 1][upd] = 0
    pts = rays * depth[..., None]
    # normals towards the camera
    flip = (normal * pts).sum(-1) > 0
    normal[flip] = -normal[flip]
    return depth, pts, normal, label, kind, p0, n_t


def shade(pts, normal, kind, p0, n_t, R, rng):
    light = np.array([-0.4, -0.6, -0.7])
    light /= np.linalg.norm(light)
    lam = np.clip((normal * light).sum(-1), 0, 1)[..., None]
    bunny = np.array([0.85, 0.72, 0.55])
    # table: 2 cm checker in the plane's own axes
    ax = R @ np.array([1.0, 0.0, 0.0])
    az = R @ np.array([0.0, 0.0, 1.0])
    d = pts - p0
    chk = (np.floor((d @ ax) / 0.02) + np.floor((d @ az) / 0.02)) % 2
    table = np.where(chk[..., None] > 0, np.array([0.55, 0.4, 0.25]), np.array([0.7, 0.55, 0.35]))
    wall = np.array([0.6, 0.7, 0.8]) * (0.8 + 0.2 * (pts[..., 1:2] - pts[..., 1].min())
                                        / max(np.ptp(pts[..., 1]), 1e-9))
    base = np.where((kind == 0)[..., None], bunny, np.where((kind == 1)[..., None], table, wall))
    img = base * (0.35 + 0.65 * lam) + rng.normal(0, 0.01, base.shape)
    return np.clip(img, 0, 1)


def make_sample(bunny_json, h=64, w=64, n_points=1024, crop_scale=4, seed=SEED, n_kps=8):
    """The fixture sample as an ordered list of (name, array) (see exporter/README.md)."""
    rng = np.random.RandomState(seed)
    v, tri = load_bunny(bunny_json)
    nrm = vertex_normals(v, tri)
    R, t = gt_pose()
    vc = v @ R.T + t
    nc = nrm @ R.T
    ctr_uv = (LINEMOD_K @ t)[:2] / t[2]
    K = camera(h, w, ctr_uv, crop_scale)
    depth, pts, normal, label, kind, p0, n_t = render(vc, tri, nc, K, h, w, R, t, v[:, 1].min())
    img = shade(pts, normal, kind, p0, n_t, R, rng)
    # depth noise (1 mm) along the ray, as a sensor would
    pts = pts * (1.0 + rng.normal(0, 0.001, depth.shape) / depth)[..., None]
    npx = h * w
    choose = rng.choice(npx, n_points, replace=n_points > npx).astype(np.int64)
    xyz = pts.reshape(-1, 3)[choose]
    cld = np.concatenate([xyz, img.reshape(-1, 3)[choose], normal.reshape(-1, 3)[choose]], 1)
    rgb = ((img.astype(np.float32) - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1)
    kps = model_keypoints(v, n_kps)
    diam = float(np.sqrt(((v[:, None] - v[None]) ** 2).sum(-1).max()))
    f32 = lambda a: np.ascontiguousarray(a, np.float32)  # noqa: E731
    return [
        ("rgb", f32(rgb[None])),
        ("cld_rgb_nrm", f32(cld[None])),
        ("choose", choose.reshape(1, 1, -1)),
        ("image", f32(img)),
        ("cam_K", f32(K)),
        ("labels", label.reshape(-1)[choose].reshape(1, -1).astype(np.int64)),
        ("gt_R", f32(R)),
        ("gt_t", f32(t)),
        ("model_kps", f32(kps)),
        ("model_points", f32(v)),
        ("model_diameter", f32([diam])),
    ]
