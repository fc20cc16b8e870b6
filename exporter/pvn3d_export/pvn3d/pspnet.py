"""PSPNet decoder over the ResNet trunk: pyramid pooling (bins 1, 2, 3, 6), bottleneck, three
x2 upsampling stages back to H x W, and a 1x1 conv to the per-pixel RGB embedding.

Pyramid pooling is adaptive average pooling to s x s, a 1x1 conv, and bilinear upsampling back
(align_corners=False), like PVN3D's PSPModule. Both resamplings are written as products with
constant matrices built from the (static) feature-map size: P_h @ x @ P_w^T with P the
adaptive-average-pooling weights and U_h @ y @ U_w^T with U the bilinear weights. They are exactly
the linear maps of F.adaptive_avg_pool2d and F.interpolate (test_pvn3d checks this), they export
as plain MatMul nodes (torch's ONNX export has no AdaptiveAvgPool for bins that do not divide the
size, e.g. 3 or 6 bins of a 60x80 map), and they fix the image size of an exported graph.

The x2 stages (PSPUpsample) are nn.Upsample(bilinear, align_corners=True) -> Conv3x3 + bias ->
BatchNorm -> PReLU, exported as Resize.

State-dict names as PVN3D's Modified_PSPNet: feats.*, psp.stages.{i}.1.weight,
psp.bottleneck.{weight,bias}, up_{1,2,3}.conv.{1,2,3}.*, final.0.{weight,bias}.
"""
import numpy as np
import torch
from torch import nn

from .resnet import ResNetTrunk


def adaptive_pool_matrix(n, s):
    """[s, n] weights of 1-D adaptive average pooling from n to s bins (torch's bin rule:
    start = floor(i*n/s), end = ceil((i+1)*n/s)). A constant (built in numpy, so that tracing
    records a constant and not the construction)."""
    m = np.zeros((s, n), np.float32)
    for i in range(s):
        a = (i * n) // s
        b = -((-(i + 1) * n) // s)
        m[i, a:b] = 1.0 / (b - a)
    return torch.from_numpy(m)


def bilinear_matrix(n_out, n_in, align_corners=False):
    """[n_out, n_in] weights of 1-D linear interpolation as torch's bilinear upsampling to a given
    size (align_corners False: half-pixel centres, source index clamped at 0)."""
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        if align_corners:
            src = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            src = max((i + 0.5) * n_in / n_out - 0.5, 0.0)
        i0 = min(int(src), n_in - 1)
        i1 = min(i0 + 1, n_in - 1)
        f = src - i0
        m[i, i0] += 1.0 - f
        m[i, i1] += f
    return torch.from_numpy(m.astype(np.float32))


def _like(m, x):
    """A constant matrix on x's device, and in x's dtype when that is not float32 (a half module: the
    stage timings of benchmarks/scripts/cnn_stage_times.py); an export, in float32, records no cast."""
    m = m.to(x.device)
    return m if m.dtype == x.dtype else m.to(x.dtype)


class AdaptiveAvgPoolMM(nn.Module):
    """Adaptive average pooling to s x s as two matrix products (static input size)."""

    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, x):
        h, w = int(x.shape[2]), int(x.shape[3])
        ph = _like(adaptive_pool_matrix(h, self.size), x)
        pwt = _like(adaptive_pool_matrix(w, self.size).t().contiguous(), x)
        return torch.matmul(torch.matmul(ph, x), pwt)


def upsample_mm(y, h, w):
    """Bilinear (align_corners=False) upsampling of [B,C,s,s] to [B,C,h,w] as matrix products."""
    uh = _like(bilinear_matrix(h, int(y.shape[2])), y)
    uwt = _like(bilinear_matrix(w, int(y.shape[3])).t().contiguous(), y)
    return torch.matmul(torch.matmul(uh, y), uwt)


class PSPModule(nn.Module):
    def __init__(self, features, out_features, sizes=(1, 2, 3, 6)):
        super().__init__()
        self.stages = nn.ModuleList(
            nn.Sequential(AdaptiveAvgPoolMM(s), nn.Conv2d(features, features, 1, bias=False))
            for s in sizes)
        self.bottleneck = nn.Conv2d(features * (len(sizes) + 1), out_features, 1)
        self.relu = nn.ReLU()

    def forward(self, feats):
        h, w = int(feats.shape[2]), int(feats.shape[3])
        priors = [upsample_mm(stage(feats), h, w) for stage in self.stages] + [feats]
        return self.relu(self.bottleneck(torch.cat(priors, 1)))


class PSPUpsample(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
            nn.Conv2d(cin, cout, 3, padding=1),
            nn.BatchNorm2d(cout),
            nn.PReLU())

    def forward(self, x):
        return self.conv(x)


class PSPNet(nn.Module):
    """rgb [B,3,H,W] -> rgb embedding [B,emb,H,W]."""

    def __init__(self, trunk_widths=(64, 128, 256, 512), trunk_blocks=(3, 4, 6, 3),
                 dilations=(2, 4), sizes=(1, 2, 3, 6), psp_out=1024, ups=(256, 64, 64),
                 emb=128):
        super().__init__()
        self.feats = ResNetTrunk(trunk_widths, trunk_blocks, dilations)
        self.psp = PSPModule(self.feats.out_channels, psp_out, sizes)
        self.drop_1 = nn.Dropout2d(p=0.3)
        self.up_1 = PSPUpsample(psp_out, ups[0])
        self.up_2 = PSPUpsample(ups[0], ups[1])
        self.up_3 = PSPUpsample(ups[1], ups[2])
        self.drop_2 = nn.Dropout2d(p=0.15)
        self.final = nn.Sequential(nn.Conv2d(ups[2], emb, 1))
        self.out_channels = emb

    # Export-time choice (export_pvn3d.py --conv-before-upsample), never training's: the stages (1, 2, 3
    # for up_1..up_3) computed by decoder.conv_before_upsample.
    conv_first = ()

    def _up(self, i, p):
        stage = (self.up_1, self.up_2, self.up_3)[i - 1]
        if i in self.conv_first:
            from .decoder import conv_before_upsample
            return conv_before_upsample(stage, p)
        return stage(p)

    def forward(self, x, stop=None):
        """stop: None for the embedding [B,emb,H,W]; "final" for the map before the final 1x1 layer
        [B,ups[2],H,W]; "up_3" for the input of the last x2 stage [B,ups[1],H/2,W/2]."""
        p = self.drop_1(self.psp(self.feats(x)))
        p = self.drop_2(self._up(1, p))
        p = self.drop_2(self._up(2, p))
        if stop == "up_3":
            return p
        p = self._up(3, p)
        return p if stop == "final" else self.final(p)


class ModifiedResnet(nn.Module):
    """Wrapper giving PVN3D's state-dict prefix cnn.model.*"""

    def __init__(self, **kw):
        super().__init__()
        self.model = PSPNet(**kw)

    def forward(self, x, stop=None):
        return self.model(x, stop)
