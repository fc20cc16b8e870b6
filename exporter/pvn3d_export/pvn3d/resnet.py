"""ResNet-34 trunk (BasicBlock, blocks 3/4/6/3) with output stride 8: layer3 and layer4 keep the
resolution (stride 1) and, by default, dilate their 3x3 convolutions by 2 and 4.

PVN3D's own trunk also stops striding after layer2 but (because of how its _make_layer tracks the
output stride) ends up with dilation 1 in layer3/layer4; `dilations=(1, 1)` reproduces that, and is
what to use with a real PVN3D checkpoint. The weight layout is the same either way.

State-dict names: conv1, bn1, layer{1..4}.{i}.conv1/bn1/conv2/bn2/downsample.{0,1}.

Dilated layers as plain convolutions on a batch of sub-images (`atrous_as_batch`, set by the
exporter's --trunk-as-batches): a 3x3 convolution with dilation d (padding d) on an HxW map equals,
for every phase (i, j) in [0, d)^2, a dilation-1 convolution (padding 1) on the sub-image
x[..., i::d, j::d], as long as d divides H and W (the zero padding of the full map then falls exactly
on the sub-images' borders). The
1x1 convolutions, BatchNorm, ReLU and the residual adds act per pixel. So layer3 (dilation 2) runs on
the 4 sub-images of its input and layer4 (dilation 4) on 16, stacked along the batch axis, and the
result is put back together at the end: the same sums per output, as convolutions without dilation
(which have more cuDNN kernels, Winograd among them). Only Reshape and Transpose are added to the
graph. Measured on the H200 (2026-12-02, full size, every precision, B1 and B8): no faster than
cuDNN's dilated kernels, so it is an option, not the default.
"""
import torch.nn.functional as F
from torch import nn


def conv3x3(cin, cout, stride=1, dilation=1):
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=dilation, dilation=dilation, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1, dilation=1):
        super().__init__()
        self.conv1 = conv3x3(cin, cout, stride, dilation)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = conv3x3(cout, cout, 1, dilation)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        skip = x if self.downsample is None else self.downsample(x)
        return self.relu(y + skip)


class ResNetTrunk(nn.Module):
    """widths: channels of layer1..layer4 (64,128,256,512 for ResNet-34); blocks: 3,4,6,3.
    Input [B,3,H,W] -> [B,widths[3],H/8,W/8] (H and W multiples of 8)."""

    def __init__(self, widths=(64, 128, 256, 512), blocks=(3, 4, 6, 3), dilations=(2, 4)):
        super().__init__()
        w0 = widths[0]
        self.conv1 = nn.Conv2d(3, w0, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(w0)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        strides = (1, 2, 1, 1)
        dil = (1, 1) + tuple(dilations)
        cin = w0
        for i in range(4):
            layers = []
            for j in range(blocks[i]):
                layers.append(BasicBlock(cin, widths[i], strides[i] if j == 0 else 1, dil[i]))
                cin = widths[i]
            setattr(self, "layer%d" % (i + 1), nn.Sequential(*layers))
        self.out_channels = widths[3]
        self.dilations = tuple(dilations)
        self.atrous_as_batch = False  # the exporter's choice; training keeps the dilated layers

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        if self.atrous_as_batch and atrous_batch_ok(x.shape[2], x.shape[3], self.dilations):
            return atrous_layers_as_batch((self.layer3, self.layer4), self.dilations, x)
        return self.layer4(self.layer3(x))


def atrous_batch_ok(h, w, dilations):
    """Whether layers of these dilations (each a multiple of the one before, 1 allowed) can run as
    sub-image batches on an h x w map: the largest dilation divides h and w."""
    d_prev = 1
    for d in dilations:
        if d < 1 or d % d_prev:
            return False
        d_prev = d
    return int(h) % d_prev == 0 and int(w) % d_prev == 0


def space_to_batch(x, s):
    """[B,C,H,W] -> [B*s*s, C, H/s, W/s]: out[b*s*s + i*s + j, c, u, v] = x[b, c, u*s + i, v*s + j]."""
    c, h, w = int(x.shape[1]), int(x.shape[2]), int(x.shape[3])
    x = x.reshape(-1, c, h // s, s, w // s, s).permute(0, 3, 5, 1, 2, 4)
    return x.reshape(-1, c, h // s, w // s)


def batch_to_space(x, s):
    """The inverse of space_to_batch(x, s)."""
    c, h, w = int(x.shape[1]), int(x.shape[2]), int(x.shape[3])
    x = x.reshape(-1, s, s, c, h, w).permute(0, 3, 4, 1, 5, 2)
    return x.reshape(-1, c, h * s, w * s)


def _conv(conv, x, div):
    """conv (stride 1) on sub-images of div x div phases: a 3x3 convolution's dilation (= its padding)
    divided by div; a 1x1 convolution as it is."""
    assert conv.stride == (1, 1) and conv.groups == 1, "only stride-1 layers run as sub-image batches"
    if conv.kernel_size == (1, 1):
        return conv(x)
    d = conv.dilation[0]
    assert conv.kernel_size == (3, 3) and conv.dilation == (d, d) and conv.padding == (d, d) and d % div == 0
    return F.conv2d(x, conv.weight, conv.bias, 1, d // div, d // div)


def _block(block, x, div):
    y = block.relu(block.bn1(_conv(block.conv1, x, div)))
    y = block.bn2(_conv(block.conv2, y, div))
    skip = x if block.downsample is None else block.downsample(x)  # 1x1, stride 1: per pixel
    return block.relu(y + skip)


def atrous_layers_as_batch(layers, dilations, x):
    """The layers (stride 1, 3x3 convolutions of the given dilations) on x as batches of sub-images:
    each layer's input is split further until its dilation becomes 1; the output is reassembled."""
    splits = []
    div = 1
    for layer, d in zip(layers, dilations):
        if d // div > 1:
            x = space_to_batch(x, d // div)
            splits.append(d // div)
            div = d
        for block in layer:
            x = _block(block, x, div)
    for s in reversed(splits):
        x = batch_to_space(x, s)
    return x
