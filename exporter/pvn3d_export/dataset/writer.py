"""Writes rendered samples as PVT1 files (exporter/pvn3d_export/pvt.py), one per sample, plus the
folder's model.bin and index.json. Deterministic: the same command writes byte-identical files."""
import json
import os

import numpy as np

from .. import pvt
from .core import SPLITS, VERSION, seed_of

SAMPLE_ENTRIES = ("image", "cld_rgb_nrm", "choose", "labels", "gt_R", "gt_t", "cam_K", "occlusion",
                  "seed")


def sample_name(split, index):
    return "%s_%06d.bin" % (split, index)


def sample_tensors(batch, b):
    """The ordered entries of sample b of a batch (numpy)."""
    g = lambda k: batch[k][b].detach().cpu().numpy()  # noqa: E731
    return [
        ("image", np.ascontiguousarray(g("image"), np.uint8)),
        ("cld_rgb_nrm", np.ascontiguousarray(g("cld_rgb_nrm")[None], np.float32)),
        ("choose", np.ascontiguousarray(g("choose")[None], np.int64)),
        ("labels", np.ascontiguousarray(g("labels")[None], np.uint8)),
        ("gt_R", np.ascontiguousarray(g("gt_R"), np.float32)),
        ("gt_t", np.ascontiguousarray(g("gt_t"), np.float32)),
        ("cam_K", np.ascontiguousarray(g("cam_K"), np.float32)),
        ("occlusion", np.array([g("occlusion")], np.float32)),
        ("seed", np.array([g("seed")], np.int64)),
    ]


def model_tensors(ds):
    return [("model_kps", ds.model_kps.cpu().numpy().astype(np.float32)),
            ("model_points", ds.model_points.cpu().numpy().astype(np.float32)),
            ("model_diameter", np.array([ds.model_diameter], np.float32))]


def write_split(ds, split, start, count, out_dir, batch_size=64, progress=None):
    """Render samples start .. start+count-1 of a split into out_dir; returns the index dict."""
    os.makedirs(out_dir, exist_ok=True)
    pvt.save(os.path.join(out_dir, "model.bin"), model_tensors(ds))
    samples = []
    for b0 in range(start, start + count, batch_size):
        idx = list(range(b0, min(b0 + batch_size, start + count)))
        batch = ds.batch(split, idx)
        for j, i in enumerate(idx):
            name = sample_name(split, i)
            pvt.save(os.path.join(out_dir, name), sample_tensors(batch, j))
            samples.append(dict(file=name, index=i, seed=seed_of(split, i),
                                occlusion=round(float(batch["occlusion"][j]), 6)))
        if progress:
            progress(len(samples))
    lo, hi = SPLITS[split]
    index = dict(generator=VERSION, split=split, seed_range=[lo, hi], start=start, count=count,
                 height=ds.h, width=ds.w, n_points=ds.n_points, model="model.bin",
                 entries=list(SAMPLE_ENTRIES), samples=samples)
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    return index
