"""A PNG contact sheet of rendered samples, to look at: per sample the image, the surfaces (bunny
green, table/wall grey, distractors blue, occluder red), the sensor depth (missing = magenta) and
the chosen points over the image (bunny points green, others yellow)."""
import numpy as np
from PIL import Image, ImageDraw

from . import camera, render, sampling

ID_COLOURS = np.zeros((render.NONE + 1, 3), np.uint8)
ID_COLOURS[0] = (40, 200, 60)
ID_COLOURS[1] = (150, 150, 150)
ID_COLOURS[2] = (90, 90, 90)
for _s in range(2, sampling.N_SLOTS):
    ID_COLOURS[1 + _s] = (60, 90, 220)
for _s in sampling.OCCLUDER_SLOT.values():
    ID_COLOURS[1 + _s] = (220, 50, 50)


def _up(a, k):
    return np.repeat(np.repeat(a, k, 0), k, 1)


def contact_sheet(batch, path, scale=3, cols=2, frames=None):
    """batch: BunnyDataset output with extras=True (one chunk); frames: optional full-frame
    uint8 images [B,480,640,3] of the same scenes (BunnyDataset.full_frame), shown with the crop
    window."""
    ex = batch["extras"]
    if isinstance(ex, list):
        raise ValueError("render the preview in one chunk")
    B, h, w, _ = batch["image"].shape
    img = batch["image"].cpu().numpy()
    ids = ex["ids"].cpu().numpy().reshape(B, h, w)
    dn = ex["depth_noisy"].cpu().numpy().reshape(B, h, w)
    choose = batch["choose"][:, 0].cpu().numpy()
    lab = batch["labels"].cpu().numpy()
    occ = batch["occlusion"].cpu().numpy()
    fw = int(round(h * scale * 4 / 3)) if frames is not None else 0
    tw, th = 4 * w * scale + 5 * 4 + (fw + 4 if fw else 0), h * scale + 18
    rows = (B + cols - 1) // cols
    sheet = Image.new("RGB", (cols * tw, rows * th), (255, 255, 255))
    dr = ImageDraw.Draw(sheet)
    for b in range(B):
        x0, y0 = (b % cols) * tw, (b // cols) * th
        tiles = [img[b], ID_COLOURS[ids[b]]]
        d = dn[b]
        ok = d > 0
        lo, hi = (d[ok].min(), d[ok].max()) if ok.any() else (0, 1)
        g = np.where(ok, 255 - (d - lo) / max(hi - lo, 1e-6) * 200, 0).astype(np.uint8)
        dep = np.stack([g, g, g], -1)
        dep[~ok] = (255, 0, 255)
        tiles.append(dep)
        pts = (img[b] // 2).copy()
        yy, xx = np.divmod(choose[b], w)
        pts[yy, xx] = np.where(lab[b][:, None] == 1, [60, 255, 60], [255, 230, 0])
        tiles.append(pts)
        for i, t in enumerate(tiles):
            sheet.paste(Image.fromarray(_up(t, scale)), (x0 + 4 + i * (w * scale + 4), y0 + 14))
        if frames is not None:
            fr = Image.fromarray(frames[b].cpu().numpy())
            k = batch["cam_K"][b].cpu().numpy().astype(np.float64)
            s, left, top = camera.frame_window(k)
            fd = ImageDraw.Draw(fr)
            fd.rectangle([left, top, left + s * w, top + s * h], outline=(255, 0, 0), width=3)
            fr = fr.resize((fw, h * scale), Image.BILINEAR)
            sheet.paste(fr, (x0 + 4 + 4 * (w * scale + 4), y0 + 14))
        dr.text((x0 + 4, y0 + 1), "seed %d  occlusion %.2f  bunny points %d"
                % (int(batch["seed"][b]), occ[b], int(lab[b].sum())), fill=(0, 0, 0))
    sheet.save(path)
