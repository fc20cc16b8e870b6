"""PointNet++ building blocks on the PVN3D custom operators (pvn3d_export.ops).

Written so that torch.onnx.export (opset 17) gives only standard ONNX nodes around the custom
ones: Transpose/Sub/Concat for grouping, Conv (+ BatchNormalization, folded in eval export) + Relu
for the shared MLPs, ReduceMax over the nsample axis (torch.amax, never MaxPool), and
Sqrt/Add/Reciprocal/ReduceSum/Div for the feature-propagation weights. No shape-dependent Python
values are used, so the batch and the point count stay dynamic.
"""
import torch
from torch import nn

from . import ops


class SharedMLP(nn.Sequential):
    """1x1 convolutions (Conv2d over [B,C,M,S] or Conv1d over [B,C,N]) + BatchNorm + ReLU."""

    def __init__(self, channels, dims=2, bn=True, last_relu=True):
        layers = []
        Conv = nn.Conv2d if dims == 2 else nn.Conv1d
        BN = nn.BatchNorm2d if dims == 2 else nn.BatchNorm1d
        for i in range(len(channels) - 1):
            last = i == len(channels) - 2
            layers.append(Conv(channels[i], channels[i + 1], kernel_size=1, bias=not bn))
            if bn:
                layers.append(BN(channels[i + 1]))
            if not last or last_relu:
                layers.append(nn.ReLU())
        super().__init__(*layers)


class PointnetSAModuleMSG(nn.Module):
    """Set abstraction with multi-scale grouping (use_xyz: grouped xyz minus centre, then the
    grouped features, concatenated on the channel axis)."""

    def __init__(self, npoint, radii, nsamples, mlps, in_channels, use_xyz=True):
        super().__init__()
        assert len(radii) == len(nsamples) == len(mlps)
        self.npoint = npoint
        self.radii = list(radii)
        self.nsamples = list(nsamples)
        self.use_xyz = use_xyz
        self.mlps = nn.ModuleList()
        for mlp in mlps:
            cin = in_channels + (3 if use_xyz else 0)
            self.mlps.append(SharedMLP([cin] + list(mlp), dims=2))
        self.out_channels = sum(m[-1] for m in mlps)

    def forward(self, xyz, features):
        """xyz [B,N,3], features [B,C,N] -> new_xyz [B,npoint,3], new_features [B,C',npoint],
        fps_idx [B,npoint]."""
        xyz_t = xyz.transpose(1, 2).contiguous()  # [B,3,N]
        fps_idx = ops.furthest_point_sample(xyz, self.npoint)
        new_xyz_t = ops.gather_points(xyz_t, fps_idx)  # [B,3,npoint]
        new_xyz = new_xyz_t.transpose(1, 2).contiguous()
        outs = []
        for radius, nsample, mlp in zip(self.radii, self.nsamples, self.mlps):
            idx = ops.ball_query(xyz, new_xyz, radius, nsample)  # [B,npoint,nsample]
            grouped_xyz = ops.group_points(xyz_t, idx) - new_xyz_t.unsqueeze(-1)
            if features is not None:
                grouped = ops.group_points(features, idx)
                x = torch.cat([grouped_xyz, grouped], dim=1) if self.use_xyz else grouped
            else:
                x = grouped_xyz
            x = mlp(x)  # [B,C',npoint,nsample]
            outs.append(torch.amax(x, dim=3))  # ReduceMax over nsample
        return new_xyz, torch.cat(outs, dim=1), fps_idx


class PointnetFPModule(nn.Module):
    """Feature propagation: inverse-distance interpolation from the three nearest known points,
    concatenated with the skip features, then a shared MLP (Conv1d)."""

    def __init__(self, mlp):
        super().__init__()
        self.mlp = SharedMLP(list(mlp), dims=1)

    def forward(self, unknown, known, unknown_feats, known_feats):
        """unknown [B,n,3], known [B,m,3], unknown_feats [B,C1,n] or None, known_feats [B,C2,m]."""
        dist2, idx = ops.three_nn(unknown, known)
        dist = torch.sqrt(dist2)
        recip = torch.reciprocal(dist + 1e-8)
        norm = torch.sum(recip, dim=2, keepdim=True)
        weight = recip / norm
        x = ops.three_interpolate(known_feats, idx, weight)  # [B,C2,n]
        if unknown_feats is not None:
            x = torch.cat([x, unknown_feats], dim=1)
        return self.mlp(x)


class SmallPointNet2(nn.Module):
    """The embedded default model: two MSG set-abstraction levels, two feature-propagation
    levels back to the input points, and a per-point head.

    Input xyz [B,N,3] (N >= sa1 npoint); the input features are xyz itself ([B,3,N]).
    Output point_features [B,out_channels,N].
    """

    def __init__(self, out_channels=13,
                 sa1=dict(npoint=256, radii=(0.02, 0.04), nsamples=(16, 32),
                          mlps=((16, 16, 32), (16, 16, 32))),
                 sa2=dict(npoint=64, radii=(0.04, 0.08), nsamples=(16, 32),
                          mlps=((32, 32, 64), (32, 32, 64))),
                 fp2_mlp=(128,), fp1_mlp=(64, 64), head=(64,)):
        super().__init__()
        cin = 3
        self.sa1 = PointnetSAModuleMSG(in_channels=cin, **sa1)
        self.sa2 = PointnetSAModuleMSG(in_channels=self.sa1.out_channels, **sa2)
        c1, c2 = self.sa1.out_channels, self.sa2.out_channels
        self.fp2 = PointnetFPModule([c2 + c1] + list(fp2_mlp))  # SA2 -> SA1 points
        self.fp1 = PointnetFPModule([fp2_mlp[-1] + cin] + list(fp1_mlp))  # SA1 -> input
        self.head = nn.Sequential(SharedMLP([fp1_mlp[-1]] + list(head), dims=1),
                                  nn.Conv1d(head[-1], out_channels, kernel_size=1))

    def forward(self, xyz):
        feats = xyz.transpose(1, 2).contiguous()
        xyz1, f1, _ = self.sa1(xyz, feats)
        xyz2, f2, _ = self.sa2(xyz1, f1)
        f1 = self.fp2(xyz1, xyz2, f1, f2)
        f0 = self.fp1(xyz, xyz1, feats, f1)
        return self.head(f0)


def init_batchnorm(model, inputs, generator):
    """Seeded, data-calibrated BatchNorm (then eval mode): running statistics are the exact
    batch statistics of one forward pass over `inputs` (so every layer's activations have about
    unit variance and the output varies across points), affine parameters are seeded random
    (weight in [0.75, 1.25], bias ~ N(0, 0.1))."""
    bns = [m for m in model.modules() if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d))]
    for m in bns:
        n = m.num_features
        with torch.no_grad():
            m.weight.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            m.bias.copy_(torch.randn(n, generator=generator) * 0.1)
        m.reset_running_stats()
        m.momentum = None  # cumulative average: one pass gives exactly the batch statistics
    model.train()
    with torch.no_grad():
        model(inputs)
    for m in bns:
        m.momentum = 0.1
    return model.eval()
