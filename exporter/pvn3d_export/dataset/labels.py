"""Points and labels as PVN3D builds them: N points drawn uniformly without replacement from the
pixels with valid depth (with replacement only when fewer than N are valid), their back-projected
noisy depth, colour and normal; per-point segmentation labels and keypoint / centre offsets.

Offsets follow PVN3D (and this project's operators): vote = point - offset, so the targets are
offset = point - keypoint for the points of the object, and 0 for the others (PVN3D's
kp_targ_ofst / ctr_targ_ofst; its losses weight by the labels anyway).
"""
import torch

from . import hashrng

S_CHOOSE, S_FILL = 7, 8


def choose_points(seeds, valid, n_points):
    """[B,N] int64 pixel indices: a random order of the valid pixels (random keys, ties broken by
    the pixel index), its first N; rows with fewer than N valid pixels repeat random valid pixels
    after all of them. A row without any valid pixel gives pixel 0. seeds: Python ints."""
    B, HW = valid.shape
    dev = valid.device
    shift = max(int(HW - 1).bit_length(), 1)
    assert shift <= 24, "image too large"
    idx = torch.arange(HW, device=dev, dtype=torch.int32)[None]
    r = hashrng._lsr(hashrng.bits(hashrng.stream_keys(seeds, S_CHOOSE, dev), idx), shift + 1)
    key = torch.where(valid, (r << shift) | idx, torch.full_like(r, 0x7FFFFFFF))
    order = (torch.sort(key, dim=1)[0] & ((1 << shift) - 1)).to(torch.int64)
    if HW < n_points:
        order = torch.cat([order, order[:, :1].expand(B, n_points - HW)], 1)
    first = order[:, :n_points]
    cnt = valid.sum(1, keepdim=True)
    j = torch.arange(n_points, device=dev, dtype=torch.int32)[None]
    rb = hashrng._lsr(hashrng.bits(hashrng.stream_keys(seeds, S_FILL, dev), j), 1).to(torch.int64)
    pick = torch.remainder(rb, cnt.clamp(min=1))
    filled = torch.gather(order, 1, pick.clamp(max=order.shape[1] - 1))
    j = j.to(torch.int64)
    out = torch.where(j < cnt, first, filled)
    return torch.where(cnt > 0, out, torch.zeros_like(out))


def points(K4, depth, image, normal, choose, w):
    """cld_rgb_nrm [B,N,9]: xyz back-projected from the noisy depth with the crop's intrinsics, rgb =
    image/255 (float32), the surface normal."""
    z = torch.gather(depth, 1, choose)
    u = torch.remainder(choose, w).to(torch.float32)
    v = torch.div(choose, w, rounding_mode="floor").to(torch.float32)
    x = (u - K4[:, 2:3]) / K4[:, 0:1] * z
    y = (v - K4[:, 3:4]) / K4[:, 1:2] * z
    rgb = torch.gather(image, 1, choose[..., None].expand(-1, -1, 3)).to(torch.float32) / torch.full(
        (1, 1, 1), 255.0, device=depth.device)
    nrm = torch.gather(normal, 1, choose[..., None].expand(-1, -1, 3))
    return torch.cat([torch.stack([x, y, z], -1), rgb, nrm], -1)


def targets(cld, labels, R, t, model_kps):
    """kp_targ_ofst [B,K,N,3] and ctr_targ_ofst [B,1,N,3] (model_kps [K+1,3], centre last)."""
    mk = model_kps
    kc = torch.stack([R[:, i, 0:1] * mk[:, 0][None] + R[:, i, 1:2] * mk[:, 1][None]
                      + R[:, i, 2:3] * mk[:, 2][None] + t[:, i:i + 1] for i in range(3)], -1)  # [B,K+1,3]
    xyz = cld[:, None, :, 0:3]
    ofs = (xyz - kc[:, :, None, :]) * (labels[:, None, :, None] == 1).to(cld.dtype)
    return ofs[:, :-1], ofs[:, -1:], kc
