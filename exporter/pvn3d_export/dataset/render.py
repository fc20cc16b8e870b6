"""The scene renderer: the bunny (rasterised), the table and wall planes, the distractors and the
occluder (ray cast), the occluder search, textures and shading. All samples of a batch at once.

Surface ids of the id map: 0 bunny, 1 table, 2 wall, 3..11 the object slots of sampling.SLOT_KIND
(shifted by one), NONE (12) where a ray hits nothing or the pixel lies outside the camera frame.
"""
import numpy as np
import torch

from . import camera, hashrng, raster, sampling, shapes

NONE = 1 + sampling.N_SLOTS
BUNNY_KS = 0.12
SPEC_SQUARINGS = 4  # specular exponent 2^4 = 16
SEARCH_COARSE, SEARCH_FINE = 12, 12
OCC_LIMITS = (0.1, 0.6)
GROW, GROW_TRIES = 1.4, 3

FLOAT_KEYS = ("R", "t", "K4", "centre", "axes", "size", "col1", "col2", "tex_scale", "ks",
              "occ_target", "occ_z", "occ_dir", "occ_base", "occ_dmax", "light_dir", "light_ambient",
              "light_diffuse", "light_tint", "light_gain", "light_noise", "light_background",
              "sensor_sigma0", "sensor_p_edge", "sensor_cos_graze", "sensor_p_rand",
              "sensor_blob_scale", "sensor_blob_thr", "sensor_blob_off")
INT_KEYS = ("seed", "kind", "tex", "occ_slot")


def to_torch(p, device):
    out = {}
    for k in FLOAT_KEYS:
        out[k] = torch.from_numpy(p[k].astype("float32")).to(device)
    for k in INT_KEYS:
        out[k] = torch.from_numpy(p[k].astype("int64")).to(device)
    bits32 = (p["tex_seed"] & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    out["tex_seed"] = torch.from_numpy(bits32).to(device)
    out["enabled"] = torch.from_numpy(p["enabled"].astype(bool)).to(device)
    out["seeds"] = [int(s) for s in p["seed"]]
    return out


def value_noise(x, y, keys):
    """Smooth 2D value noise in [0,1): hashed lattice values (keys: int32 broadcastable against x),
    smoothstep interpolation. Coordinates are clamped to +-1e6 (far horizons) so that the integer
    lattice coordinates stay in range."""
    x, y = x.clamp(-1e6, 1e6), y.clamp(-1e6, 1e6)
    fx, fy = torch.floor(x), torch.floor(y)
    sx, sy = x - fx, y - fy
    sx = sx * sx * (3.0 - 2.0 * sx)
    sy = sy * sy * (3.0 - 2.0 * sy)
    ix = fx.to(torch.int32) * hashrng._s32(0x8DA6B343)
    iy = fy.to(torch.int32) * hashrng._s32(0xD8163841)
    ix1 = ix + hashrng._s32(0x8DA6B343)
    iy1 = iy + hashrng._s32(0xD8163841)
    lat = lambda a, b: hashrng.uniform(keys, a ^ b)  # noqa: E731
    n0 = lat(ix, iy) * (1.0 - sx) + lat(ix1, iy) * sx
    n1 = lat(ix, iy1) * (1.0 - sx) + lat(ix1, iy1) * sx
    return n0 * (1.0 - sy) + n1 * sy


def texture(kind, col1, col2, scale, seed, tu, tv):
    """Albedo [...,3]: solid (0), checker (1), stripes (2), two-octave smooth noise (3) mixing
    col1 and col2 at period `scale` (metres) in surface coordinates (tu, tv)."""
    x, y = (tu / scale).clamp(-1e6, 1e6), (tv / scale).clamp(-1e6, 1e6)
    fx, fy = torch.floor(x), torch.floor(y)
    checker = torch.remainder(fx + fy, 2.0)
    stripes = torch.remainder(fx, 2.0)
    noise = (value_noise(x, y, seed) * 0.65
             + value_noise(x * 2.0 + 17.25, y * 2.0 + 5.5, seed ^ 0x55AA55) * 0.35)
    zero = torch.zeros_like(x)
    m = torch.where(kind == 1, checker, torch.where(kind == 2, stripes, torch.where(kind == 3, noise, zero)))
    m = m[..., None]
    return col1 * (1.0 - m) + col2 * m


def slot_depth(P, dx, dy, slot):
    """Ray depth of one slot [B,HW], inf where missed or disabled (only the samples where it is
    enabled are computed)."""
    kind = int(sampling.SLOT_KIND[slot])
    out = torch.full_like(dx, float("inf"))
    sel = torch.nonzero(P["enabled"][:, slot]).squeeze(1)
    if sel.numel() == 0:
        return out
    c = P["centre"][sel, slot][:, None, :]
    Q = P["axes"][sel, slot][:, None]
    size = P["size"][sel, slot][:, None, :]
    rx, ry = dx[sel], dy[sel]
    if kind == sampling.PLANE:
        z = shapes.plane(rx, ry, c, Q)
    elif kind == sampling.SPHERE:
        z = shapes.sphere(rx, ry, c, size)
    elif kind == sampling.BOX:
        z = shapes.box(rx, ry, c, Q, size)
    else:
        z = shapes.cylinder(rx, ry, c, Q, size)
    out[sel] = z
    return out


def _mask_pixels(mask):
    """Indices [B,M] of the True pixels of each row first (in pixel order), M = the largest count,
    and the validity of each column."""
    B, HW = mask.shape
    idx = torch.arange(HW, device=mask.device)[None].expand(B, -1)
    key = torch.where(mask, idx, idx + HW)
    order = torch.sort(key, dim=1)[0]
    M = max(int(mask.sum(1).max()), 1)
    order = order[:, :M]
    return torch.remainder(order, HW), order < HW


def _occluder_coverage(P, sel, kind, slot, d, dxm, dym, mvalid, hidden_m, n_alone):
    """Fraction of the bunny-alone pixels hidden (by the occluder at offsets d [b,C], or already by
    distractors) for the samples sel; dxm, dym, mvalid, hidden_m [b,M] at the mask pixels."""
    K4 = P["K4"][sel]
    base, dirv, zo = P["occ_base"][sel], P["occ_dir"][sel], P["occ_z"][sel]
    qx = base[:, 0:1] + d * dirv[:, 0:1]
    qy = base[:, 1:2] + d * dirv[:, 1:2]
    c = torch.stack([(qx - K4[:, 2:3]) / K4[:, 0:1] * zo[:, None],
                     (qy - K4[:, 3:4]) / K4[:, 1:2] * zo[:, None], zo[:, None].expand_as(qx)], -1)
    cc = c[:, :, None, :]
    Q = P["axes"][sel, slot][:, None, None]
    size = P["size"][sel, slot][:, None, None, :]
    rx, ry = dxm[:, None, :], dym[:, None, :]
    if kind == sampling.SPHERE:
        z = shapes.sphere(rx, ry, cc, size)
    elif kind == sampling.BOX:
        z = shapes.box(rx, ry, cc, Q, size)
    else:
        z = shapes.cylinder(rx, ry, cc, Q, size)
    hid = (torch.isfinite(z) | hidden_m[:, None, :]) & mvalid[:, None, :]
    cov = hid.sum(-1).to(torch.float32) / n_alone[:, None].clamp(min=1).to(torch.float32)
    return cov, c


def _pick(cov, target):
    """Index of the candidate closest to target, preferring those inside OCC_LIMITS."""
    lo, hi = OCC_LIMITS
    bad = ((cov < lo) | (cov > hi)).to(torch.float32)
    C = cov.shape[1]
    tie = torch.arange(C, device=cov.device, dtype=torch.float32)[None] * 1e-6
    return torch.argmin((cov - target[:, None]).abs() + bad * 10.0 + tie, dim=1)


def _occluder_rho(kind, size):
    """Bounding radius of occluders of one kind from their sizes [b,3]."""
    if kind == sampling.SPHERE:
        return size[:, 0]
    if kind == sampling.BOX:
        return torch.sqrt(size[:, 0] * size[:, 0] + size[:, 1] * size[:, 1] + size[:, 2] * size[:, 2])
    return torch.sqrt(size[:, 0] * size[:, 0] + size[:, 2] * size[:, 2])


def search_occluders(P, dx, dy, alone, hidden, n_alone):
    """Place each occluder across the image (offset along its direction) so that it hides about its
    target fraction of the bunny: a coarse then a fine scan of the offset. An occluder that cannot
    hide enough even in the middle is enlarged (x1.4, keeping its farthest point) and searched again,
    up to GROW_TRIES times. Writes the occluders' centres (and grown sizes) into P."""
    for kind in (sampling.SPHERE, sampling.BOX, sampling.CYLINDER):
        slot = sampling.OCCLUDER_SLOT[kind]
        sel = torch.nonzero(P["occ_slot"] == slot).squeeze(1)
        if sel.numel() == 0:
            continue
        pix, mvalid = _mask_pixels(alone[sel])
        dxm, dym = torch.gather(dx[sel], 1, pix), torch.gather(dy[sel], 1, pix)
        hidden_m = torch.gather(hidden[sel], 1, pix)
        na = n_alone[sel]
        target = P["occ_target"][sel]
        for attempt in range(GROW_TRIES + 1):
            cov, cbest = _scan(P, sel, kind, slot, dxm, dym, mvalid, hidden_m, na, target)
            P["centre"][sel, slot] = cbest
            short = cov < target - 0.03
            if attempt == GROW_TRIES or not bool(short.any()):
                break
            # enlarge the ones that fall short, keeping their farthest point where it was
            size = P["size"][sel, slot]
            rho = _occluder_rho(kind, size)
            z = P["occ_z"][sel]
            z_new = z + rho * (1.0 - GROW)
            grow = short & (z_new - GROW * rho > 0.05)
            g = torch.where(grow, torch.full_like(z, GROW), torch.ones_like(z))
            P["size"][sel, slot] = size * g[:, None]
            P["occ_z"][sel] = torch.where(grow, z_new, z)
            P["occ_dmax"][sel] = P["occ_dmax"][sel] * g


def _scan(P, sel, kind, slot, dxm, dym, mvalid, hidden_m, na, target):
    dev = dxm.device
    dmax = P["occ_dmax"][sel][:, None]
    steps = torch.arange(SEARCH_COARSE, device=dev, dtype=torch.float32)[None] / (SEARCH_COARSE - 1)
    d1 = dmax * steps
    cov1, _ = _occluder_coverage(P, sel, kind, slot, d1, dxm, dym, mvalid, hidden_m, na)
    k1 = _pick(cov1, target)
    step = dmax[:, 0] / (SEARCH_COARSE - 1)
    dbest = torch.gather(d1, 1, k1[:, None])[:, 0]
    lo = (dbest - step).clamp(min=0)
    hi = torch.minimum(dbest + step, dmax[:, 0])
    f = torch.arange(SEARCH_FINE, device=dev, dtype=torch.float32)[None] / (SEARCH_FINE - 1)
    d2 = torch.cat([dbest[:, None], lo[:, None] + (hi - lo)[:, None] * f], 1)
    cov2, c2 = _occluder_coverage(P, sel, kind, slot, d2, dxm, dym, mvalid, hidden_m, na)
    k2 = _pick(cov2, target)
    cbest = torch.gather(c2, 1, k2[:, None, None].expand(-1, 1, 3))[:, 0]
    return torch.gather(cov2, 1, k2[:, None])[:, 0], cbest


def _place(P, zd, zb, alone, n_alone, dx, dy):
    """Drop the distractors that hide the bunny where the scene wants that, then search the
    occluders' placements (updates P['enabled'], P['centre'] and zd)."""
    dist_slots = sampling.DISTRACTOR_SLOTS
    hide = torch.stack([(zd[s] < zb) & alone for s in dist_slots], 1)  # [B,6,HW]
    hides_any = hide.any(-1)  # [B,6]
    union = hide.any(1)
    cov_d = union.sum(1).to(torch.float32) / n_alone.clamp(min=1).to(torch.float32)
    target = P["occ_target"]
    drop_all = (target <= 0) | (cov_d > target - 0.05)
    drop = hides_any & drop_all[:, None]
    en = P["enabled"].clone()
    en[:, dist_slots] = en[:, dist_slots] & ~drop
    P["enabled"] = en
    for i, s in enumerate(dist_slots):
        zd[s] = torch.where(drop[:, i:i + 1], torch.full_like(zd[s], float("inf")), zd[s])
    hidden = union & ~drop_all[:, None]
    search_occluders(P, dx, dy, alone, hidden, n_alone)


def render(model_t, P, h, w, frame_K=camera.LINEMOD_K, place=True):
    """Render a batch. model_t: vertices/normals/albedo [V,3] float32, faces [T,3] int64 tensors;
    P: to_torch(stacked scene parameters) (P['centre'] gets the occluders' placements).
    Returns per-pixel tensors [B,HW(,3)]: depth (true z, inf where nothing), ids, normal (unit,
    towards the camera), colour (linear, before camera gain and noise), in_frame, alone (the bunny
    rendered alone), and occlusion [B] (1 - visible / alone bunny pixels). place=False keeps the
    distractors and occluders of P as they are (P from an earlier render: to view the same scene
    through other intrinsics, e.g. the whole frame)."""
    R, t = P["R"], P["t"]
    B = R.shape[0]
    V = model_t["vertices"]
    vx, vy, vz = V[:, 0][None], V[:, 1][None], V[:, 2][None]
    vc = torch.stack([R[:, i, 0:1] * vx + R[:, i, 1:2] * vy + R[:, i, 2:3] * vz + t[:, i:i + 1]
                      for i in range(3)], -1)
    rs = raster.rasterize(vc, model_t["faces"], P["K4"], h, w)
    inf_ = camera.in_frame(P["K4"], h, w, frame_K)
    dx, dy = camera.rays(P["K4"], h, w)
    zb = rs["depth"]
    alone = rs["hit"] & inf_
    n_alone = alone.sum(1)

    # distractors: those hiding bunny pixels are removed in unoccluded samples, and in occluded
    # ones when together they would already hide more than the target
    dist_slots = sampling.DISTRACTOR_SLOTS
    zd = {s: slot_depth(P, dx, dy, s) for s in dist_slots}
    if place:
        _place(P, zd, zb, alone, n_alone, dx, dy)

    zs = [zb] + [zd[s] if s in zd else slot_depth(P, dx, dy, s) for s in range(sampling.N_SLOTS)]
    zall = torch.stack(zs, 1)  # [B, 12, HW]: bunny, then the slots
    depth, ids = torch.min(zall, 1)
    ids = torch.where(torch.isfinite(depth) & inf_, ids, torch.full_like(ids, NONE))
    depth = torch.where(ids == NONE, torch.full_like(depth, float("inf")), depth)

    # geometry at the visible surface
    zsafe = torch.where(torch.isfinite(depth), depth, torch.ones_like(depth))
    px, py, pz = dx * zsafe, dy * zsafe, zsafe
    sid = (ids - 1).clamp(0, sampling.N_SLOTS - 1)  # slot of each pixel (bunny/none: any)
    g3 = lambda a: torch.gather(a, 1, sid[..., None].expand(-1, -1, a.shape[-1]))  # noqa: E731
    g1 = lambda a: torch.gather(a, 1, sid)  # noqa: E731
    cen = g3(P["centre"])
    Qp = torch.gather(P["axes"].reshape(B, -1, 9), 1, sid[..., None].expand(-1, -1, 9)).reshape(B, -1, 3, 3)
    size = g3(P["size"])
    kind = g1(P["kind"])
    n_obj, loc = shapes.normals(kind, px, py, pz, cen, Qp, size)
    alb = texture(g1(P["tex"]), g3(P["col1"]), g3(P["col2"]), g1(P["tex_scale"]),
                  g1(P["tex_seed"]), loc[0] + 0.7 * loc[2], loc[1] - 0.5 * loc[2])
    ks = g1(P["ks"])
    # the bunny: interpolated vertex normals and albedo
    fv = rs["face_vertices"]
    bw = rs["bary"]
    NM = model_t["normals"]
    nb = []
    for i in range(3):
        ni = R[:, i, 0:1] * NM[:, 0][None] + R[:, i, 1:2] * NM[:, 1][None] + R[:, i, 2:3] * NM[:, 2][None]
        nb.append(torch.gather(ni, 1, fv[..., 0]) * bw[..., 0] + torch.gather(ni, 1, fv[..., 1]) * bw[..., 1]
                  + torch.gather(ni, 1, fv[..., 2]) * bw[..., 2])
    nn = torch.sqrt(nb[0] * nb[0] + nb[1] * nb[1] + nb[2] * nb[2]).clamp(min=1e-12)
    nb = [c / nn for c in nb]
    AL = model_t["albedo"]
    ab = torch.stack([AL[fv[..., 0], i] * bw[..., 0] + AL[fv[..., 1], i] * bw[..., 1]
                      + AL[fv[..., 2], i] * bw[..., 2]
                      for i in range(3)], -1)
    isb = ids == 0
    nrm = [torch.where(isb, nb[i], n_obj[i]) for i in range(3)]
    alb = torch.where(isb[..., None], ab, alb)
    ks = torch.where(isb, torch.full_like(ks, BUNNY_KS), ks)
    # normals towards the camera
    flip = (nrm[0] * dx + nrm[1] * dy + nrm[2]) > 0
    nrm = [torch.where(flip, -c, c) for c in nrm]

    # shading: ambient + Lambert + Blinn-Phong (exponent 16), light colour tint, background
    L = P["light_dir"]
    lx, ly, lz = L[:, 0:1], L[:, 1:2], L[:, 2:3]
    diff = (nrm[0] * lx + nrm[1] * ly + nrm[2] * lz).clamp(min=0)
    rn = torch.sqrt(dx * dx + dy * dy + 1.0)
    hx, hy, hz = lx - dx / rn, ly - dy / rn, lz - 1.0 / rn
    hn = torch.sqrt(hx * hx + hy * hy + hz * hz).clamp(min=1e-12)
    sp = ((nrm[0] * hx + nrm[1] * hy + nrm[2] * hz) / hn).clamp(min=0)
    for _ in range(SPEC_SQUARINGS):
        sp = sp * sp
    shade = P["light_ambient"][:, None] + P["light_diffuse"][:, None] * diff
    col = (alb * shade[..., None] + (ks * sp)[..., None]) * P["light_tint"][:, None, :]
    bg = P["light_background"][:, None, :].expand_as(col)
    col = torch.where((ids == NONE)[..., None], bg, col)
    col = torch.where(inf_[..., None], col, torch.zeros_like(col))
    normal = torch.stack(nrm, -1)
    normal = torch.where((ids == NONE)[..., None], torch.zeros_like(normal), normal)
    vis = (ids == 0).sum(1)
    occlusion = 1.0 - vis.to(torch.float32) / n_alone.clamp(min=1).to(torch.float32)
    occlusion = torch.where(n_alone > 0, occlusion, torch.zeros_like(occlusion))
    return dict(depth=depth, ids=ids, normal=normal, colour=col, in_frame=inf_, alone=alone,
                occlusion=occlusion, dx=dx, dy=dy, n_alone=n_alone)
