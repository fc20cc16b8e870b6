"""The camera: LineMOD's intrinsics for the 640x480 frame, the detector-like square crop and the
intrinsics of that crop resampled to h x w, the per-pixel rays, uniform random rotations.

Pixel convention (as exporter/pvn3d_export/pvn3d/scene.py): pixel (u, v) has its centre at the
integer coordinates (u, v) and covers [u-0.5, u+0.5] x [v-0.5, v+0.5]; u = fx*X/Z + cx.
"""
import numpy as np
import torch

from ..pvn3d.scene import LINEMOD_K

FRAME_W, FRAME_H = 640, 480


def crop_intrinsics(centre_uv, side, h, w, K=LINEMOD_K):
    """Intrinsics of an h x w image that resamples the full-frame window of `side` pixels wide
    (side*h/w high) centred at centre_uv: crop pixel (u', v') <- frame point
    (L + s*(u'+0.5), T + s*(v'+0.5)), s = side/w, L/T the window's left/top edge (frame pixel i
    spans [i-0.5, i+0.5]). Equals scene.camera() for an integer-aligned window (L = u0 - 0.5)."""
    s = float(side) / w
    left = centre_uv[0] - side / 2.0
    top = centre_uv[1] - s * h / 2.0
    k = np.array(K, np.float64).copy()
    k[0, 0] /= s
    k[1, 1] /= s
    k[0, 2] = (K[0, 2] - left) / s - 0.5
    k[1, 2] = (K[1, 2] - top) / s - 0.5
    return k


def frame_window(k_crop, K=LINEMOD_K):
    """(s, left, top) of a crop's window in the full frame, from its intrinsics."""
    s = K[0, 0] / k_crop[0, 0]
    left = K[0, 2] - s * (k_crop[0, 2] + 0.5)
    top = K[1, 2] - s * (k_crop[1, 2] + 0.5)
    return s, left, top


def random_rotation(rng):
    """Uniform on SO(3): a normalised 4D Gaussian as a unit quaternion."""
    q = rng.standard_normal(4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def pixel_grid(h, w, device):
    """u [h*w], v [h*w] float32 pixel centres, row-major (index v*w + u)."""
    v, u = torch.meshgrid(torch.arange(h, dtype=torch.float32, device=device),
                          torch.arange(w, dtype=torch.float32, device=device), indexing="ij")
    return u.reshape(-1), v.reshape(-1)


def rays(K4, h, w):
    """Ray directions with z = 1 (so a ray parameter is the depth z): (dx, dy) each [B, h*w];
    K4 [B,4] = fx, fy, cx, cy (float32 tensor)."""
    u, v = pixel_grid(h, w, K4.device)
    fx, fy, cx, cy = [K4[:, i:i + 1] for i in range(4)]
    return (u[None] - cx) / fx, (v[None] - cy) / fy


def in_frame(K4, h, w, frame_K=LINEMOD_K):
    """[B, h*w] bool: the crop pixel's centre lies inside the 640x480 frame (a real crop of the
    camera image is black and depth-less outside)."""
    u, v = pixel_grid(h, w, K4.device)
    fx, cx, cy = K4[:, 0:1], K4[:, 2:3], K4[:, 3:4]
    s = float(frame_K[0, 0]) / fx
    uf = float(frame_K[0, 2]) - s * (cx - u[None])
    vf = float(frame_K[1, 2]) - s * (cy - v[None])
    return (uf >= -0.5) & (uf < FRAME_W - 0.5) & (vf >= -0.5) & (vf < FRAME_H - 0.5)
