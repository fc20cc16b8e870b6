"""GPU time of each stage of the full-size PVN3D CNN (ResNet-34 trunk, pyramid pooling, three x2 stages,
final layer) at 480x640 in PyTorch, per precision, and of the decoder rewrites of exporter/.../decoder.py
beside the stages they replace. A proxy for where ORT's cuDNN spends a frame (both pick cuDNN's kernels
by measuring: cudnn.benchmark here, EXHAUSTIVE in ORT), to see which stage a rewrite should target.

    python3 benchmarks/scripts/cnn_stage_times.py [--batch 1,8] [--modes strict,tf32,fp16] [--iters 50]

strict: fp32 with TF32 off (cuDNN and cuBLAS); tf32: fp32 with TF32 on; fp16: the module in half.
Each row: median of --iters CUDA-event timings after warm-up, in ms.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "exporter"))
from pvn3d_export.pvn3d import decoder  # noqa: E402
from pvn3d_export.pvn3d.pspnet import ModifiedResnet  # noqa: E402


def timed(fn, iters):
    if not torch.cuda.is_available():  # a smoke test of the script elsewhere
        import time
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def set_mode(mode):
    tf32 = mode == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--modes", default="strict,tf32,fp16")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--points", type=int, default=12288)
    ap.add_argument("--size", default="480x640", help="image HxW")
    a = ap.parse_args()
    hh, ww = (int(v) for v in a.size.split("x"))
    torch.backends.cudnn.benchmark = True
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    print("torch %s, cuDNN %s, %s" % (torch.__version__, torch.backends.cudnn.version(),
                                      torch.cuda.get_device_name() if dev == "cuda" else "CPU"))
    for mode in a.modes.split(","):
        set_mode(mode)
        dt = torch.float16 if mode == "fp16" else torch.float32
        torch.manual_seed(0)
        net = ModifiedResnet().to(dev).eval().to(dt)
        m = net.model
        for B in (int(v) for v in a.batch.split(",")):
            x = torch.randn(B, 3, hh, ww, device=dev, dtype=dt)
            choose = torch.randint(0, hh * ww, (B, 1, a.points), device=dev)
            rows = []
            with torch.no_grad():
                # the trunk as its own modules, in order (conv1, bn1, relu, maxpool, layer1..4)
                stages = list(m.feats.named_children())
                ins = {}
                t = x
                for name, mod in stages:
                    ins[name] = t
                    t = mod(t)
                feats = t
                p = m.psp(feats)
                u1 = m.up_1(p)
                u2 = m.up_2(u1)
                u3 = m.up_3(u2)
                for name, mod in stages:
                    rows.append(("trunk." + name, timed(lambda mod=mod, v=ins[name]: mod(v), a.iters)))
                rows.append(("psp", timed(lambda: m.psp(feats), a.iters)))
                for i, (st, v) in enumerate(((m.up_1, p), (m.up_2, u1), (m.up_3, u2)), 1):
                    rows.append(("up_%d" % i, timed(lambda st=st, v=v: st(v), a.iters)))
                    rows.append(("up_%d conv before upsampling" % i,
                                 timed(lambda st=st, v=v: decoder.conv_before_upsample(st, v), a.iters)))
                rows.append(("final", timed(lambda: m.final(u3), a.iters)))
                rows.append(("up_3 + final + gather (today)", timed(
                    lambda: torch.gather(m.final(m.up_3(u2)).flatten(2), 2, choose.repeat(1, 128, 1)), a.iters)))
                rows.append(("up_3 + final at the points (reference gather)", timed(
                    lambda: decoder.last_stage_at_points(m.up_3, m.final[0], u2, choose), a.iters)))
                rows.append(("whole CNN", timed(lambda: net(x), a.iters)))
            for name, ms in rows:
                print("%-6s B%-2d %-45s %9.3f ms" % (mode, B, name, ms))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
