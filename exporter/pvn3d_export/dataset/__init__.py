"""Synthetic bunny scenes for training and testing PVN3D (the project's generator).

    from pvn3d_export.dataset import BunnyDataset
    ds = BunnyDataset(bunny_json_path, device="cuda", h=64, w=64, n_points=1024)
    batch = ds.batch(split="train", indices=range(256))

Modules: camera (intrinsics, the crop, rays), model (the bunny, its keypoints and appearance),
sampling (per-sample scene parameters from numpy), hashrng (per-pixel counter-based noise),
raster (vectorised triangle z-buffer), shapes (analytic planes / spheres / boxes / cylinders),
render (scene composition, occluder search, shading), sensor (image and depth), labels (points,
labels, offsets), writer (PVT1 files), preview (contact sheet), core (BunnyDataset).
See exporter/README.md, "Dataset generator".
"""
from .core import (IMAGENET_MEAN, IMAGENET_STD, SPLITS, VERSION, BunnyDataset,  # noqa: F401
                   seed_of)
