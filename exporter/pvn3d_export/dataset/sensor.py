"""The camera's image and the RGB-D sensor's depth.

Image: gain * colour + Gaussian noise (sigma per sample), clipped, quantised to uint8 as a camera
gives (round half to even of 255*x).

Depth (metres, float32; 0 = missing), like a structured-light / time-of-flight sensor:
- noise along the ray, sigma = sigma0 * (z/0.5 m)^2 * (1 + (1 - |cos|)) with sigma0 ~ U(1.2, 1.8) mm
  per sample and |cos| the angle between the ray and the surface normal; then quantised to 1 mm;
- missing: outside the frame or the range [0.2, 3.0] m; grazing angles (|cos| below c ~ U(0.08, 0.2):
  missing with probability 0.9, fading out up to 2c); depth discontinuities (a 4-neighbour farther or
  nearer by more than 2 cm + 3% of z: the far side missing with probability p ~ U(0.3, 0.9), the near
  side with p/3); random pixels (p ~ U(0, 0.02)); blobs (smooth noise above a threshold
  ~ U(0.7, 1.0) at a scale of 3-8 pixels).
"""
import torch

from . import hashrng, render

S_IMG, S_DEPTH, S_RAND, S_EDGE, S_GRAZE, S_BLOB = 1, 2, 3, 4, 5, 6
RANGE = (0.2, 3.0)


def image(P, rd):
    """uint8 image [B,HW,3]."""
    B, HW, _ = rd["colour"].shape
    dev = rd["colour"].device
    key = hashrng.stream_keys(P["seeds"], S_IMG, dev)
    idx = torch.arange(HW * 3, device=dev, dtype=torch.int32)[None]
    noise = hashrng.normal(key, idx).view(B, HW, 3)
    x = rd["colour"] * P["light_gain"][:, None, None] + noise * P["light_noise"][:, None, None]
    x = torch.where(rd["in_frame"][..., None], x, torch.zeros_like(x))
    return torch.round(x.clamp(0.0, 1.0) * 255.0).to(torch.uint8)


def _neighbours(x, h, w):
    """The 4-neighbours of each pixel of x [B,HW] (edge pixels repeat themselves): 4 x [B,h,w]."""
    B = x.shape[0]
    xx = x.view(B, h, w)
    top, bottom = torch.cat([xx[:, :1], xx[:, :-1]], 1), torch.cat([xx[:, 1:], xx[:, -1:]], 1)
    left, right = torch.cat([xx[:, :, :1], xx[:, :, :-1]], 2), torch.cat([xx[:, :, 1:], xx[:, :, -1:]], 2)
    return xx, [left, right, top, bottom]


def _neighbour_diff(z, in_frame, h, w):
    """Per pixel, over its 4-neighbours inside the camera frame: the largest amount by which a
    neighbour is nearer (far side of an edge) and farther (near side), [B,HW] each; z [B,HW] with
    inf where nothing was hit (treated as 1 km)."""
    B = z.shape[0]
    zf = torch.where(torch.isfinite(z), z, torch.full_like(z, 1e3))
    zz, nbs = _neighbours(zf, h, w)
    _, fr = _neighbours(in_frame, h, w)
    far_side = torch.zeros_like(zz)
    near_side = torch.zeros_like(zz)
    for nb, ok in zip(nbs, fr):
        nb = torch.where(ok, nb, zz)
        far_side = torch.maximum(far_side, zz - nb)
        near_side = torch.maximum(near_side, nb - zz)
    return far_side.view(B, -1), near_side.view(B, -1)


def depth(P, rd, h, w):
    """Noisy depth [B,HW] float32 (0 = missing) and its validity mask."""
    seeds = P["seeds"]
    z = rd["depth"]
    B, HW = z.shape
    dev = z.device
    idx = torch.arange(HW, device=dev, dtype=torch.int32)[None]
    dx, dy = rd["dx"], rd["dy"]
    nrm = rd["normal"]
    rn = torch.sqrt(dx * dx + dy * dy + 1.0)
    cos = ((nrm[..., 0] * dx + nrm[..., 1] * dy + nrm[..., 2]) / rn).abs()
    zf = torch.where(torch.isfinite(z), z, torch.zeros_like(z))
    valid = rd["in_frame"] & torch.isfinite(z) & (zf >= RANGE[0]) & (zf <= RANGE[1])
    # noise along the ray, then 1 mm quantisation
    q = zf * 2.0
    sigma = P["sensor_sigma0"][:, None] * (q * q) * (2.0 - cos)
    zn = zf + sigma * hashrng.normal(hashrng.stream_keys(seeds, S_DEPTH, dev), idx)
    zn = torch.round(zn * 1000.0) / 1000.0
    # dropouts
    u_rand = hashrng.uniform(hashrng.stream_keys(seeds, S_RAND, dev), idx)
    u_edge = hashrng.uniform(hashrng.stream_keys(seeds, S_EDGE, dev), idx)
    u_graze = hashrng.uniform(hashrng.stream_keys(seeds, S_GRAZE, dev), idx)
    drop = u_rand < P["sensor_p_rand"][:, None]
    far_side, near_side = _neighbour_diff(z, rd["in_frame"], h, w)
    thr = 0.02 + 0.03 * zf
    pe = P["sensor_p_edge"][:, None]
    drop |= (far_side > thr) & (u_edge < pe)
    drop |= (near_side > thr) & (u_edge < pe / 3.0)
    cg = P["sensor_cos_graze"][:, None]
    p_graze = ((2.0 * cg - cos) / cg).clamp(0.0, 1.0) * 0.9
    drop |= u_graze < p_graze
    # blobs: value noise over the pixel grid
    u = torch.remainder(idx, w).to(torch.float32)
    v = torch.div(idx, w, rounding_mode="floor").to(torch.float32)
    sc = P["sensor_blob_scale"][:, None]
    off = P["sensor_blob_off"]
    blob = render.value_noise(u / sc + off[:, 0:1], v / sc + off[:, 1:2],
                              hashrng.stream_keys(seeds, S_BLOB, dev))
    drop |= blob > P["sensor_blob_thr"][:, None]
    valid = valid & ~drop & (zn > 0)
    return torch.where(valid, zn, torch.zeros_like(zn)), valid
