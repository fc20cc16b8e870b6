#!/usr/bin/env -S /usr/bin/python3
"""Train PVN3D (pvn3d_export/pvn3d/) on synthetic bunny scenes, with the PointNet++ operators on
libpvn3d_ops (ops.use_backend("native")), in runs that stop cleanly and resume exactly.

Data: pvn3d_export.dataset.BunnyDataset (made on the fly, on the training device): the training
batch of step s holds the samples [seen, seen + batch) of split "train" (seen = samples used so
far), the validation set is the first --n-val samples of split "val".

Losses (PVN3D's train_linemod.py): focal loss (gamma 2) on the per-point segmentation, PVN3D's
OFLoss (L1 over the object points, / (n_object_points + 1e-3)) on the keypoint and centre offsets,
loss = 2.0 * seg + 1.0 * kp + 1.0 * ctr. Adam (weight decay 0), linear warm-up then cosine decay.

Writes into --out: log.jsonl, val.jsonl, curves.png, last.pt (the full training state: model,
optimiser, scheduler, scaler, step, RNG states, best validation), best.pt, and state_dict.pt (the
best model's plain state dict, for `export_pvn3d.py --checkpoint`) with state_dict.json (the model
configuration, which export_pvn3d.py reads).

Usage (from the repository root; build the library first, see exporter/README.md):
  /usr/bin/python3 exporter/train_pvn3d.py --bunny-json bunny.json --out runs/tiny --time-limit 540
  /usr/bin/python3 exporter/train_pvn3d.py --bunny-json bunny.json --out runs/tiny --resume auto \\
      --time-limit 540        # continues from runs/tiny/last.pt, until --steps are done
"""
import argparse
import contextlib
import importlib
import inspect
import json
import math
import os
import random
import signal
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from pvn3d_export import native_ops, ops  # noqa: E402
from pvn3d_export.pvn3d import model as M  # noqa: E402
from pvn3d_export.pvn3d import pose as P  # noqa: E402

CHECKPOINT_FORMAT = "pvn3d-train/1"
MODEL_CONFIG_FORMAT = "pvn3d-model-config/1"
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

# Every option, with its default. The model options are fixed by the first run: a resumed run takes
# them from the checkpoint. The others come from the command line when given there, else from the
# checkpoint, else from here.
MODEL_KEYS = ("width", "trunk_dilation", "npoints", "n_classes", "height", "width_px", "points")
DEFAULTS = dict(
    # model and data
    width="tiny", trunk_dilation="2,4", npoints=None, n_classes=2, height=64, width_px=64,
    points=1024, dataset="pvn3d_export.dataset:BunnyDataset", bunny_json=None,
    # optimisation
    steps=20000, batch_size=32, lr=1e-3, min_lr=1e-5, warmup=500, weight_decay=0.0,
    grad_clip=0.0, amp="auto", seg_loss="focal", focal_gamma=2.0, w_seg=2.0, w_kp=1.0, w_ctr=1.0,
    of_reduction="mean", aug=1, seed=1, ops="native", init=None, init_step=None,
    # validation, logging, checkpoints
    n_val=256, val_batch=64, val_every=500, log_every=50, ckpt_every=500, bandwidth=0.08,
    pose_max_iter=300,
)


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------------
# losses


def focal_loss(logits, labels, gamma=2.0):
    """PVN3D's FocalLoss (size_average): the mean over points of -(1 - pt)^gamma * log(pt), pt the
    softmax probability of the true class. As in PVN3D (pt = Variable(logpt.data.exp())) the factor
    (1 - pt)^gamma is a constant weight for the gradient. gamma = 0 is cross-entropy.
    logits [..., C] (any float dtype; computed in float32), labels [...] int64."""
    c = logits.shape[-1]
    logp = F.log_softmax(logits.reshape(-1, c).float(), dim=1)
    logpt = logp.gather(1, labels.reshape(-1, 1)).squeeze(1)
    if gamma == 0:
        return -logpt.mean()
    pt = logpt.detach().exp()
    return (-((1.0 - pt) ** gamma) * logpt).mean()


def of_loss(pred, targ, labels):
    """PVN3D's OFLoss: pred, targ [B,K,N,3], labels [B,N] -> [B,K]: for each item and keypoint,
    sum over the object points (labels > 0) and the three coordinates of |pred - targ|, divided by
    (number of object points + 1e-3)."""
    w = (labels > 1e-8).float()[:, None, :, None]  # [B,1,N,1]
    diff = (pred.float() - targ.float()).abs() * w
    return diff.sum(dim=(2, 3)) / (w.sum(dim=(2, 3)) + 1e-3)


def pvn3d_loss(outs, batch, cfg):
    """-> (total, dict of float tensors seg, kp, ctr). kp/ctr: OFLoss summed over the keypoints,
    averaged over the batch (of_reduction "mean") or summed over it (PVN3D's code: "sum")."""
    seg, kp, ctr = outs[0], outs[1], outs[2]
    labels = batch["labels"]
    if cfg["seg_loss"] == "focal":
        l_seg = focal_loss(seg, labels, cfg["focal_gamma"])
    else:
        l_seg = F.cross_entropy(seg.reshape(-1, seg.shape[-1]).float(), labels.reshape(-1))
    red = (lambda x: x.sum(1).sum()) if cfg["of_reduction"] == "sum" else (lambda x: x.sum(1).mean())
    l_kp = red(of_loss(kp, batch["kp_targ_ofst"], labels))
    l_ctr = red(of_loss(ctr, batch["ctr_targ_ofst"], labels))
    total = cfg["w_seg"] * l_seg + cfg["w_kp"] * l_kp + cfg["w_ctr"] * l_ctr
    return total, dict(seg=l_seg.detach(), kp=l_kp.detach(), ctr=l_ctr.detach())


# ---------------------------------------------------------------------------------------------
# pose metrics (spec/ops.md)


def pose_errors(R, t, gt_R, gt_t, model_points, chunk=8):
    """ADD and ADD-S (metres) of poses R [B,3,3], t [B,3] against gt_R, gt_t for model_points
    [V,3]: ADD = mean_i |(R x_i + t) - (R* x_i + t*)|, ADD-S = mean_i min_j |(R x_i + t) -
    (R* x_j + t*)|. A pose with a NaN (no object point found) gives +inf for both."""
    pts = model_points.to(R.dtype)
    add, adds = [], []
    for i in range(0, R.shape[0], chunk):
        pred = torch.matmul(pts, R[i:i + chunk].transpose(1, 2)) + t[i:i + chunk, None, :]
        gt = torch.matmul(pts, gt_R[i:i + chunk].transpose(1, 2)) + gt_t[i:i + chunk, None, :]
        d_same = torch.sqrt(((pred - gt) ** 2).sum(-1))  # [b,V]
        dist = torch.cdist(pred, gt, compute_mode="donot_use_mm_for_euclid_dist")  # [b,V,V]
        add.append(d_same.mean(1))
        adds.append(torch.minimum(dist.min(2).values, d_same).mean(1))
    add, adds = torch.cat(add), torch.cat(adds)
    bad = ~(torch.isfinite(add) & torch.isfinite(adds))
    inf = torch.full_like(add, float("inf"))
    return torch.where(bad, inf, add), torch.where(bad, inf, adds)


def solve_poses(cld_rgb_nrm, seg, kp, ctr, model_kps, bandwidth=0.08, max_iter=300):
    """PVN3D's pose stage on network outputs: votes = point - offset (keypoints, then the centre),
    mask = argmax class 1, mean shift + Kabsch (libpvn3d_ops' PoseSolve, on the outputs' device).
    -> R [B,3,3], t [B,3], kps [B,9,3], inliers [B]."""
    votes, mask = P.votes_and_mask(cld_rgb_nrm.float(), seg.float(), kp.float(), ctr.float())
    return native_ops.pose_solve(votes.contiguous(), mask.contiguous(),
                                 model_kps.float().contiguous(), bandwidth, max_iter, 1)


# ---------------------------------------------------------------------------------------------
# schedule, augmentation, model


INIT_RAMP = 200


def lr_factor(step, cfg):
    """Linear warm-up from min_lr to lr over `warmup` steps, then cosine decay to min_lr at `steps`.
    A run warm-started with --init (weights only, fresh Adam moments) continues the schedule at the
    state dict's step, ramped up from a tenth over INIT_RAMP steps while the moments rebuild."""
    f = _schedule(step, cfg)
    start = cfg.get("init_step")
    if start is not None:
        f *= min(1.0, 0.1 + 0.9 * (step - start) / INIT_RAMP)
    return f


def _schedule(step, cfg):
    lo = cfg["min_lr"] / cfg["lr"]
    warm = max(int(cfg["warmup"]), 0)
    if step < warm:
        return lo + (1.0 - lo) * step / warm
    total = max(int(cfg["steps"]) - warm, 1)
    p = min(max(step - warm, 0) / total, 1.0)
    return lo + (1.0 - lo) * 0.5 * (1.0 + math.cos(math.pi * p))


_CONSTS = {}


def _to_device(t, device):
    """A small CPU tensor on `device` without synchronising (pinned memory, non-blocking copy: a
    plain host-to-device copy would wait for all the work queued on the stream)."""
    if device.type != "cuda":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def _imagenet(device):
    if device not in _CONSTS:
        _CONSTS[device] = (_to_device(torch.tensor(IMAGENET_MEAN), device),
                           _to_device(torch.tensor(IMAGENET_STD), device))
    return _CONSTS[device]


def augment(batch, gen):
    """Photometric jitter (per sample: brightness x U(0.8,1.2), per-channel gain U(0.9,1.1), offset
    U(-0.04,0.04)) applied alike to the image (rgb) and to the point colours (cld_rgb_nrm[...,3:6]);
    random numbers from the CPU generator `gen` (saved in checkpoints). Geometry is untouched."""
    rgb, cld = batch["rgb"], batch["cld_rgb_nrm"]
    B = rgb.shape[0]
    r = _to_device(torch.rand(B, 7, generator=gen), rgb.device)
    gain = (0.8 + 0.4 * r[:, :1]) * (0.9 + 0.2 * r[:, 1:4])  # [B,3]
    off = -0.04 + 0.08 * r[:, 4:7]
    mean, std = _imagenet(rgb.device)
    img = rgb * std.view(1, 3, 1, 1) + mean.view(1, 3, 1, 1)
    img = (img * gain.view(B, 3, 1, 1) + off.view(B, 3, 1, 1)).clamp(0, 1)
    out = dict(batch)
    out["rgb"] = ((img - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)).to(rgb.dtype)
    col = (cld[..., 3:6] * gain.view(B, 1, 3) + off.view(B, 1, 3)).clamp(0, 1)
    out["cld_rgb_nrm"] = torch.cat([cld[..., :3], col.to(cld.dtype), cld[..., 6:]], dim=2)
    return out


def _ints(v):
    if v is None or isinstance(v, (list, tuple)):
        return None if v is None else [int(x) for x in v]
    return [int(x) for x in str(v).split(",")]


def model_config(cfg):
    """The JSON written beside state_dict.pt (export_pvn3d.py --checkpoint reads it)."""
    return dict(format=MODEL_CONFIG_FORMAT, width=cfg["width"], n_classes=int(cfg["n_classes"]),
                n_kps=8, trunk_dilation=_ints(cfg["trunk_dilation"]),
                npoints=_ints(cfg["npoints"]) or list(M.config(cfg["width"])["pointnet"]["npoints"]),
                height_px=int(cfg["height"]), width_px=int(cfg["width_px"]), points=int(cfg["points"]))


def build_model(cfg):
    """torch's default initialisation after manual_seed(seed), with the last layer of both offset
    heads scaled by 0.1 (offsets start at centimetres, not metres; as model.seed_and_calibrate)."""
    torch.manual_seed(int(cfg["seed"]))
    mc = model_config(cfg)
    net = M.PVN3D(mc["width"], n_classes=mc["n_classes"], n_kps=mc["n_kps"],
                  dilations=tuple(mc["trunk_dilation"]), npoints=mc["npoints"], index_outputs=False)
    with torch.no_grad():
        for head in (net.KpOF_layer, net.CtrOf_layer):
            last = head[len(head) - 1].conv
            last.weight.mul_(0.1)
            last.bias.mul_(0.1)
    return net


def load_dataset(cfg, device):
    mod, _, cls = cfg["dataset"].partition(":")
    try:
        factory = getattr(importlib.import_module(mod), cls or "BunnyDataset")
    except ImportError as e:
        raise SystemExit("cannot import the dataset %s (%s); --dataset MODULE:CLASS names another"
                         % (cfg["dataset"], e))
    if cfg["dataset"] == DEFAULTS["dataset"] and not cfg["bunny_json"]:
        raise SystemExit("--bunny-json is needed (exporter/fetch_bunny.sh writes it)")
    return factory(cfg["bunny_json"], device=str(device), h=int(cfg["height"]), w=int(cfg["width_px"]),
                   n_points=int(cfg["points"]))


def bn_report(model):
    """(number of BatchNorm layers, min running_var, max |running_mean|, all finite)."""
    vmin, mmax, finite, n = float("inf"), 0.0, True, 0
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_var is not None:
            n += 1
            finite &= bool(torch.isfinite(m.running_var).all() and torch.isfinite(m.running_mean).all())
            vmin = min(vmin, float(m.running_var.min()))
            mmax = max(mmax, float(m.running_mean.abs().max()))
    return n, vmin, mmax, finite


# ---------------------------------------------------------------------------------------------
# validation


def _float_tensor(x, device):
    """A float32 tensor on `device` from a tensor (on any device) or an array."""
    if torch.is_tensor(x):
        return x.detach().to(device=device, dtype=torch.float32)
    return torch.as_tensor(np.asarray(x), dtype=torch.float32).to(device)


class Validator:
    """The fixed validation set (the first n_val samples of split "val", made once and kept on the
    device) and its metrics."""

    def __init__(self, ds, cfg, device):
        self.cfg = cfg
        self.batches = []
        n, vb = int(cfg["n_val"]), max(int(cfg["val_batch"]), 1)
        for i in range(0, n, vb):
            b = ds.batch(split="val", indices=list(range(i, min(i + vb, n))))
            keep = ("rgb", "cld_rgb_nrm", "choose", "labels", "kp_targ_ofst", "ctr_targ_ofst", "gt_R",
                    "gt_t")
            self.batches.append({k: b[k] for k in keep})
        self.model_kps = _float_tensor(ds.model_kps, device)
        self.model_points = _float_tensor(ds.model_points, device)
        self.diameter = float(ds.model_diameter)

    @torch.no_grad()
    def run(self, model, autocast):
        was_training = model.training
        model.eval()
        t0 = time.time()
        tot = dict(points=0, correct=0, inter=0, union=0, obj=0, kp_err=0.0, ctr_err=0.0)
        add_all, adds_all, inl_all = [], [], []
        for b in self.batches:
            with autocast():
                outs = model(b["rgb"], b["cld_rgb_nrm"], b["choose"])
            seg, kp, ctr = (o.float() for o in outs[:3])
            lab = b["labels"]
            pred = seg.argmax(2)
            tot["points"] += lab.numel()
            tot["correct"] += int((pred == lab).sum())
            tot["inter"] += int(((pred == 1) & (lab == 1)).sum())
            tot["union"] += int(((pred == 1) | (lab == 1)).sum())
            obj = (lab == 1).float()  # [B,N]
            tot["obj"] += int(obj.sum())
            tot["kp_err"] += float((torch.linalg.norm(kp - b["kp_targ_ofst"], dim=3)
                                    * obj[:, None]).sum() / kp.shape[1])
            tot["ctr_err"] += float((torch.linalg.norm(ctr - b["ctr_targ_ofst"], dim=3)
                                     * obj[:, None]).sum())
            R, t, _, inl = solve_poses(b["cld_rgb_nrm"], seg, kp, ctr, self.model_kps,
                                       self.cfg["bandwidth"], int(self.cfg["pose_max_iter"]))
            add, adds = pose_errors(R, t, b["gt_R"].float(), b["gt_t"].float(), self.model_points)
            add_all.append(add.cpu())
            adds_all.append(adds.cpu())
            inl_all.append(inl.cpu())
        native_ops.check_index_errors()
        add, adds, inl = torch.cat(add_all), torch.cat(adds_all), torch.cat(inl_all)
        thr = 0.1 * self.diameter
        ok = torch.isfinite(add)

        def fmean(x):
            return float(x[ok].mean()) if bool(ok.any()) else float("nan")

        def fmedian(x):
            return float(x[ok].median()) if bool(ok.any()) else float("nan")
        nbn, vmin, mmax, finite = bn_report(model)
        res = dict(
            n=int(add.numel()),
            seg_acc=tot["correct"] / max(tot["points"], 1),
            seg_iou=tot["inter"] / max(tot["union"], 1),
            kp_err_mm=1000.0 * tot["kp_err"] / max(tot["obj"], 1),
            ctr_err_mm=1000.0 * tot["ctr_err"] / max(tot["obj"], 1),
            add_acc=float((add < thr).float().mean()),
            adds_acc=float((adds < thr).float().mean()),
            add_mean_mm=1000.0 * fmean(add), add_median_mm=1000.0 * fmedian(add),
            adds_mean_mm=1000.0 * fmean(adds),
            pose_found=float(ok.float().mean()), inliers_mean=float(inl.float().mean()),
            threshold_mm=1000.0 * thr,
            bn_layers=nbn, bn_min_var=vmin, bn_max_abs_mean=mmax, bn_finite=finite,
            val_time_s=time.time() - t0)
        model.train(was_training)
        return res


def score(res):
    """Best-model order: ADD accuracy (10% of the diameter), then the mean keypoint error."""
    return (res["add_acc"], -res["kp_err_mm"])


# ---------------------------------------------------------------------------------------------
# checkpoints and logs


def torch_load(path):
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # a torch without weights_only
        return torch.load(path, map_location="cpu")


def save_atomic(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def write_json_atomic(obj, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def read_jsonl(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass  # a line cut by a kill
    return out


def truncate_jsonl(path, max_step):
    """Drop records after max_step (written by a run killed after its last checkpoint)."""
    if not os.path.exists(path):
        return
    keep = [r for r in read_jsonl(path) if r.get("step", 0) <= max_step]
    with open(path, "w") as f:
        for r in keep:
            f.write(json.dumps(r) + "\n")


def append_jsonl(path, rec):
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def plot_curves(out_dir):
    try:
        import matplotlib
    except ImportError:  # the curves are a picture of log.jsonl and val.jsonl: a run goes on without them
        if not getattr(plot_curves, "warned", False):
            print("train_pvn3d: no matplotlib (apt-get install python3-matplotlib): curves.png not drawn",
                  file=sys.stderr, flush=True)
            plot_curves.warned = True
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tr = read_jsonl(os.path.join(out_dir, "log.jsonl"))
    va = read_jsonl(os.path.join(out_dir, "val.jsonl"))
    fig, ax = plt.subplots(2, 2, figsize=(12, 8))
    if tr:
        s = [r["step"] for r in tr]
        for k in ("loss", "seg", "kp", "ctr"):
            ax[0, 0].plot(s, [max(r[k], 1e-12) for r in tr], label=k)
        ax[0, 0].set_yscale("log")
        ax[0, 0].legend(loc="upper right")
        ax[0, 1].plot(s, [r["lr"] for r in tr], color="k")
        ax[0, 1].set_yscale("log")
    ax[0, 0].set_title("training losses")
    ax[0, 1].set_title("learning rate")
    if va:
        s = [r["step"] for r in va]
        for k in ("seg_acc", "seg_iou", "add_acc", "adds_acc"):
            ax[1, 0].plot(s, [r[k] for r in va], marker=".", label=k)
        ax[1, 0].set_ylim(0, 1.02)
        ax[1, 1].plot(s, [r["kp_err_mm"] for r in va], marker=".", label="keypoint offset error")
        ax[1, 1].plot(s, [r["ctr_err_mm"] for r in va], marker=".", label="centre offset error")
        ax[1, 1].plot(s, [r["add_median_mm"] for r in va], marker=".", label="median ADD")
        ax[1, 1].axhline(va[-1]["threshold_mm"], color="gray", ls="--", lw=0.8, label="10% diameter")
        ax[1, 1].set_yscale("log")
        ax[1, 0].legend(loc="lower right")
        ax[1, 1].legend(loc="upper right")
    ax[1, 0].set_title("validation: segmentation, pose accuracy (< 10% diameter)")
    ax[1, 1].set_title("validation errors (mm, object points)")
    for a in ax.flat:
        a.set_xlabel("step")
        a.grid(alpha=0.3)
    fig.tight_layout()
    tmp = os.path.join(out_dir, "curves.tmp.png")
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    os.replace(tmp, os.path.join(out_dir, "curves.png"))


# ---------------------------------------------------------------------------------------------
# the trainer


class Trainer:
    def __init__(self, cfg, device, out_dir, dataset=None, resume=None, start_time=None):
        self.cfg, self.device, self.out = cfg, torch.device(device), out_dir
        self.t_start = start_time or time.time()
        os.makedirs(out_dir, exist_ok=True)
        # native: this project's kernels (libpvn3d_ops); reference: the plain-PyTorch operators (slow
        # FPS, no custom library), a fallback where the library cannot be loaded
        ops.set_backend(cfg.get("ops", "native"))
        if self.device.type == "cuda":
            torch.backends.cudnn.benchmark = True
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        amp = cfg["amp"]
        if amp == "auto":
            amp = "bf16" if self.device.type == "cuda" else "off"
        self.amp_dtype = {"off": None, "bf16": torch.bfloat16, "fp16": torch.float16}[amp]
        self.model = build_model(cfg).to(self.device).train()
        kw = {}
        if self.device.type == "cuda" and "fused" in inspect.signature(torch.optim.Adam).parameters:
            kw["fused"] = True  # one kernel for the whole update (torch >= 2.0)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg["lr"],
                                    weight_decay=cfg["weight_decay"], **kw)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: lr_factor(s, self.cfg))
        self.scaler = _grad_scaler(self.amp_dtype == torch.float16 and self.device.type == "cuda")
        self.aug_gen = torch.Generator().manual_seed(int(cfg["seed"]) + 17)
        self.step, self.seen, self.best, self.next_val = 0, 0, None, int(cfg["val_every"])
        self.last_val = None
        self.train_time = 0.0
        if resume:
            self._restore(resume)
        elif cfg.get("init"):
            self._warm_start(cfg["init"])
        self.ds = dataset if dataset is not None else load_dataset(cfg, self.device)
        self.validator = None
        self.stop_reason = None

    # -- state

    def autocast(self):
        if self.amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.amp_dtype)

    def state(self):
        nps = np.random.get_state()  # numpy's key array as a tensor: the checkpoint stays loadable
        rng = dict(torch=torch.get_rng_state(), aug=self.aug_gen.get_state(),  # with weights_only
                   numpy=(nps[0], torch.from_numpy(nps[1].astype(np.int64)), int(nps[2]), int(nps[3]),
                          float(nps[4])),
                   python=random.getstate())
        if torch.cuda.is_available():
            rng["cuda"] = torch.cuda.get_rng_state_all()
        return dict(format=CHECKPOINT_FORMAT, step=self.step, samples_seen=self.seen,
                    model=self.model.state_dict(), optimizer=self.opt.state_dict(),
                    scheduler=self.sched.state_dict(),
                    scaler=self.scaler.state_dict() if self.scaler is not None else None,
                    rng=rng, best=self.best, next_val_step=self.next_val,
                    last_val_step=self.last_val, config=dict(self.cfg),
                    model_config=model_config(self.cfg), train_time_s=self.train_time,
                    torch_version=torch.__version__)

    def _restore(self, path):
        ck = torch_load(path)
        if ck.get("format") != CHECKPOINT_FORMAT:
            raise SystemExit("%s is not a training checkpoint of this trainer (format %r)"
                             % (path, ck.get("format")))
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["optimizer"])
        self.sched.load_state_dict(ck["scheduler"])
        if self.scaler is not None and ck.get("scaler"):
            self.scaler.load_state_dict(ck["scaler"])
        rng = ck["rng"]
        torch.set_rng_state(rng["torch"])
        self.aug_gen.set_state(rng["aug"])
        nps = rng["numpy"]
        np.random.set_state((nps[0], nps[1].numpy().astype(np.uint32), nps[2], nps[3], nps[4]))
        random.setstate(rng["python"])
        if "cuda" in rng and torch.cuda.is_available() and len(rng["cuda"]) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(rng["cuda"])
        self.step, self.seen = int(ck["step"]), int(ck["samples_seen"])
        self.best, self.next_val = ck.get("best"), int(ck.get("next_val_step", self.step))
        self.last_val = ck.get("last_val_step")
        self.train_time = float(ck.get("train_time_s", 0.0))
        for name in ("log.jsonl", "val.jsonl"):
            truncate_jsonl(os.path.join(self.out, name), self.step)
        log("resumed from %s at step %d (%d samples seen)" % (path, self.step, self.seen))

    def _warm_start(self, path):
        """Weights (and BatchNorm statistics) from a plain state dict and the step / samples seen
        that its JSON records; the optimiser starts fresh (see lr_factor)."""
        try:
            self.model.load_state_dict(torch_load(path))
        except Exception as e:  # not a torch file, or a state dict of another width (a page of size mismatches)
            raise SystemExit("--init %s does not fit this %s model: %s" % (path, self.cfg["width"], str(e).splitlines()[0]))
        meta = os.path.splitext(path)[0] + ".json"
        trained = {}
        if os.path.isfile(meta):
            with open(meta) as f:
                trained = json.load(f).get("trained") or {}
        self.step, self.seen = int(trained.get("step", 0)), int(trained.get("samples_seen", 0))
        self.cfg["init_step"] = self.step
        self.next_val = self.step + int(self.cfg["val_every"])
        self.sched.last_epoch = self.step
        for g in self.opt.param_groups:
            g["lr"] = float(self.cfg["lr"]) * lr_factor(self.step, self.cfg)
        log("warm start from %s at step %d (%d samples seen), fresh optimiser" % (path, self.step, self.seen))

    def save(self, name="last.pt"):
        t0 = time.time()
        save_atomic(self.state(), os.path.join(self.out, name))
        return time.time() - t0

    def _save_best(self, res):
        self.best = dict(step=self.step, score=list(score(res)), metrics=res)
        self.save("best.pt")
        sd = {k: v.detach().cpu() for k, v in self.model.state_dict().items()}
        save_atomic(sd, os.path.join(self.out, "state_dict.pt"))
        mc = model_config(self.cfg)
        mc["trained"] = dict(step=self.step, samples_seen=self.seen,
                             val={k: res[k] for k in ("n", "seg_acc", "seg_iou", "kp_err_mm",
                                                      "ctr_err_mm", "add_acc", "adds_acc",
                                                      "add_median_mm", "threshold_mm")})
        mc["model_kps"] = [[float(v) for v in row] for row in self.validator.model_kps.cpu()]
        write_json_atomic(mc, os.path.join(self.out, "state_dict.json"))

    # -- steps

    def train_batch(self):
        cfg = self.cfg
        B = int(cfg["batch_size"])
        batch = self.ds.batch(split="train", indices=list(range(self.seen, self.seen + B)))
        if int(cfg["aug"]):
            batch = augment(batch, self.aug_gen)
        return batch

    def train_step(self, batch):
        with self.autocast():
            outs = self.model(batch["rgb"], batch["cld_rgb_nrm"], batch["choose"])
        loss, parts = pvn3d_loss(outs, batch, self.cfg)
        self.opt.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.opt)
        else:
            loss.backward()
        if float(self.cfg["grad_clip"]) > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), float(self.cfg["grad_clip"]))
        if self.scaler is not None:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        self.sched.step()
        self.step += 1
        self.seen += int(batch["rgb"].shape[0])
        parts["loss"] = loss.detach()
        return parts

    def validate(self):
        if self.validator is None:
            self.validator = Validator(self.ds, self.cfg, self.device)
        res = self.validator.run(self.model, self.autocast)
        self.last_val = self.step
        res["step"] = self.step
        res["samples_seen"] = self.seen
        append_jsonl(os.path.join(self.out, "val.jsonl"), res)
        improved = self.best is None or tuple(score(res)) > tuple(self.best["score"])
        log("val step %d: seg acc %.4f IoU %.4f | kp err %.1f mm, ctr err %.1f mm | ADD<0.1d "
            "%.3f ADD-S<0.1d %.3f (median ADD %.1f mm, threshold %.1f mm, pose found %.3f) | "
            "%.1f s%s" % (self.step, res["seg_acc"], res["seg_iou"], res["kp_err_mm"],
                          res["ctr_err_mm"], res["add_acc"], res["adds_acc"], res["add_median_mm"],
                          res["threshold_mm"], res["pose_found"], res["val_time_s"],
                          " (best)" if improved else ""))
        if not res["bn_finite"]:
            log("WARNING: BatchNorm running statistics hold non-finite values")
        if improved:
            self._save_best(res)
        plot_curves(self.out)
        return res

    def run(self, time_limit=None, stop_after=None):
        cfg = self.cfg
        total = int(cfg["steps"])
        log_every = max(int(cfg["log_every"]), 1)
        stop = {"signal": None}

        def on_signal(signum, frame):
            stop["signal"] = signum
        old = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                old[sig] = signal.signal(sig, on_signal)
            except ValueError:  # not the main thread: no signal handling
                pass
        est_save, est_val = 2.0, None
        steps_this_run = 0
        acc, n_acc = None, 0
        t_log, step_log = time.time(), self.step
        step_time = None
        try:
            if self.step > 0 and self.last_val != self.step and (
                    self.step >= self.next_val or self.step >= total):
                # a validation that the last run had to leave out for lack of time
                est_val = self._validate_timed()
            while self.step < total:
                if stop["signal"] is not None:
                    self.stop_reason = "signal %d" % stop["signal"]
                    break
                if stop_after is not None and steps_this_run >= stop_after:
                    self.stop_reason = "--stop-after %d" % stop_after
                    break
                if time_limit is not None:
                    left = time_limit - (time.time() - self.t_start)
                    if left < est_save + 3 * (step_time or 1.0) + 5:
                        self.stop_reason = "time limit"
                        break
                t0 = time.time()
                parts = self.train_step(self.train_batch())
                steps_this_run += 1
                acc = parts if acc is None else {k: acc[k] + parts[k] for k in acc}
                n_acc += 1
                dt = time.time() - t0
                step_time = dt if step_time is None else 0.9 * step_time + 0.1 * dt
                if self.step % log_every == 0 or self.step == total:
                    self._log(acc, n_acc, t_log, step_log)
                    acc, n_acc = None, 0
                    t_log, step_log = time.time(), self.step
                if self.step >= self.next_val or self.step == total:
                    need = est_val if est_val is not None else 20.0  # first one: a guess
                    if time_limit is not None and \
                            time.time() - self.t_start + need + est_save + 5 > time_limit:
                        log("validation at step %d left to the next run (time limit)" % self.step)
                        self.stop_reason = "time limit"
                        break
                    est_val = self._validate_timed()
                if self.step % int(cfg["ckpt_every"]) == 0:
                    est_save = self.save()
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        if acc is not None:
            self._log(acc, n_acc, t_log, step_log)
        est_save = self.save()
        plot_curves(self.out)
        if self.step >= total and self.stop_reason is None:
            self.stop_reason = "done (%d steps)" % total
        log("stopped at step %d: %s; saved %s (%.1f s)" % (
            self.step, self.stop_reason, os.path.join(self.out, "last.pt"), est_save))
        return self.step

    def _validate_timed(self):
        t0 = time.time()
        self.validate()
        while self.next_val <= self.step:
            self.next_val += int(self.cfg["val_every"])
        return time.time() - t0

    def _log(self, acc, n, t_log, step_log):
        vals = {k: float(v) / n for k, v in acc.items()}  # synchronises
        native_ops.check_index_errors()
        now = time.time()
        dt = max(now - t_log, 1e-9)
        self.train_time += dt
        steps = self.step - step_log
        rec = dict(step=self.step, samples=self.seen, lr=self.sched.get_last_lr()[0],
                   steps_per_s=steps / dt, samples_per_s=steps * int(self.cfg["batch_size"]) / dt,
                   time_s=now - self.t_start, **vals)
        append_jsonl(os.path.join(self.out, "log.jsonl"), rec)
        log("step %d/%d loss %.4f (seg %.4f kp %.4f ctr %.4f) lr %.2e | %.2f steps/s %.1f samples/s"
            " | %.0f s" % (self.step, int(self.cfg["steps"]), vals["loss"], vals["seg"], vals["kp"],
                           vals["ctr"], rec["lr"], rec["steps_per_s"], rec["samples_per_s"],
                           rec["time_s"]))


def _grad_scaler(enabled):
    if not enabled:
        return None
    try:
        return torch.amp.GradScaler("cuda")
    except (AttributeError, TypeError):
        return torch.cuda.amp.GradScaler()


# ---------------------------------------------------------------------------------------------
# command line


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    d = DEFAULTS
    a = ap.add_argument
    a("--out", required=True, help="output folder (logs, checkpoints, curves.png, state_dict.pt)")
    a("--resume", help="a last.pt/best.pt to continue from, or 'auto' (= OUT/last.pt when it exists)")
    a("--time-limit", type=float, help="seconds since start after which the run stops cleanly and "
                                       "saves (validations that would not fit are left to the next run)")
    a("--stop-after", type=int, help="stop (and save) after this many steps in this run")
    a("--device", help="cuda or cpu (default: cuda when available)")
    g = ap.add_argument_group("model and data (fixed by the first run)")
    g.add_argument("--width", choices=sorted(M.CONFIGS), help="network width (%s)" % d["width"])
    g.add_argument("--trunk-dilation", help="ResNet layer3,layer4 dilation (%s)" % d["trunk_dilation"])
    g.add_argument("--npoints", help="SA npoints, e.g. 256,128,64,32 (the width's default)")
    g.add_argument("--n-classes", type=int, help="(%d)" % d["n_classes"])
    g.add_argument("--height", type=int, help="image height (%d)" % d["height"])
    g.add_argument("--width-px", type=int, help="image width (%d)" % d["width_px"])
    g.add_argument("--points", type=int, help="points per sample (%d)" % d["points"])
    g.add_argument("--dataset", help="MODULE:CLASS of the dataset (%s)" % d["dataset"])
    g.add_argument("--bunny-json", help="bunny.json (exporter/fetch_bunny.sh) for the dataset")
    g = ap.add_argument_group("optimisation")
    g.add_argument("--steps", type=int, help="total steps, all runs together (%d)" % d["steps"])
    g.add_argument("--batch-size", type=int, help="(%d)" % d["batch_size"])
    g.add_argument("--lr", type=float, help="peak learning rate (%g)" % d["lr"])
    g.add_argument("--min-lr", type=float, help="start and end learning rate (%g)" % d["min_lr"])
    g.add_argument("--warmup", type=int, help="warm-up steps (%d)" % d["warmup"])
    g.add_argument("--weight-decay", type=float, help="Adam weight decay (%g, as PVN3D)" % d["weight_decay"])
    g.add_argument("--grad-clip", type=float, help="max gradient norm, 0 = off (%g)" % d["grad_clip"])
    g.add_argument("--amp", choices=("auto", "off", "bf16", "fp16"),
                   help="autocast (auto: bf16 on CUDA, off on CPU); the custom ops run in float32")
    g.add_argument("--seg-loss", choices=("focal", "ce"), help="(%s)" % d["seg_loss"])
    g.add_argument("--focal-gamma", type=float, help="(%g)" % d["focal_gamma"])
    g.add_argument("--w-seg", type=float, help="segmentation loss weight (%g)" % d["w_seg"])
    g.add_argument("--w-kp", type=float, help="keypoint-offset loss weight (%g)" % d["w_kp"])
    g.add_argument("--w-ctr", type=float, help="centre-offset loss weight (%g)" % d["w_ctr"])
    g.add_argument("--of-reduction", choices=("mean", "sum"),
                   help="offset losses over the batch: mean, or sum as PVN3D's code (%s)"
                        % d["of_reduction"])
    g.add_argument("--aug", type=int, choices=(0, 1), help="photometric jitter (%d)" % d["aug"])
    g.add_argument("--seed", type=int, help="(%d)" % d["seed"])
    g.add_argument("--init", help="warm start from a plain state dict (e.g. the committed checkpoint) and the "
                                  "step its .json records; the optimiser starts fresh")
    g.add_argument("--ops", choices=("native", "reference"),
                   help="PointNet++ operators: libpvn3d_ops or the plain-PyTorch reference (%s)" % d["ops"])
    g = ap.add_argument_group("validation, logging, checkpoints")
    g.add_argument("--n-val", type=int, help="validation samples (%d)" % d["n_val"])
    g.add_argument("--val-batch", type=int, help="(%d)" % d["val_batch"])
    g.add_argument("--val-every", type=int, help="steps (%d)" % d["val_every"])
    g.add_argument("--log-every", type=int, help="steps (%d)" % d["log_every"])
    g.add_argument("--ckpt-every", type=int, help="steps (%d)" % d["ckpt_every"])
    g.add_argument("--bandwidth", type=float, help="mean-shift bandwidth (%g)" % d["bandwidth"])
    g.add_argument("--pose-max-iter", type=int, help="mean-shift iterations (%d)" % d["pose_max_iter"])
    return ap.parse_args(argv)


def resolve_config(args, ck_config=None):
    """DEFAULTS < the checkpoint's config < options given on the command line; the model options of
    a checkpoint cannot be changed."""
    cfg = dict(DEFAULTS)
    if ck_config:
        cfg.update({k: v for k, v in ck_config.items() if k in DEFAULTS})
    for k in DEFAULTS:
        v = getattr(args, k, None)
        if v is None:
            continue
        if ck_config and k in MODEL_KEYS and k in ck_config and str(ck_config[k]) != str(v):
            raise SystemExit("--%s %s differs from the checkpoint's %s: the model options are fixed "
                             "by the first run" % (k.replace("_", "-"), v, ck_config[k]))
        cfg[k] = v
    return cfg


def main(argv=None, dataset=None):
    t_start = time.time()
    args = parse_args(argv)
    resume = args.resume
    if resume == "auto":
        p = os.path.join(args.out, "last.pt")
        resume = p if os.path.exists(p) else None
    ck_config = None
    if resume:
        try:
            ck = torch_load(resume)
        except Exception as e:  # a missing file, a text file, ...
            raise SystemExit("--resume %s: cannot read it (%s)" % (resume, str(e).splitlines()[0]))
        if not isinstance(ck, dict) or ck.get("format") != CHECKPOINT_FORMAT:
            raise SystemExit("%s is not a training checkpoint of this trainer (last.pt, best.pt); a plain state dict"
                             " goes to --init" % resume)
        ck_config = ck["config"]
    cfg = resolve_config(args, ck_config)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    ops_info = ("libpvn3d_ops %s (%s, CUDA %s)" % (native_ops.version(), native_ops.library_path(),
                                                   native_ops.built_with_cuda())
                if cfg["ops"] == "native" else "plain-PyTorch reference operators")
    log("train_pvn3d: torch %s on %s%s; %s" % (
        torch.__version__, device,
        " (%s)" % torch.cuda.get_device_name(0) if device.startswith("cuda") else "", ops_info))
    tr = Trainer(cfg, device, args.out, dataset=dataset, resume=resume, start_time=t_start)
    log("model %s: %d parameters, trunk dilation %s, SA npoints %s; batch %d, lr %g, steps %d, amp %s"
        % (cfg["width"], M.n_params(tr.model), cfg["trunk_dilation"],
           list(tr.model.cfg["pointnet"]["npoints"]), int(cfg["batch_size"]), float(cfg["lr"]),
           int(cfg["steps"]), tr.amp_dtype))
    write_json_atomic(dict(cfg, model_config=model_config(cfg)), os.path.join(args.out, "config.json"))
    tr.run(time_limit=args.time_limit, stop_after=args.stop_after)
    return tr


if __name__ == "__main__":
    main()
