"""PVN3D (LineMOD setting) on the custom PointNet++ operators, in two widths.

Inputs   rgb          float32 [B,3,H,W]   normalised image (H, W multiples of 8; fixed per export)
         cld_rgb_nrm  float32 [B,N,9]     per point: xyz (m, camera frame), rgb, normal
         choose       int64   [B,1,N]     row-major pixel index (v*W + u) of each point in rgb
Outputs  pred_rgbd_seg float32 [B,N,n_classes]   per-point class scores (logits)
         pred_kp_of    float32 [B,n_kps,N,3]     per-point offsets to each keypoint
         pred_ctr_of   float32 [B,1,N,3]         per-point offset to the object centre
         sa1_fps_idx   int64   [B,npoint1]       first SA level: FPS indices   (diagnostics)
         sa1_ball_idx0 int64   [B,npoint1,ns0]   first SA level, ball query of scale 0
         sa1_ball_idx1 int64   [B,npoint1,ns1]   first SA level, ball query of scale 1
These are PVN3D's layouts (its forward returns pred_kp_of [bs,n_kps,n_pts,3], pred_rgbd_seg
[bs,n_pts,n_classes], pred_ctr_of [bs,1,n_pts,3]); the offset convention is PVN3D's:
keypoint vote = point - offset (offset = point - keypoint).
"""
import copy

import torch
from torch import nn

from .fusion import DenseFusion
from .heads import Head
from . import pointwise
from .pointnet2_msg import Pointnet2MSG
from .pspnet import ModifiedResnet

RADII = ((0.0175, 0.025), (0.025, 0.05), (0.05, 0.1), (0.1, 0.2))
NSAMPLES = ((16, 32),) * 4

CONFIGS = {
    # the paper's sizes (PVN3D code base, LineMOD)
    "full": dict(
        trunk_widths=(64, 128, 256, 512), trunk_blocks=(3, 4, 6, 3), psp_out=1024,
        ups=(256, 64, 64), rgb_emb=128,
        pointnet=dict(
            npoints=(2048, 1024, 512, 128), radii=RADII, nsamples=NSAMPLES,
            sa_mlps=(((16, 16, 32), (32, 32, 64)), ((64, 64, 128), (64, 96, 128)),
                     ((128, 196, 256), (128, 196, 256)), ((256, 256, 512), (256, 384, 512))),
            fp_mlps=((128, 128), (256, 256), (512, 512), (512, 512))),
        fusion=(256, 512, 1024),
        seg_hidden=(1024, 512, 128), kp_hidden=(1024, 512, 256), ctr_hidden=(1024, 512, 128)),
    # 1/8 of the channels, same topology (ResNet-34 blocks 3/4/6/3, 4 SA + 4 FP levels, MSG),
    # fewer sampled points so that N = 1024 works
    "tiny": dict(
        trunk_widths=(8, 16, 32, 64), trunk_blocks=(3, 4, 6, 3), psp_out=64,
        ups=(32, 16, 16), rgb_emb=16,
        pointnet=dict(
            npoints=(256, 128, 64, 32), radii=RADII, nsamples=NSAMPLES,
            sa_mlps=(((4, 4, 8), (4, 4, 8)), ((8, 8, 16), (8, 12, 16)),
                     ((16, 24, 32), (16, 24, 32)), ((32, 32, 64), (32, 48, 64))),
            fp_mlps=((16, 16), (32, 32), (64, 64), (64, 64))),
        fusion=(32, 64, 128),
        seg_hidden=(128, 64, 16), kp_hidden=(128, 64, 32), ctr_hidden=(128, 64, 16)),
    # 1/4 of the channels (twice tiny's), tiny's sampled points: a slightly larger network for
    # training at N = 1024
    "small": dict(
        trunk_widths=(16, 32, 64, 128), trunk_blocks=(3, 4, 6, 3), psp_out=256,
        ups=(64, 32, 32), rgb_emb=32,
        pointnet=dict(
            npoints=(256, 128, 64, 32), radii=RADII, nsamples=NSAMPLES,
            sa_mlps=(((8, 8, 16), (8, 8, 16)), ((16, 16, 32), (16, 24, 32)),
                     ((32, 48, 64), (32, 48, 64)), ((64, 64, 128), (64, 96, 128))),
            fp_mlps=((32, 32), (64, 64), (128, 128), (128, 128))),
        fusion=(64, 128, 256),
        seg_hidden=(256, 128, 32), kp_hidden=(256, 128, 64), ctr_hidden=(256, 128, 32)),
}

OUTPUT_NAMES = ["pred_rgbd_seg", "pred_kp_of", "pred_ctr_of"]
INDEX_OUTPUT_NAMES = ["sa1_fps_idx", "sa1_ball_idx0", "sa1_ball_idx1"]


def config(width, npoints=None):
    cfg = copy.deepcopy(CONFIGS[width])
    if npoints is not None:
        cfg["pointnet"]["npoints"] = tuple(int(n) for n in npoints)
    return cfg


class PVN3D(nn.Module):
    def __init__(self, width="tiny", n_classes=2, n_kps=8, dilations=(2, 4), npoints=None,
                 index_outputs=True):
        super().__init__()
        cfg = config(width, npoints)
        self.width = width
        self.cfg = cfg
        self.n_classes = n_classes
        self.n_kps = n_kps
        self.index_outputs = index_outputs
        self.cnn = ModifiedResnet(trunk_widths=cfg["trunk_widths"],
                                  trunk_blocks=cfg["trunk_blocks"], dilations=tuple(dilations),
                                  psp_out=cfg["psp_out"], ups=cfg["ups"], emb=cfg["rgb_emb"])
        self.pointnet2 = Pointnet2MSG(cfg["pointnet"], input_channels=6, use_xyz=True)
        c2, c3, c4 = cfg["fusion"]
        self.rgbd_feat = DenseFusion(cfg["rgb_emb"], self.pointnet2.out_channels, c2, c3, c4)
        cf = self.rgbd_feat.out_channels
        self.SEG_layer = Head(cf, cfg["seg_hidden"], n_classes)
        self.KpOF_layer = Head(cf, cfg["kp_hidden"], n_kps * 3)
        self.CtrOf_layer = Head(cf, cfg["ctr_hidden"], 3)

    # The exporter's choice (--cnn-at-points), never training's: which tail of the CNN runs at the N chosen
    # pixels only ("none": all of it per pixel, then the gather; "final": the final 1x1 layer; "up_3": the
    # last x2 stage and the final layer). See rgb_embedding_at_points.
    cnn_at_points = "none"
    CNN_AT_POINTS = ("none", "final", "up_3")

    def rgb_embedding_at_points(self, rgb, choose):
        """The RGB embedding at the `choose` pixels [B,emb,N]. With cnn_at_points "none" the whole map is
        computed and the N pixels picked from it (PVN3D's way). The rest pick earlier, which is the same
        function because nothing in PVN3D reads the map anywhere else:
          "final": the pixels of the map before the CNN's final 1x1 layer, then that layer on N points
                   (a per-pixel affine map commutes with picking pixels) as one W x + b product;
          "up_3":  the last x2 stage (upsampling, 3x3 convolution, BatchNorm, PReLU) and the final layer
                   at the N pixels only (decoder.last_stage_at_points): 12288 of 307200 at 480x640."""
        mode = self.cnn_at_points
        if mode not in self.CNN_AT_POINTS:
            raise ValueError("cnn_at_points must be one of %s, got %r" % (self.CNN_AT_POINTS, mode))
        if mode == "up_3":
            from .decoder import last_stage_at_points
            psp = self.cnn.model
            return last_stage_at_points(psp.up_3, psp.final[0], self.cnn(rgb, stop="up_3"), choose)
        feat = self.cnn(rgb, stop="final" if mode == "final" else None)  # through the module: node names
        g = torch.gather(torch.flatten(feat, 2), 2, choose.repeat(1, int(feat.shape[1]), 1))
        if mode == "none":
            return g
        w, b = pointwise.fold(self.cnn.model.final[0])
        return torch.matmul(w, g) + b[:, None]

    @property
    def min_points(self):
        return self.cfg["pointnet"]["npoints"][0]

    def forward(self, rgb, cld_rgb_nrm, choose):
        rgb_emb = self.rgb_embedding_at_points(rgb, choose)  # [B,emb,N]
        pcld_emb, (fps_idx, ball) = self.pointnet2(cld_rgb_nrm)
        f = self.rgbd_feat(rgb_emb, pcld_emb)
        seg = self.SEG_layer(f).transpose(1, 2).contiguous()  # [B,N,n_classes]
        kp = self.KpOF_layer(f)  # [B,K*3,N]
        kp = kp.reshape(kp.shape[0], self.n_kps, 3, kp.shape[2]).permute(0, 1, 3, 2).contiguous()
        ctr = self.CtrOf_layer(f)  # [B,3,N]
        ctr = ctr.unsqueeze(1).permute(0, 1, 3, 2).contiguous()  # [B,1,N,3]
        outs = (seg, kp, ctr)
        if self.index_outputs:
            outs = outs + (fps_idx,) + tuple(ball)
        return outs


def output_shapes(model, pose_head=False):
    """Symbolic output shapes (for the exported graph's outputs)."""
    pn = model.cfg["pointnet"]
    np1, (ns0, ns1) = pn["npoints"][0], pn["nsamples"][0]
    shapes = {"pred_rgbd_seg": ["B", "N", model.n_classes], "pred_kp_of": ["B", model.n_kps, "N", 3],
              "pred_ctr_of": ["B", 1, "N", 3], "sa1_fps_idx": ["B", np1],
              "sa1_ball_idx0": ["B", np1, ns0], "sa1_ball_idx1": ["B", np1, ns1]}
    if pose_head:
        shapes.update(pose_R=["B", 3, 3], pose_t=["B", 3], pose_kps=["B", model.n_kps + 1, 3],
                      pose_inliers=["B"])
    return shapes


def n_params(model):
    return sum(p.numel() for p in model.parameters())


def seed_and_calibrate(model, inputs, seed):
    """Seeded random weights and BatchNorm in eval mode with calibrated, non-trivial running
    statistics: torch's default init after manual_seed(seed); BatchNorm affine parameters seeded
    random (weight in [0.75, 1.25], bias ~ N(0, 0.1)); running mean/var = the exact batch
    statistics of one forward pass over `inputs` with only the BatchNorm layers in training mode
    (dropout stays off). The last layer of both offset heads is scaled by 0.1 so that offsets are
    object-sized (~ centimetres), and that of the segmentation head by 0.25 (logits of order 1).
    Returns the model in eval mode."""
    g = torch.Generator().manual_seed(seed + 1)
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for m in bns:
            n = m.num_features
            m.weight.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.copy_(torch.randn(n, generator=g) * 0.1)
            m.reset_running_stats()
            m.momentum = None  # cumulative average: one pass = the batch statistics
        for head, scale in ((model.KpOF_layer, 0.1), (model.CtrOf_layer, 0.1),
                            (model.SEG_layer, 0.25)):
            last = head[len(head) - 1].conv
            last.weight.mul_(scale)
            last.bias.mul_(scale)
    model.eval()
    for m in bns:
        m.train()
    with torch.no_grad():
        model(*inputs)
    for m in bns:
        m.momentum = 0.1
    return model.eval()


def build(width, sample_inputs, seed=20240611, **kw):
    torch.manual_seed(seed)
    model = PVN3D(width, **kw)
    return seed_and_calibrate(model, sample_inputs, seed)


# --- loading a real PVN3D checkpoint -------------------------------------------------------------

# parameters of the PVN3D code base that its forward never uses (auxiliary heads, the trunk's fc)
UNUSED_PREFIXES = ("cnn.model.final_seg.", "cnn.model.classifier.", "cnn.model.feats.fc.")


def _normalise_key(k):
    if k.startswith("module."):
        k = k[len("module."):]
    return k.replace(".module.", ".")


def load_checkpoint(model, path):
    """Load a PVN3D checkpoint's state dict by name (strict=False) and report. Accepts a bare
    state dict or a dict holding it under 'model_state', 'state_dict' or 'model'; drops
    DataParallel 'module.' segments; reshapes a tensor whose shape differs only by size-1
    dimensions (PVN3D's FP convs are Conv2d [o,i,1,1], here Conv1d [o,i,1]).
    Returns dict(loaded, missing, unexpected, unused, mismatched)."""
    ck = torch.load(path, map_location="cpu")
    for key in ("model_state", "state_dict", "model"):
        if isinstance(ck, dict) and key in ck and isinstance(ck[key], dict):
            ck = ck[key]
            break
    own = model.state_dict()
    sd, unexpected, unused, mismatched = {}, [], [], []
    for k, v in ck.items():
        k2 = _normalise_key(k)
        if not torch.is_tensor(v):
            unexpected.append(k)
        elif k2 in own:
            if tuple(v.shape) == tuple(own[k2].shape):
                sd[k2] = v
            elif v.numel() == own[k2].numel() and \
                    [d for d in v.shape if d != 1] == [d for d in own[k2].shape if d != 1]:
                sd[k2] = v.reshape(own[k2].shape)
            else:
                mismatched.append("%s %s != %s" % (k, tuple(v.shape), tuple(own[k2].shape)))
        elif k2.startswith(UNUSED_PREFIXES):
            unused.append(k)
        else:
            unexpected.append(k)
    res = model.load_state_dict(sd, strict=False)
    model.eval()
    return dict(loaded=len(sd), missing=list(res.missing_keys), unexpected=unexpected,
                unused=unused, mismatched=mismatched)
