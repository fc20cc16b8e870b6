#!/usr/bin/env -S /usr/bin/python3
"""Write the decoder-rewrite test model and its fixture into pvn3d-pipeline/src/test/resources/models/.

The exporter's defaults (--cnn-at-points up_3, --conv-before-upsample 1) put ops into PVN3D's graph that the
shipped tiny model does not have: the chosen pixels' neighbourhoods (integer Div, Gather of constant tables,
PVN3D_GroupPoints in the CNN) and the per-tap products with the shift-and-resample matrices. This small model
holds exactly those two pieces (pvn3d_export/pvn3d/decoder.py, seeded random weights, non-trivial BatchNorm),
so the Java tests run them in ORT on every build (DecoderRewritesModelTest):

  decoder_rewrites.onnx        x1 [B,32,h1,w1], x3 [B,16,h3,w3], choose int64 [B,1,N]
                               -> up1 [B,16,2h1,2w1]   decoder.conv_before_upsample(up_1, x1)
                                  at_points [B,16,N]   decoder.last_stage_at_points(up_3, final, x3, choose)
                               (B, N and the map sizes dynamic in the inputs, fixed per export in the graph:
                               h1 x w1 = 6 x 10, h3 x w3 = 12 x 16)
  decoder_rewrites_case1.bin   PVT1: the three inputs (B = 2, N = 240, choose covering every border and
                               corner of the 24 x 32 map), then the expected outputs computed by the
                               original modules (upsampling, 3x3 convolution, BatchNorm, PReLU; the final
                               1x1 layer over the whole map, then the gather): an independent reference.

Deterministic. Usage:  /usr/bin/python3 exporter/make_decoder_models.py [--out DIR]
"""
import argparse
import io
import os
import sys
import warnings

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvn3d_export import ops, pvt  # noqa: E402
from pvn3d_export.pvn3d import decoder  # noqa: E402
from pvn3d_export.pvn3d.pspnet import PSPUpsample  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pvn3d-pipeline", "src", "test", "resources",
                   "models")
H1, W1, H3, W3 = 6, 10, 12, 16


class DecoderRewrites(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up_1 = PSPUpsample(32, 16)
        self.up_3 = PSPUpsample(16, 16)
        self.final = torch.nn.Conv2d(16, 16, 1)

    def forward(self, x1, x3, choose):
        return decoder.conv_before_upsample(self.up_1, x1), decoder.last_stage_at_points(self.up_3, self.final, x3, choose)

    def reference(self, x1, x3, choose):
        """The same outputs from the modules as training runs them."""
        full = self.final(self.up_3(x3)).flatten(2)
        return self.up_1(x1), torch.gather(full, 2, choose.repeat(1, int(full.shape[1]), 1))


def build():
    torch.manual_seed(20261202)
    m = DecoderRewrites()
    with torch.no_grad():
        for st in (m.up_1, m.up_3):
            bn = st.conv[2]
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.uniform_(0.75, 1.25)
            bn.bias.uniform_(-0.2, 0.2)
            st.conv[3].weight.fill_(0.2)  # PReLU: a slope that shows on negative inputs
    return m.eval()


def sample(n=240):
    g = torch.Generator().manual_seed(7)
    x1 = torch.randn(2, 32, H1, W1, generator=g)
    x3 = torch.randn(2, 16, H3, W3, generator=g)
    hh, ww = 2 * H3, 2 * W3
    choose = torch.randint(0, hh * ww, (2, 1, n), generator=g)
    edges = [0, ww - 1, (hh - 1) * ww, hh * ww - 1, 5, (hh - 1) * ww + 7, 3 * ww, 4 * ww - 1]  # corners, borders
    choose[0, 0, :len(edges)] = torch.tensor(edges)
    choose[1, 0, -len(edges):] = torch.tensor(edges)
    return x1, x3, choose


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    m = build()
    x1, x3, choose = sample()
    with torch.no_grad():
        got = m(x1, x3, choose)
        want = m.reference(x1, x3, choose)
    for g, w in zip(got, want):
        d = float((g - w).abs().max())
        assert d < 1e-5, d
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ops.onnx_export(m, (x1, x3, choose), buf, opset_version=17, input_names=["x1", "x3", "choose"],
                        output_names=["up1", "at_points"], custom_opsets={ops.DOMAIN: ops.OPSET},
                        dynamic_axes={"x1": {0: "B"}, "x3": {0: "B"}, "choose": {0: "B", 2: "N"},
                                      "up1": {0: "B"}, "at_points": {0: "B", 2: "N"}},
                        do_constant_folding=True)
    model = onnx.load_from_string(buf.getvalue())
    model.ir_version = min(model.ir_version, 8)
    model.producer_name = "pvn3d-export"
    model.doc_string = "decoder.py's two rewrites on seeded random weights (exporter/make_decoder_models.py)"
    onnx.checker.check_model(model)
    path = os.path.join(a.out, "decoder_rewrites.onnx")
    onnx.save(model, path)
    tensors = [("x1", x1.numpy()), ("x3", x3.numpy()), ("choose", choose.numpy()),
               ("up1", want[0].numpy()), ("at_points", want[1].numpy())]
    pvt.save(os.path.join(a.out, "decoder_rewrites_case1.bin"), tensors)
    kinds = sorted({n.op_type for n in model.graph.node})
    print("wrote %s (%d bytes, %d nodes: %s)" % (path, os.path.getsize(path), len(model.graph.node), ", ".join(kinds)))


if __name__ == "__main__":
    main()
