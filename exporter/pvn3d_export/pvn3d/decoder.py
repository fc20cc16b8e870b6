"""Export-time rewrites of the PSP decoder's x2 stages that compute the same function with less work.

A stage (pspnet.PSPUpsample) is: bilinear x2 upsampling (align_corners=True), a 3x3 convolution with
bias and zero padding, BatchNorm, PReLU. At 480x640 the three stages and the final 1x1 layer are 159 of
the full network's 394 GFLOP a frame, and up_1 alone (1024 -> 256 channels at 120x160) is 91. Two
rewrites, both chosen by the exporter (`export_pvn3d.py --conv-before-upsample`, `--cnn-at-points`);
training and the PyTorch reference keep the stages as they are.

1. Convolution before the upsampling (`conv_before_upsample`). Upsampling and the channel mixing of one
   kernel tap commute (one acts on pixels, the other on channels), so with U_h, U_w the 1-D upsampling
   matrices and S_d the row shift of tap d (zero outside the image: the convolution's padding),

       conv(up(x))[o] = b[o] + sum_{dy,dx} (S_dy U_h) (K_{dy,dx} x)[o] (S_dx U_w)^T

   The nine per-tap products K_{dy,dx} x run at the input's resolution, as one [9*Cout, Cin] product:
   a quarter of the multiply-adds of the convolution at the output's. The shifted resamplings are two
   more products with small constant matrices (the columns' [3w, 2w], then the rows' [2h, 3h]); they are
   banded and stored dense, which costs 5 GFLOP at up_1 against the 68 saved, but more than the saving at
   up_2 and up_3 (there the per-tap product is as cheap as the resampling).

2. The last stage at the chosen pixels only (`last_stage_at_points`). PVN3D uses the CNN's map at the N
   pixels of the point cloud (12288 of 307200 at 480x640) and nowhere else, so up_3's convolution and
   the final 1x1 layer are needed only there: the up_3 input is upsampled as before, its 3x3
   neighbourhood around each chosen pixel gathered ([B, Cin, 9, N], PVN3D_GroupPoints with zero weight
   outside the image), and the convolution applied as one [Cout, 9*Cin] product, then BatchNorm (folded),
   PReLU and the final layer as another product. The full-resolution convolution, its bias, activation
   and layout passes, and the final layer over every pixel disappear.

Both are the same function up to float rounding (test_pvn3d.DecoderRewrites checks them against the
modules and through an exported graph).
"""
import numpy as np
import torch

from .. import ops
from .pspnet import bilinear_matrix


def fold_conv_bn(conv, bn):
    """(K [Cout, Cin, kh, kw], b [Cout]) with bn(conv(x)) = conv_K(x) + b (inference-mode BatchNorm)."""
    scale = bn.weight.detach() / torch.sqrt(bn.running_var + bn.eps)
    k = conv.weight.detach() * scale[:, None, None, None]
    b0 = conv.bias.detach() if conv.bias is not None else torch.zeros(conv.out_channels)
    return k, (b0 - bn.running_mean) * scale + bn.bias.detach()


def _stage_parts(stage):
    """(upsample, conv, bn, prelu) of a PSPUpsample, checked to be what the rewrites assume."""
    up, conv, bn, act = stage.conv
    if not (isinstance(up, torch.nn.Upsample) and up.mode == "bilinear" and up.align_corners
            and float(up.scale_factor) == 2.0):
        raise ValueError("expected nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True), got %r" % up)
    if conv.kernel_size != (3, 3) or conv.padding != (1, 1) or conv.stride != (1, 1) or conv.dilation != (1, 1) \
            or conv.groups != 1:
        raise ValueError("expected a 3x3 convolution with padding 1, got %r" % conv)
    return up, conv, bn, act


def shifted_upsampling(n):
    """[3, 2n, n]: for tap d = 0, 1, 2 the rows of the x2 align_corners upsampling matrix shifted by d - 1,
    zero where the shifted row leaves the image (the 3x3 convolution's zero padding)."""
    u = bilinear_matrix(2 * n, n, align_corners=True).numpy()
    m = np.zeros((3, 2 * n, n), np.float32)
    for d in range(3):
        for r in range(2 * n):
            q = r + d - 1
            if 0 <= q < 2 * n:
                m[d, r] = u[q]
    return torch.from_numpy(m)


def conv_before_upsample(stage, x):
    """stage(x) for a PSPUpsample, with the convolution's taps applied before the x2 upsampling."""
    _, conv, bn, act = _stage_parts(stage)
    k, b = fold_conv_bn(conv, bn)
    cout, cin = conv.out_channels, conv.in_channels
    h, w = int(x.shape[2]), int(x.shape[3])
    taps = k.permute(0, 2, 3, 1).reshape(cout * 9, cin).to(x.dtype)      # rows (o, dy, dx)
    z = torch.matmul(taps, x.reshape(-1, cin, h * w))                       # [B, 9*Cout, h*w]
    z = z.reshape(-1, cout, 3, 3, h, w).permute(0, 1, 2, 4, 3, 5)          # [B, Cout, dy, h, dx, w]
    cols = shifted_upsampling(w).transpose(1, 2).reshape(3 * w, 2 * w)     # stacked (S_dx U_w)^T
    t = torch.matmul(z.reshape(-1, cout, 3, h, 3 * w), cols.to(x.device, x.dtype))  # [B, Cout, dy, h, 2w]
    rows = shifted_upsampling(h).permute(1, 0, 2).reshape(2 * h, 3 * h)    # side by side S_dy U_h
    y = torch.matmul(rows.to(x.device, x.dtype), t.reshape(-1, cout, 3 * h, 2 * w))  # [B, Cout, 2h, 2w]
    return act(y + b.to(x.device, x.dtype)[:, None, None])


def _neighbour_tables(n):
    """For a coordinate q + d - 1 of the upsampled map (q in [0, n), d the tap, stored at q + d):
    the clamped coordinate [n + 2] (int64) and 1 inside the map, 0 outside [n + 2] (float)."""
    q = np.arange(-1, n + 1)
    return torch.from_numpy(np.clip(q, 0, n - 1).astype(np.int64)), \
        torch.from_numpy(((q >= 0) & (q < n)).astype(np.float32))


def last_stage_at_points(stage, final, x, choose):
    """final(stage(x)) at the pixels `choose` [B, 1, N] of the stage's output (row-major v * W + u):
    [B, emb, N]. x is the stage's input [B, Cin, h, w]; the output map is [2h, 2w]."""
    up, conv, bn, act = _stage_parts(stage)
    k, b = fold_conv_bn(conv, bn)
    cout, cin = conv.out_channels, conv.in_channels
    u = up(x)                                                               # through the module: node names
    hh, ww = int(u.shape[2]), int(u.shape[3])
    row_at, row_in = (t.to(choose.device) for t in _neighbour_tables(hh))
    col_at, col_in = (t.to(choose.device) for t in _neighbour_tables(ww))
    r = torch.div(choose, ww, rounding_mode="trunc")                        # [B, 1, N] (choose >= 0): one Div
    c = choose - r * ww
    taps = torch.arange(9, dtype=torch.int64, device=choose.device).view(1, 9, 1)   # k = 3 dy + dx
    rq = r + torch.div(taps, 3, rounding_mode="trunc")                      # [B, 9, N], offset by one
    cq = c + (taps - 3 * torch.div(taps, 3, rounding_mode="trunc"))         # (constants in the graph)
    idx = row_at[rq] * ww + col_at[cq]                                      # [B, 9, N]
    inside = (row_in[rq] * col_in[cq]).unsqueeze(1)                         # [B, 1, 9, N]
    g = ops.group_points(u.reshape(-1, cin, hh * ww), idx)                  # [B, Cin, 9, N]
    g = g * (inside if inside.dtype == g.dtype else inside.to(g.dtype))
    g = g.flatten(1, 2)                                                     # rows (i, dy, dx), as K's
    y = act(torch.matmul(k.reshape(cout, cin * 9).to(u.dtype), g) + b.to(u.dtype)[:, None])   # [B, Cout, N]
    wf = final.weight.detach().reshape(final.out_channels, final.in_channels).to(u.dtype)
    return torch.matmul(wf, y) + final.bias.detach().to(u.dtype)[:, None]


__all__ = ["conv_before_upsample", "last_stage_at_points", "fold_conv_bn", "shifted_upsampling"]
