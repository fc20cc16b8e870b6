"""Dense fusion block (PVN3D's DenseFusion): per-point RGB embedding (gathered at the `choose`
pixels) and point embedding, each through a 1x1 conv + ReLU, the concatenation through two 1x1 convs
+ ReLU to a global feature by average pooling over the points, broadcast back to every point.

    feat_1 = [rgb_emb ; cld_emb]                              (C_rgb + C_cld)
    feat_2 = [relu(conv2_rgb(rgb_emb)) ; relu(conv2_cld(cld_emb))]
    g      = mean_over_points(relu(conv4(relu(conv3(feat_1)))))
    out    = [feat_1 ; feat_2 ; g expanded to N]            (full: 256 + 512 + 1024 = 1792)

PVN3D pools with AvgPool1d(num_points), fixed at training; here the mean is over the actual N
(ReduceMean), which is the same for N = num_points and keeps N dynamic.
"""
import torch
from torch import nn


class DenseFusion(nn.Module):
    CONVS = ("conv2_rgb", "conv2_cld", "conv3", "conv4")

    def __init__(self, c_rgb, c_cld, c2=256, c3=512, c4=1024):
        super().__init__()
        self.conv2_rgb = nn.Conv1d(c_rgb, c2, 1)
        self.conv2_cld = nn.Conv1d(c_cld, c2, 1)
        self.conv3 = nn.Conv1d(c_rgb + c_cld, c3, 1)
        self.conv4 = nn.Conv1d(c3, c4, 1)
        self.relu = nn.ReLU()
        self.out_channels = c_rgb + c_cld + 2 * c2 + c4
        self.folded = None  # name -> (W, b) while pointwise.as_matmul runs the convolutions as products

    def conv(self, name, x):
        if self.folded is None:
            return getattr(self, name)(x)
        w, b = self.folded[name]
        return torch.matmul(w, x) + b[:, None]

    def forward(self, rgb_emb, cld_emb):
        feat_1 = torch.cat((rgb_emb, cld_emb), dim=1)
        feat_2 = torch.cat((self.relu(self.conv("conv2_rgb", rgb_emb)),
                            self.relu(self.conv("conv2_cld", cld_emb))), dim=1)
        rgbd = self.relu(self.conv("conv4", self.relu(self.conv("conv3", feat_1))))
        ap = torch.mean(rgbd, dim=2, keepdim=True).expand_as(rgbd)
        return torch.cat([feat_1, feat_2, ap], dim=1)
