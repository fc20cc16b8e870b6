"""The object model: npm `bunny` scaled to a 0.15 m largest side, bounding-box centre at the origin
(scene.load_bunny), its vertex normals, its fixed appearance (per-vertex albedo), keypoints and
diameter."""
import numpy as np

from ..pvn3d import scene

BUNNY_ALBEDO = np.array([0.85, 0.72, 0.55])  # scene.py's bunny colour


def vertex_albedo(v):
    """The bunny's own, fixed, mild texture: its base colour modulated by +-8% with a smooth
    pattern over the model surface (a sum of six fixed plane waves, wavelengths 2.5-6 cm), a bit
    stronger in red than in blue. The same for every sample: a real object keeps its texture."""
    rs = np.random.RandomState(7)
    f = np.zeros(len(v))
    for _ in range(6):
        d = rs.standard_normal(3)
        d /= np.linalg.norm(d)
        lam = rs.uniform(0.025, 0.06)
        f += np.cos(2 * np.pi * (v @ d) / lam + rs.uniform(0, 2 * np.pi))
    f /= np.abs(f).max()
    tint = np.array([1.0, 0.85, 0.7])
    return np.clip(BUNNY_ALBEDO[None] * (1.0 + 0.08 * f[:, None] * tint[None]), 0, 1)


class BunnyModel:
    """vertices [V,3] / faces [T,3] / normals [V,3] / albedo [V,3] (numpy, float64 / int64),
    kps [9,3] (8 FPS keypoints then the centre), diameter (m), radius (largest vertex norm)."""

    def __init__(self, bunny_json, n_kps=8):
        self.vertices, self.faces = scene.load_bunny(bunny_json)
        self.normals = scene.vertex_normals(self.vertices, self.faces)
        self.albedo = vertex_albedo(self.vertices)
        self.kps = scene.model_keypoints(self.vertices, n_kps)
        v = self.vertices
        d2 = ((v[:, None] - v[None]) ** 2).sum(-1)
        self.diameter = float(np.sqrt(d2.max()))
        self.radius = float(np.sqrt((v ** 2).sum(1).max()))
