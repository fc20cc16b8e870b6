"""A vectorised z-buffer rasteriser for one triangle mesh seen by B cameras at once (torch, CPU or
CUDA), no per-triangle Python loop.

1. Project every vertex of every sample; per triangle its pixel bounding box (pixel centres inside
   the box's extent), front-facing test, size.
2. Expand each live triangle into the pixels of its box (a ragged expansion: repeat_interleave over
   the box sizes, so a 1-pixel triangle costs one candidate and a big one many).
3. Edge functions per candidate; the inside test is watertight (a shared edge's function is exactly
   the negation in the neighbour, so a pixel on it belongs to at least one of the two).
4. Z-buffer: one scatter_reduce 'amin' over int64 keys (float32 depth bits << 32 | triangle index):
   the nearest triangle wins, equal depths go to the lower triangle index. Deterministic and
   independent of the order the candidates come in.
5. The winning triangle's perspective-correct barycentric weights are recomputed per pixel with
   the same float operations.
"""
import warnings

import torch

INT64_MAX = 0x7FFFFFFFFFFFFFFF
NEAR = 0.01


def project(vc, K4):
    """vc [B,V,3] camera frame (float32), K4 [B,4] -> u, v, z [B,V] (u = fx*(x/z) + cx)."""
    x, y, z = vc.unbind(-1)
    fx, fy, cx, cy = [K4[:, i:i + 1] for i in range(4)]
    return fx * (x / z) + cx, fy * (y / z) + cy, z


def _edge(ua, va, ub, vb, px, py):
    return (ua - px) * (vb - py) - (va - py) * (ub - px)


def rasterize(vc, faces, K4, h, w, cull_back=True):
    """Z-buffer of the mesh. vc [B,V,3] float32 camera-frame vertices, faces [T,3] int64 (counter-
    clockwise seen from outside), K4 [B,4]. Returns a dict: depth [B,h*w] float32 (inf where no
    triangle), tri [B,h*w] int64 (-1 where none), bary [B,h*w,3] float32 perspective-correct
    weights of the winning triangle's vertices, face_vertices [B,h*w,3] (its vertex indices),
    hit [B,h*w] bool, and the projected u, v, z [B,V]."""
    B, V, _ = vc.shape
    T = faces.shape[0]
    dev = vc.device
    u, v, z = project(vc, K4)
    fa, fb, fc = faces[:, 0], faces[:, 1], faces[:, 2]
    ua, ub, uc = u[:, fa], u[:, fb], u[:, fc]
    va, vb, vcc = v[:, fa], v[:, fb], v[:, fc]
    za, zb, zc = z[:, fa], z[:, fb], z[:, fc]
    area = _edge(ua, va, ub, vb, uc, vcc)  # twice the signed screen area
    live = (za > NEAR) & (zb > NEAR) & (zc > NEAR) & (area != 0)
    if cull_back:
        # seen from the camera (x right, y down, z forward) a counter-clockwise face facing the
        # camera has a negative signed screen area (fx, fy > 0, all z > 0)
        live &= area < 0
    # from here on only the live triangles (flat index b*T + f)
    lid = torch.nonzero(live.reshape(-1)).squeeze(1)
    L = lambda t: t.reshape(-1)[lid]  # noqa: E731
    lua, lub, luc, lva, lvb, lvc = L(ua), L(ub), L(uc), L(va), L(vb), L(vcc)
    umin = torch.minimum(torch.minimum(lua, lub), luc)
    umax = torch.maximum(torch.maximum(lua, lub), luc)
    vmin = torch.minimum(torch.minimum(lva, lvb), lvc)
    vmax = torch.maximum(torch.maximum(lva, lvb), lvc)
    big = float(max(h, w) + 2)
    x0 = torch.ceil(umin.clamp(-1.0, big)).clamp(min=0).long()
    x1 = torch.floor(umax.clamp(-1.0, big)).clamp(max=w - 1).long()
    y0 = torch.ceil(vmin.clamp(-1.0, big)).clamp(min=0).long()
    y1 = torch.floor(vmax.clamp(-1.0, big)).clamp(max=h - 1).long()
    nxb = (x1 - x0 + 1).clamp(min=0)
    cnt = nxb * (y1 - y0 + 1).clamp(min=0)
    ids = torch.nonzero(cnt > 0).squeeze(1)  # into the live triangles
    cnt = cnt[ids]
    total = int(cnt.sum())
    depth_key = torch.full((B * h * w,), INT64_MAX, dtype=torch.int64, device=dev)
    if total > 0:
        # one candidate per pixel of each box: triangle tl, local offset in its box
        start = torch.cumsum(cnt, 0) - cnt
        cid = torch.repeat_interleave(torch.arange(ids.numel(), device=dev), cnt)
        local = torch.arange(total, device=dev) - start[cid]
        tl = ids[cid]
        bx = nxb[tl]
        dy = torch.div(local, bx, rounding_mode="floor")
        ix = x0[tl] + (local - dy * bx)
        iy = y0[tl] + dy
        px, py = ix.to(torch.float32), iy.to(torch.float32)
        tid = lid[tl]
        g = lambda t: t.reshape(-1)[tid]  # noqa: E731
        cua, cub, cuc, cva, cvb, cvc = lua[tl], lub[tl], luc[tl], lva[tl], lvb[tl], lvc[tl]
        car = g(area)
        w0 = _edge(cub, cvb, cuc, cvc, px, py) / car
        w1 = _edge(cuc, cvc, cua, cva, px, py) / car
        w2 = _edge(cua, cva, cub, cvb, px, py) / car
        inside = (w0 >= 0) & (w1 >= 0) & (w2 >= 0)
        izz = w0 / g(za) + w1 / g(zb) + w2 / g(zc)
        zz = 1.0 / izz
        inside &= zz > NEAR
        b = torch.div(tid, T, rounding_mode="floor")
        f = tid - b * T
        key = (zz.view(torch.int32).to(torch.int64) << 32) | f
        pix = b * (h * w) + iy * w + ix
        with warnings.catch_warnings():  # "scatter_reduce() is in beta" (torch < 2.0)
            warnings.simplefilter("ignore")
            depth_key.scatter_reduce_(0, pix[inside], key[inside], reduce="amin", include_self=True)
    depth_key = depth_key.view(B, h * w)
    hit = depth_key != INT64_MAX
    tri = torch.where(hit, depth_key & 0xFFFFFFFF, torch.full_like(depth_key, -1))
    depth = torch.where(hit, (depth_key >> 32).to(torch.int32).view(torch.float32),
                        torch.full(depth_key.shape, float("inf"), device=dev))
    # barycentric weights of the winner (same float operations as above)
    tsafe = tri.clamp(min=0)
    fi = faces[tsafe]  # [B,HW,3]
    gv = lambda t, j: torch.gather(t, 1, fi[..., j])  # noqa: E731
    pu = torch.arange(w, device=dev, dtype=torch.float32).repeat(h)[None].expand(B, -1)
    pv = torch.arange(h, device=dev, dtype=torch.float32).repeat_interleave(w)[None].expand(B, -1)
    pua, pub, puc = gv(u, 0), gv(u, 1), gv(u, 2)
    pva, pvb, pvc = gv(v, 0), gv(v, 1), gv(v, 2)
    pza, pzb, pzc = gv(z, 0), gv(z, 1), gv(z, 2)
    par = _edge(pua, pva, pub, pvb, puc, pvc)
    par = torch.where(hit, par, torch.ones_like(par))
    w0 = _edge(pub, pvb, puc, pvc, pu, pv) / par
    w1 = _edge(puc, pvc, pua, pva, pu, pv) / par
    w2 = _edge(pua, pva, pub, pvb, pu, pv) / par
    zw = torch.where(hit, depth, torch.ones_like(depth))
    bary = torch.stack([w0 / pza * zw, w1 / pzb * zw, w2 / pzc * zw], -1)
    bary = torch.where(hit[..., None], bary, torch.zeros_like(bary))
    return dict(depth=depth, tri=tri, bary=bary, hit=hit, face_vertices=fi, u=u, v=v, z=z)
