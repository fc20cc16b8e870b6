"""PointNet++ with multi-scale grouping on the custom operators (pvn3d_export.ops): four set
abstraction levels and four feature-propagation levels back to the input points, as PVN3D's
Pointnet2MSG (configuration in spec/ops.md). Input cld_rgb_nrm [B,N,9]: xyz, then 6 feature
channels (rgb + normals); use_xyz. Output [B,C,N].

Grouping follows spec/ops.md: grouped xyz minus the centre, concatenated (xyz first) with the
grouped features; shared MLPs are 1x1 Conv2d + BatchNorm + ReLU; the max over the nsample axis is
torch.amax (ReduceMax in ONNX, never a dynamic-kernel MaxPool); feature propagation weights are
w = (1/(d+1e-8)) / sum(1/(d+1e-8)) with d = sqrt(dist2).

State-dict names as PVN3D's: SA_modules.{l}.mlps.{s}.layer{j}.conv.weight,
SA_modules.{l}.mlps.{s}.layer{j}.normlayer.bn.*, FP_modules.{l}.mlp.layer{j}.conv.weight ...
(PVN3D's FP convs are Conv2d [out,in,1,1]; here Conv1d [out,in,1]: the checkpoint loader reshapes.)
"""
import torch
from torch import nn

from .. import ops


class BN(nn.Sequential):
    """BatchNorm wrapped as PVN3D's `normlayer` (child `bn`)."""

    def __init__(self, n, dims):
        super().__init__()
        self.add_module("bn", (nn.BatchNorm2d if dims == 2 else nn.BatchNorm1d)(n))


class ConvBNReLU(nn.Sequential):
    """conv (+ normlayer.bn) (+ activation), names as PVN3D's pt_utils Conv1d/Conv2d. While `folded`
    holds (W, b) (pointwise.as_matmul, export only) it runs as W x + b (+ ReLU) on x [B, Cin, K]."""

    def __init__(self, cin, cout, dims=2, bn=True, relu=True):
        super().__init__()
        Conv = nn.Conv2d if dims == 2 else nn.Conv1d
        self.add_module("conv", Conv(cin, cout, 1, bias=not bn))
        if bn:
            self.add_module("normlayer", BN(cout, dims))
        if relu:
            self.add_module("activation", nn.ReLU())
        self.folded = None

    def forward(self, x):
        if self.folded is None:
            return super().forward(x)
        w, b = self.folded
        y = torch.matmul(w, x) + b[:, None]
        return torch.relu(y) if hasattr(self, "activation") else y


class SharedMLP(nn.Sequential):
    def __init__(self, channels, dims=2):
        super().__init__()
        for i in range(len(channels) - 1):
            self.add_module("layer%d" % i, ConvBNReLU(channels[i], channels[i + 1], dims))


class SAModuleMSG(nn.Module):
    def __init__(self, npoint, radii, nsamples, mlps, in_channels, use_xyz=True):
        super().__init__()
        assert len(radii) == len(nsamples) == len(mlps)
        self.npoint = int(npoint)
        self.radii = [float(r) for r in radii]
        self.nsamples = [int(s) for s in nsamples]
        self.use_xyz = use_xyz
        cin = in_channels + (3 if use_xyz else 0)
        self.mlps = nn.ModuleList(SharedMLP([cin] + list(m), dims=2) for m in mlps)
        self.out_channels = sum(m[-1] for m in mlps)

    def forward(self, xyz, features):
        """xyz [B,N,3], features [B,C,N] -> new_xyz [B,npoint,3], new_features [B,C',npoint],
        and the indices (fps_idx [B,npoint], [ball_idx [B,npoint,nsample] per scale])."""
        xyz_t = xyz.transpose(1, 2).contiguous()
        fps_idx = ops.furthest_point_sample(xyz, self.npoint)
        new_xyz_t = ops.gather_points(xyz_t, fps_idx)  # [B,3,npoint]
        new_xyz = new_xyz_t.transpose(1, 2).contiguous()
        outs, ball = [], []
        for radius, nsample, mlp in zip(self.radii, self.nsamples, self.mlps):
            idx = ops.ball_query(xyz, new_xyz, radius, nsample)
            ball.append(idx)
            x = ops.group_points(xyz_t, idx) - new_xyz_t.unsqueeze(-1)
            if features is not None:
                g = ops.group_points(features, idx)
                x = torch.cat([x, g], dim=1) if self.use_xyz else g
            if mlp.layer0.folded is None:
                y = mlp(x)
            else:  # as matrix products over [B, C, npoint * nsample]: constant shapes, no shape arithmetic
                last = mlp[len(mlp) - 1].conv
                y = mlp(x.reshape(-1, mlp.layer0.conv.in_channels, self.npoint * nsample))
                y = y.reshape(-1, last.out_channels, self.npoint, nsample)
            outs.append(torch.amax(y, dim=3))
        return new_xyz, torch.cat(outs, dim=1), (fps_idx, ball)


class FPModule(nn.Module):
    def __init__(self, mlp):
        super().__init__()
        self.mlp = SharedMLP(list(mlp), dims=1)

    def forward(self, unknown, known, unknown_feats, known_feats):
        dist2, idx = ops.three_nn(unknown, known)
        recip = torch.reciprocal(torch.sqrt(dist2) + 1e-8)
        weight = recip / torch.sum(recip, dim=2, keepdim=True)
        x = ops.three_interpolate(known_feats, idx, weight)
        if unknown_feats is not None:
            x = torch.cat([x, unknown_feats], dim=1)
        return self.mlp(x)


class Pointnet2MSG(nn.Module):
    """cfg: dict(npoints=[4], radii=[4][2], nsamples=[4][2], sa_mlps=[4][2][...], fp_mlps=[4][...])
    where fp_mlps[l] lists the output channels of FP level l (l = 0 ends at the input points)."""

    def __init__(self, cfg, input_channels=6, use_xyz=True):
        super().__init__()
        self.SA_modules = nn.ModuleList()
        c_in = input_channels
        skip = [input_channels]
        for l in range(4):
            sa = SAModuleMSG(cfg["npoints"][l], cfg["radii"][l], cfg["nsamples"][l],
                             cfg["sa_mlps"][l], c_in, use_xyz)
            self.SA_modules.append(sa)
            c_in = sa.out_channels
            skip.append(c_in)
        # FP level l: interpolate from level l+1 to level l, concat with skip[l]
        fps = [None] * 4
        below = skip[4]
        for l in range(3, -1, -1):
            fps[l] = FPModule([below + skip[l]] + list(cfg["fp_mlps"][l]))
            below = cfg["fp_mlps"][l][-1]
        self.FP_modules = nn.ModuleList(fps)
        self.out_channels = cfg["fp_mlps"][0][-1]

    def forward(self, pointcloud):
        """pointcloud [B,N,3+C] -> features [B,out_channels,N], SA1 indices."""
        xyz = pointcloud[..., 0:3].contiguous()
        feats = pointcloud[..., 3:].transpose(1, 2).contiguous()
        l_xyz, l_feat = [xyz], [feats]
        sa1 = None
        for l in range(4):
            nx, nf, idx = self.SA_modules[l](l_xyz[l], l_feat[l])
            if l == 0:
                sa1 = idx
            l_xyz.append(nx)
            l_feat.append(nf)
        for l in range(3, -1, -1):
            l_feat[l] = self.FP_modules[l](l_xyz[l], l_xyz[l + 1], l_feat[l], l_feat[l + 1])
        return l_feat[0], sa1
