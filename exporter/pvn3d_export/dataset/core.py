"""BunnyDataset: synthetic PVN3D training / validation / test samples of the bunny, rendered on the
fly (CPU or CUDA), each a pure function of its split and index."""
import numpy as np
import torch

from . import labels as L
from . import model as M
from . import camera, render, sampling, sensor

VERSION = "bunny-scenes-1"
SPLITS = {"train": (0, 10 ** 9), "val": (10 ** 9, 10 ** 9 + 10 ** 6),
          "test": (2 * 10 ** 9, 2 * 10 ** 9 + 10 ** 6)}
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
N_KPS = 8


def seed_of(split, index):
    """The seed of sample `index` of a split: the split's first seed + index."""
    lo, hi = SPLITS[split]
    index = int(index)
    if not 0 <= index < hi - lo:
        raise IndexError("%s has %d samples; index %d" % (split, hi - lo, index))
    return lo + index


class BunnyDataset:
    """Synthetic bunny scenes for PVN3D.

        ds = BunnyDataset(bunny_json_path, device="cuda"|"cpu", h=64, w=64, n_points=1024)
        batch = ds.batch(split="train"|"val"|"test", indices=list_or_range)

    batch: a dict of tensors on ds.device (B = len(indices)):
      rgb [B,3,H,W] f32 (ImageNet-normalised image), cld_rgb_nrm [B,N,9] f32, choose [B,1,N] i64,
      labels [B,N] i64, kp_targ_ofst [B,8,N,3] f32, ctr_targ_ofst [B,1,N,3] f32 (point - keypoint on
      bunny points, 0 elsewhere), gt_R [B,3,3] f32, gt_t [B,3] f32, cam_K [B,3,3] f32,
      occlusion [B] f32, image [B,H,W,3] uint8 (and seed [B] i64).
    ds.model_kps [9,3], ds.model_points [V,3] (float32 tensors on ds.device), ds.model_diameter.
    Samples are rendered in chunks of at most `chunk` (default 128 on CPU, 1024 on CUDA); a sample
    does not depend on the chunk or the other samples rendered with it.
    """

    def __init__(self, bunny_json_path, device="cpu", h=64, w=64, n_points=1024, chunk=None):
        self.device = torch.device(device)
        self.h, self.w, self.n_points = int(h), int(w), int(n_points)
        self.chunk = int(chunk or (1024 if self.device.type == "cuda" else 128))
        self.model = M.BunnyModel(bunny_json_path, N_KPS)
        f32 = lambda a: torch.from_numpy(np.ascontiguousarray(a, np.float32)).to(self.device)  # noqa: E731
        self.model_t = dict(vertices=f32(self.model.vertices), normals=f32(self.model.normals),
                            albedo=f32(self.model.albedo),
                            faces=torch.from_numpy(self.model.faces.astype(np.int64)).to(self.device))
        self.model_kps = f32(self.model.kps)
        self.model_points = f32(self.model.vertices)
        self.model_diameter = float(np.float32(self.model.diameter))
        self._mean = f32(IMAGENET_MEAN).view(1, 3, 1, 1)
        self._std = f32(IMAGENET_STD).view(1, 3, 1, 1)

    def scene_params(self, seeds):
        return sampling.stack([sampling.sample_scene(int(s), self.model, self.h, self.w) for s in seeds])

    def render_seeds(self, seeds, extras=False):
        """The batch dict for explicit seeds (see the class comment); extras=True adds the
        renderer's per-pixel buffers (true depth, ids, normals, alone mask ...) and the scene
        parameters under 'extras'."""
        seeds = [int(s) for s in seeds]
        outs = [self._render(seeds[i:i + self.chunk], extras) for i in range(0, len(seeds), self.chunk)]
        if len(outs) == 1:
            return outs[0]
        out = {k: torch.cat([o[k] for o in outs], 0) for k in outs[0] if k != "extras"}
        if extras:
            out["extras"] = [o["extras"] for o in outs]
        return out

    def batch(self, split="train", indices=(0,), extras=False):
        return self.render_seeds([seed_of(split, i) for i in indices], extras)

    @torch.no_grad()
    def _render(self, seeds, extras):
        h, w, n = self.h, self.w, self.n_points
        params = self.scene_params(seeds)
        P = render.to_torch(params, self.device)
        rd = render.render(self.model_t, P, h, w)
        img = sensor.image(P, rd)  # [B,HW,3] uint8
        depth, valid = sensor.depth(P, rd, h, w)
        choose = L.choose_points(P["seeds"], valid, n)
        cld = L.points(P["K4"], depth, img, rd["normal"], choose, w)
        lab = (torch.gather(rd["ids"], 1, choose) == 0).to(torch.int64)
        kp_of, ctr_of, _ = L.targets(cld, lab, P["R"], P["t"], self.model_kps)
        B = len(seeds)
        image = img.view(B, h, w, 3)
        x = image.permute(0, 3, 1, 2).to(torch.float32) / torch.full((1, 1, 1, 1), 255.0, device=self.device)
        rgb = ((x - self._mean) / self._std).contiguous()
        K4 = P["K4"]
        cam_K = torch.zeros(B, 3, 3, device=self.device)
        cam_K[:, 0, 0], cam_K[:, 1, 1], cam_K[:, 0, 2], cam_K[:, 1, 2], cam_K[:, 2, 2] = \
            K4[:, 0], K4[:, 1], K4[:, 2], K4[:, 3], 1.0
        out = dict(rgb=rgb, cld_rgb_nrm=cld, choose=choose[:, None, :], labels=lab,
                   kp_targ_ofst=kp_of, ctr_targ_ofst=ctr_of, gt_R=P["R"], gt_t=P["t"], cam_K=cam_K,
                   occlusion=rd["occlusion"], image=image, seed=P["seed"])
        if extras:
            out["extras"] = dict(rd, depth_noisy=depth, depth_valid=valid, params=params, P=P)
        return out

    @torch.no_grad()
    def full_frame(self, split="test", indices=(0,)):
        """The same scenes seen through the whole 640x480 camera frame (LineMOD K), for looking at
        them: uint8 images [B,480,640,3] and the batch dict of the crops."""
        seeds = [seed_of(split, i) for i in indices]
        crop = self._render(seeds, extras=True)
        P = dict(crop["extras"]["P"])
        K = camera.LINEMOD_K
        P["K4"] = torch.tensor([[K[0, 0], K[1, 1], K[0, 2], K[1, 2]]], dtype=torch.float32,
                               device=self.device).expand(len(seeds), 4).contiguous()
        rd = render.render(self.model_t, P, camera.FRAME_H, camera.FRAME_W, place=False)
        img = sensor.image(P, rd).view(len(seeds), camera.FRAME_H, camera.FRAME_W, 3)
        return img, crop
