#!/usr/bin/env -S /usr/bin/python3
"""Render synthetic bunny scenes for PVN3D (exporter/pvn3d_export/dataset) to PVT1 files, or
measure the generator's speed.

  /usr/bin/python3 exporter/make_dataset.py --split test --start 0 --count 200 --out DIR
  /usr/bin/python3 exporter/make_dataset.py --bench --device cuda --batch 256 --count 4096
  /usr/bin/python3 exporter/make_dataset.py --preview exporter/dataset_preview.png --count 12

Writes DIR/<split>_<index:06d>.bin per sample (image uint8 [H,W,3], cld_rgb_nrm f32 [1,N,9],
choose i64 [1,1,N], labels uint8 [1,N], gt_R f32 [3,3], gt_t f32 [3], cam_K f32 [3,3],
occlusion f32 [1], seed i64 [1]), DIR/model.bin (model_kps f32 [9,3], model_points f32 [V,3],
model_diameter f32 [1]) and DIR/index.json. Runs exporter/fetch_bunny.sh (npm) unless --bunny-json
is given. Deterministic: the same command gives byte-identical files.
"""
import argparse
import os
import shutil
import sys
import time

# idle OpenMP threads sleep instead of spinning: on a shared machine with more busy threads than
# cores, spinning made 2-thread runs several times slower than 1-thread runs (set it to override)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pvn3d_export.bunny import bunny_json  # noqa: E402
from pvn3d_export.dataset import VERSION, BunnyDataset, preview, writer  # noqa: E402
from pvn3d_export.dataset.core import SPLITS  # noqa: E402


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def bench(ds, args):
    dev = ds.device
    n_batches = max(1, (args.count + args.batch - 1) // args.batch)
    ds.batch(args.split, range(args.start, args.start + args.batch))  # warm-up
    sync(dev)
    t0 = time.perf_counter()
    times = []
    for k in range(n_batches):
        s = args.start + (k + 1) * args.batch
        t1 = time.perf_counter()
        ds.batch(args.split, range(s, s + args.batch))
        sync(dev)
        times.append(time.perf_counter() - t1)
    total = time.perf_counter() - t0
    n = n_batches * args.batch
    times.sort()
    t1 = time.perf_counter()
    ds.scene_params(range(10 ** 9 - args.batch, 10 ** 9))
    t_np = time.perf_counter() - t1
    print("bench: %d samples in %d batches of %d on %s (%s, torch %s, %d CPU threads): %.1f samples/s "
          "(median batch %.3f s -> %.1f samples/s)"
          % (n, n_batches, args.batch, dev, torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU",
             torch.__version__, torch.get_num_threads(), n / total, times[len(times) // 2],
             args.batch / times[len(times) // 2]))
    print("  the numpy scene sampling alone: %.1f ms per batch (%.0f us per sample, one core)"
          % (t_np * 1e3, t_np / args.batch * 1e6))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", choices=["train", "val", "test"], default="test")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--out", help="output folder")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (cuda:N)")
    ap.add_argument("--batch", type=int, help="samples rendered together (default 64 on CPU, 256 on CUDA)")
    ap.add_argument("--bench", action="store_true", help="only measure samples/s (writes nothing)")
    ap.add_argument("--preview", metavar="PNG", help="write a contact sheet of the first --count "
                    "samples (with their full camera frames) to PNG")
    ap.add_argument("--threads", type=int, help="torch CPU threads")
    ap.add_argument("--bunny-json", help="output of exporter/fetch_bunny.sh (else it is run)")
    ap.add_argument("--h", type=int, default=64)
    ap.add_argument("--w", type=int, default=64)
    ap.add_argument("--points", type=int, default=1024)
    args = ap.parse_args(argv)
    if not (args.out or args.bench or args.preview):
        ap.error("give --out DIR, --bench or --preview PNG")
    # refused before anything is written: a negative count or batch wrote an index of samples that do not
    # exist, with exit 0, and a start outside the split left a folder holding only model.bin
    if args.count < 0 or args.start < 0 or (args.batch is not None and args.batch < 1) or args.points < 1 \
            or args.h < 1 or args.w < 1:
        ap.error("--count and --start must be >= 0, --batch, --points, --h and --w >= 1")
    if args.preview and args.count < 1:
        ap.error("--preview needs --count >= 1")
    lo, hi = SPLITS[args.split]
    if args.start + args.count > hi - lo:
        ap.error("--start %d + --count %d runs past the %s split's %d samples" % (args.start, args.count, args.split, hi - lo))
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        ap.error("--out %s is a file, not a folder" % args.out)
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    args.batch = args.batch or (256 if dev.type == "cuda" else 64)
    bj, tmp = bunny_json(args.bunny_json)
    try:
        ds = BunnyDataset(bj, device=dev, h=args.h, w=args.w, n_points=args.points,
                          chunk=max(args.batch, 1))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print("generator %s, %s split from index %d, %d samples, %dx%d, N=%d, device %s"
          % (VERSION, args.split, args.start, args.count, args.h, args.w, args.points, dev))
    if args.bench:
        bench(ds, args)
    if args.preview:
        frames, batch = ds.full_frame(args.split, range(args.start, args.start + args.count))
        preview.contact_sheet(batch, args.preview, frames=frames, cols=2)
        print("wrote", args.preview)
    if args.out:
        t0 = time.perf_counter()
        index = writer.write_split(ds, args.split, args.start, args.count, args.out, args.batch)
        dt = time.perf_counter() - t0
        occ = [s["occlusion"] for s in index["samples"]]
        print("wrote %d samples to %s in %.1f s (%.1f samples/s, rendering and writing); "
              "unoccluded %d, occlusion of the others %.2f-%.2f"
              % (args.count, args.out, dt, args.count / dt, sum(o == 0 for o in occ),
                 min([o for o in occ if o > 0] or [0]), max(occ or [0])))


if __name__ == "__main__":
    main()
