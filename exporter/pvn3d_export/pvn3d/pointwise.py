"""The per-point 1x1 convolutions (PointNet++'s shared MLPs, the dense fusion, the heads) as matrix
products, an export-time choice (`export_pvn3d.py --pointwise matmul`, the default).

A 1x1 convolution over points is W [Cout, Cin] times the features [B, Cin, K]. Exported as Conv, ORT's
CUDA provider runs it through cuDNN, which in fp16 wraps the convolution in NCHW <-> NHWC layout
kernels and adds the bias with a separate op-tensor kernel. Exported as MatMul (BatchNorm folded into
W and the bias), it is one cuBLAS GEMM over the NCHW data as it lies, then Add and Relu: on the H200
3-22% less per frame in every precision but fp16 at batch 1 (benchmarks/gpu/run-frame-to-pose.sh, part
pointwise; benchmarks/results/2026-12-02-pointwise-matmul/). Training and the PyTorch reference keep
the convolutions.

The shared MLPs of the set-abstraction levels see [B, C, npoint, nsample]: they are flattened to
[B, C, npoint * nsample] with constant shapes (npoint and nsample are fixed per level), so the graph
needs no shape arithmetic.
"""
import contextlib

import torch

from .pointnet2_msg import ConvBNReLU


def fold(conv, bn=None):
    """(W [Cout, Cin], b [Cout]) of a 1x1 Conv1d/Conv2d followed by an inference-mode BatchNorm (or none):
    bn(conv(x)) = W x + b."""
    if any(k != 1 for k in conv.kernel_size) or conv.groups != 1:
        raise ValueError("not a plain 1x1 convolution: kernel %s, groups %d" % (conv.kernel_size, conv.groups))
    w = conv.weight.detach().reshape(conv.out_channels, conv.in_channels).clone()
    b = conv.bias.detach().clone() if conv.bias is not None else torch.zeros(conv.out_channels)
    if bn is not None:
        scale = bn.weight.detach() / torch.sqrt(bn.running_var + bn.eps)
        w = w * scale[:, None]
        b = (b - bn.running_mean) * scale + bn.bias.detach()
    return w, b


def _layers(net):
    """Every per-point layer of a PVN3D: its ConvBNReLU blocks, and the dense fusion's bare convolutions."""
    blocks = [m for part in (net.pointnet2, net.SEG_layer, net.KpOF_layer, net.CtrOf_layer)
              for m in part.modules() if isinstance(m, ConvBNReLU)]
    return blocks, net.rgbd_feat


@contextlib.contextmanager
def as_matmul(net, enabled=True):
    """Within the block, net's per-point layers run (and trace) as MatMul + Add (+ Relu); restored after."""
    if not enabled:
        yield net
        return
    blocks, fusion = _layers(net)
    for m in blocks:
        m.folded = fold(m.conv, m.normlayer.bn if hasattr(m, "normlayer") else None)
    fusion.folded = {name: fold(getattr(fusion, name)) for name in fusion.CONVS}
    try:
        yield net
    finally:
        for m in blocks:
            m.folded = None
        fusion.folded = None


def count_convs(net):
    """How many convolutions as_matmul turns into products (the export's log, the tests)."""
    blocks, fusion = _layers(net)
    return len(blocks) + len(fusion.CONVS)


__all__ = ["as_matmul", "fold", "count_convs"]
