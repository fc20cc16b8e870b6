"""ResNet-34 trunk (BasicBlock, blocks 3/4/6/3) with output stride 8: layer3 and layer4 keep the
resolution (stride 1) and, by default, dilate their 3x3 convolutions by 2 and 4.

PVN3D's own trunk also stops striding after layer2 but (because of how its _make_layer tracks the
output stride) ends up with dilation 1 in layer3/layer4; `dilations=(1, 1)` reproduces that, and is
what to use with a real PVN3D checkpoint. The weight layout is the same either way.

State-dict names: conv1, bn1, layer{1..4}.{i}.conv1/bn1/conv2/bn2/downsample.{0,1}.
"""
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

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.layer4(self.layer3(x))
