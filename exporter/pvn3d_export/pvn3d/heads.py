"""Per-point heads: 1x1 Conv1d + BatchNorm + ReLU layers then a plain 1x1 Conv1d (with bias), as
PVN3D's pt_utils.Seq(...).conv1d(..., bn=True) chains. State-dict names: {i}.conv.weight,
{i}.normlayer.bn.*, last {n}.conv.{weight,bias}."""
from torch import nn

from .pointnet2_msg import ConvBNReLU


class Head(nn.Sequential):
    def __init__(self, cin, hidden, cout):
        super().__init__()
        c = cin
        for i, h in enumerate(hidden):
            self.add_module(str(i), ConvBNReLU(c, h, dims=1))
            c = h
        self.add_module(str(len(hidden)), ConvBNReLU(c, cout, dims=1, bn=False, relu=False))
