#!/usr/bin/env -S /usr/bin/python3
"""Build, export and check the PVN3D network (LineMOD setting) with the custom PointNet++ nodes, and
write its fixture.

Writes (default: tiny -> pvn3d-pipeline/src/main/resources/pvn3d/, full -> build/pvn3d/)
  pvn3d_<width>.onnx            opset 17 + ai.onnx.contrib v1, IR 8; dynamic B and N (N >= the
                                first SA npoint), image size fixed at export (--height/--width)
  pvn3d_<width>_sample.bin      PVT1: the inputs and the scene (camera, labels, pose, model)
  pvn3d_<width>_expected.bin    PVT1: PyTorch outputs, SA1 indices, PyTorch-pipeline pose
  (with --pose-head: pvn3d_<width>_pose.onnx, the same graph + PVN3D_PoseSolve)

Usage (from the repository root):
  /usr/bin/python3 exporter/export_pvn3d.py                       # tiny, committed fixture
  /usr/bin/python3 exporter/export_pvn3d.py --width full          # 480x640, N=12288
  /usr/bin/python3 exporter/export_pvn3d.py --width full --checkpoint pvn3d_best.pth.tar
  /usr/bin/python3 exporter/export_pvn3d.py --checkpoint runs/tiny/state_dict.pt --out-dir build/trained
                          # a model of exporter/train_pvn3d.py: its configuration comes from the
                          # state_dict.json beside the checkpoint
Runs exporter/fetch_bunny.sh (npm) unless --bunny-json is given.
"""
import argparse
import collections
import io
import json
import os
import shutil
import sys
import time
import warnings

import numpy as np
import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pvn3d_export import ops, pvt  # noqa: E402
from pvn3d_export.bunny import bunny_json  # noqa: E402
from pvn3d_export.pvn3d import model as M, npeval_ext, pointwise, pose, resnet, scene  # noqa: E402

REPO = os.path.dirname(HERE)
DEFAULT_OUT = {"tiny": os.path.join(REPO, "pvn3d-pipeline", "src", "main", "resources", "pvn3d"),
               "small": os.path.join(REPO, "build", "pvn3d"),
               "full": os.path.join(REPO, "build", "pvn3d")}
DEFAULTS = {"tiny": dict(height=64, width=64, points=1024, n2=600),
            "small": dict(height=64, width=64, points=1024, n2=600),
            "full": dict(height=480, width=640, points=12288, n2=2560)}
SEED = 20240611
INPUT_NAMES = ["rgb", "cld_rgb_nrm", "choose"]
POSE_OUTPUT_NAMES = ["pose_R", "pose_t", "pose_kps", "pose_inliers"]


def log(*a):
    print(*a, flush=True)


def dataset_samples(bunny_json_path, split, index, h, w, n):
    """Samples index, index+1, index+2 of a dataset split as fixture samples (ordered (name, array)
    lists): the model inputs, then the entries the dataset writer stores (uint8 image, labels, pose,
    intrinsics, occlusion, seed) and the model's."""
    from pvn3d_export.dataset import BunnyDataset, writer
    ds = BunnyDataset(bunny_json_path, device="cpu", h=h, w=w, n_points=n)
    b = ds.batch(split=split, indices=[index, index + 1, index + 2])
    out = []
    for i in range(3):
        stored = writer.sample_tensors(b, i)
        inputs = [("rgb", np.ascontiguousarray(b["rgb"][i:i + 1].cpu().numpy(), np.float32))] + \
            [(k, v) for k, v in stored if k in ("cld_rgb_nrm", "choose")]
        out.append(inputs + [(k, v) for k, v in stored if k not in ("cld_rgb_nrm", "choose")]
                   + writer.model_tensors(ds))
    return out


def torch_export(model, inputs, output_names, dynamic_axes):
    buf = io.BytesIO()
    kw = dict(opset_version=17, input_names=INPUT_NAMES, output_names=output_names,
              dynamic_axes=dynamic_axes, custom_opsets={ops.DOMAIN: ops.OPSET},
              do_constant_folding=True)
    with torch.no_grad(), warnings.catch_warnings():
        # trace-time input checks of the reference ops and the static image size give
        # TracerWarnings (the custom nodes replace those paths in the graph): noise here
        warnings.simplefilter("ignore")
        ops.onnx_export(model, inputs, buf, **kw)
    return onnx.load_from_string(buf.getvalue())


def inventory(m):
    return collections.Counter(("%s::%s" % (n.domain, n.op_type)) if n.domain else n.op_type
                               for n in m.graph.node)


def conv_first_stages(spec):
    """--conv-before-upsample: "none" or a comma list of the decoder's x2 stages (1, 2, 3) -> a tuple."""
    if spec in (None, "", "none"):
        return ()
    stages = tuple(sorted({int(v) for v in str(spec).split(",")}))
    if not all(v in (1, 2, 3) for v in stages):
        raise ValueError("--conv-before-upsample takes stages 1, 2, 3 or none, got %r" % spec)
    return stages


def export(model, inputs, args, output_names, meta):
    dyn = {"rgb": {0: "B"}, "cld_rgb_nrm": {0: "B", 1: "N"}, "choose": {0: "B", 2: "N"},
           "pred_rgbd_seg": {0: "B", 1: "N"}, "pred_kp_of": {0: "B", 2: "N"},
           "pred_ctr_of": {0: "B", 2: "N"}}
    for n in output_names:
        dyn.setdefault(n, {0: "B"})
    t0 = time.time()
    trunk = args.net.cnn.model.feats
    trunk.atrous_as_batch = bool(getattr(args, "trunk_as_batches", False))  # in the graph only: the reference stays dilated
    as_matmul = getattr(args, "pointwise", "conv") == "matmul"  # in the graph only, like the trunk's layout
    psp = args.net.cnn.model
    args.net.cnn_at_points = getattr(args, "cnn_at_points", "none")  # in the graph only, like the two above
    psp.conv_first = conv_first_stages(getattr(args, "conv_before_upsample", "none"))
    try:
        with pointwise.as_matmul(args.net, as_matmul):
            m = torch_export(model, inputs, output_names, dyn)
    finally:
        trunk.atrous_as_batch = False
        args.net.cnn_at_points = "none"
        psp.conv_first = ()
    log("torch.onnx.export (torch %s): %.1f s%s" % (torch.__version__, time.time() - t0,
                                                    "; %d per-point layers as MatMul" % pointwise.count_convs(args.net)
                                                    if as_matmul else ""))
    m.producer_name = "pvn3d-export"
    m.producer_version = "1"
    m.doc_string = ("PVN3D (LineMOD setting), width %s, seeded random weights unless a checkpoint "
                    "was given; made by exporter/export_pvn3d.py" % args.width_name)
    if m.ir_version > 8:
        m.ir_version = 8  # ORT 1.16 reads IR <= 9; keep what the other fixtures use
    shapes = M.output_shapes(args.net, pose_head=POSE_OUTPUT_NAMES[0] in output_names)
    for o in m.graph.output:  # name the dimensions (the tracer leaves generated names)
        dims = o.type.tensor_type.shape.dim
        want = shapes[o.name]
        assert len(dims) == len(want), (o.name, len(dims), want)
        for dim, v in zip(dims, want):
            dim.Clear()
            if isinstance(v, str):
                dim.dim_param = v
            else:
                dim.dim_value = v
    for k, v in meta.items():
        p = m.metadata_props.add()
        p.key, p.value = k, str(v)
    onnx.checker.check_model(m)
    inferred = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(inferred)
    return m, inferred


def verify(m, model, feeds_list, output_names, tol):
    """numpy evaluation of the graph vs PyTorch: max abs diff per float output, exact indices."""
    report = []
    for feeds in feeds_list:
        t0 = time.time()
        got = npeval_ext.run(m, feeds, keep_all=False)
        with torch.no_grad():
            want = model(*[torch.from_numpy(feeds[k]) for k in INPUT_NAMES])
        shape = "B=%d N=%d" % feeds["cld_rgb_nrm"].shape[:2]
        for name, w in zip(output_names, want):
            w = w.numpy()
            g = got[name]
            assert g.shape == w.shape, (name, g.shape, w.shape)
            if w.dtype == np.int64:
                bad = int((g != w).sum())
                log("  %-14s %s: %d index mismatches of %d" % (name, shape, bad, w.size))
                report.append((shape, name, "mismatches", bad))
                assert bad == 0, name
            else:
                ok = np.isfinite(w)
                err = float(np.abs(g[ok].astype(np.float64) - w[ok]).max()) if ok.any() else 0.0
                assert (np.isfinite(g) == ok).all(), name
                log("  %-14s %s: max abs diff %.3g (max |value| %.3g)"
                    % (name, shape, err, float(np.abs(w[ok]).max()) if ok.any() else 0.0))
                report.append((shape, name, "max_abs_diff", err))
                assert err < tol, (name, err)
        log("  (numpy evaluation %.1f s)" % (time.time() - t0))
    return report


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--width", dest="width_name", choices=sorted(M.CONFIGS),
                    help="network width (default: the model config's, else tiny)")
    ap.add_argument("--height-px", type=int, help="image height (multiple of 8)")
    ap.add_argument("--width-px", type=int, help="image width (multiple of 8)")
    ap.add_argument("--points", type=int, help="N of the sample (>= first SA npoint)")
    ap.add_argument("--npoints", help="SA npoints, e.g. 2048,1024,512,128 (default per width)")
    ap.add_argument("--trunk-dilation", default=None,
                    help="dilation of ResNet layer3,layer4: 2,4 (default) or 1,1 (what PVN3D's "
                         "trunk effectively runs; the default with --checkpoint unless a model "
                         "config says otherwise)")
    ap.add_argument("--trunk-as-batches", action="store_true",
                    help="export layer3/layer4's dilated convolutions as dilation-1 convolutions on a "
                         "batch of sub-images (when the largest dilation divides H/8 and W/8; resnet.py): "
                         "the same arithmetic; measured on the H200 (2026-12-02) no faster than cuDNN's "
                         "dilated kernels, so not the default")
    ap.add_argument("--pointwise", choices=("matmul", "conv"), default="matmul",
                    help="the per-point 1x1 convolutions (PointNet++'s shared MLPs, the dense fusion, the "
                         "heads): matmul (default) exports them as MatMul + Add (+ Relu) with BatchNorm folded "
                         "in (pointwise.py), one GEMM on the NCHW data; conv keeps Conv nodes, around which "
                         "cuDNN adds layout and bias kernels. Measured on the H200 (2026-12-02, random weights, "
                         "CUDA graph): matmul is 3-22%% faster per frame in every mode but fp16 B1 (equal)")
    ap.add_argument("--cnn-at-points", choices=M.PVN3D.CNN_AT_POINTS, default="up_3",
                    help="which tail of the CNN runs at the N chosen pixels only (model.rgb_embedding_at_points; "
                         "the same function, as nothing else reads the map): up_3 (default) picks them before the "
                         "last x2 stage, whose 3x3 convolution and the final layer then run on 4%% of the pixels at "
                         "480x640 (decoder.py); final before the final 1x1 layer only; none computes the whole map "
                         "and picks after it, as PVN3D does")
    ap.add_argument("--conv-before-upsample", default="1", metavar="STAGES",
                    help="decoder x2 stages (comma list of 1, 2, 3, or none) whose 3x3 convolution runs before "
                         "the upsampling, as a per-tap product at the lower resolution and two constant "
                         "resampling products (decoder.py): a quarter of the convolution's multiply-adds. "
                         "Default 1 (91 of the network's 394 GFLOP at 480x640); at stages 2 and 3 the resampling "
                         "products cost more than they save. Measured on the H200 with --cnn-at-points up_3 "
                         "(2026-12-02, trained full model, CUDA graph, B1): strict 25.84 -> 22.82 ms, tf32 9.68 -> "
                         "9.07, fp16 8.25 -> 7.78")
    ap.add_argument("--n-classes", type=int, help="(default: the model config's, else 2)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--checkpoint", help="a PVN3D checkpoint (state dict) to load, strict=False")
    ap.add_argument("--model-config",
                    help="JSON of the model (train_pvn3d.py writes state_dict.json beside "
                         "state_dict.pt); default: <checkpoint without extension>.json when it "
                         "exists, else the model_config inside a train_pvn3d.py checkpoint "
                         "(last.pt, best.pt). It gives width, trunk dilation, SA npoints, n_classes, "
                         "image size and points; options given here override it")
    ap.add_argument("--pose-head", action="store_true",
                    help="also export pvn3d_<width>_pose.onnx: the graph + PVN3D_PoseSolve "
                         "(outputs pose_R, pose_t, pose_kps, pose_inliers)")
    ap.add_argument("--no-index-outputs", action="store_true",
                    help="leave out the sa1_* index outputs")
    ap.add_argument("--bunny-json", help="output of exporter/fetch_bunny.sh (else it is run)")
    ap.add_argument("--dataset-sample", metavar="SPLIT:INDEX",
                    help="take the fixture sample (and the two verification samples after it) from the "
                         "dataset generator, e.g. test:0, instead of the fixed scene of scene.py; the "
                         "sample file then has the dataset's entries (uint8 image) plus rgb")
    ap.add_argument("--out-dir")
    ap.add_argument("--no-verify", action="store_true", help="skip the numpy evaluation")
    ap.add_argument("--tol", type=float, default=1e-3, help="max abs diff allowed by the check")
    ap.add_argument("--time-cuda", type=int, default=0, metavar="N",
                    help="after writing, time N forward passes of the PyTorch network (the reference "
                         "operators in plain PyTorch) on the GPU, fp32 without TF32, for comparison "
                         "with the ORT deployment (needs CUDA)")
    args = ap.parse_args(argv)
    # what the work would only meet later, as a traceback: refused here with one line, before anything runs
    if args.dataset_sample is not None:
        split, _, index = args.dataset_sample.partition(":")
        if split not in ("train", "val", "test") or not index.lstrip("-").isdigit():
            ap.error("--dataset-sample takes SPLIT:INDEX (SPLIT train, val or test), not %r" % args.dataset_sample)
    if args.npoints is not None and len(args.npoints.split(",")) != 4:
        ap.error("--npoints takes the four SA levels' counts, e.g. 256,64,16,4, not %r" % args.npoints)
    for opt, value, least in (("--n-classes", args.n_classes, 2), ("--points", args.points, 1),
                              ("--height-px", args.height_px, 8), ("--width-px", args.width_px, 8)):
        if value is not None and value < least:
            ap.error("%s must be at least %d, not %d" % (opt, least, value))
    return args


def resolve_model_config(args):
    """The network and sample settings: options given on the command line, else the model config
    (--model-config, or the JSON beside --checkpoint), else the width's defaults. Returns dict(width,
    height, width_px, points, trunk_dilation (tuple), npoints (tuple or None), n_classes, n_kps,
    source (the JSON's path or None), trained (the JSON's training summary or None), model_kps (the
    keypoints the model was trained with, [K+1][3], or None))."""
    path = args.model_config
    if path is None and args.checkpoint:
        cand = os.path.splitext(args.checkpoint)[0] + ".json"
        path = cand if os.path.isfile(cand) else None
    mc = {}
    if path:
        with open(path) as f:
            mc = json.load(f)
    elif args.checkpoint:
        try:  # a training checkpoint of train_pvn3d.py (last.pt, best.pt) carries its model config
            ck = torch.load(args.checkpoint, map_location="cpu")
            if isinstance(ck, dict) and isinstance(ck.get("model_config"), dict):
                mc, path = ck["model_config"], args.checkpoint + ":model_config"
        except Exception:
            pass
    width = args.width_name or mc.get("width") or "tiny"
    d = DEFAULTS[width]
    if args.trunk_dilation:
        dil = args.trunk_dilation
    elif mc.get("trunk_dilation"):
        dil = ",".join(str(v) for v in mc["trunk_dilation"])
    else:
        dil = "1,1" if args.checkpoint else "2,4"
    if args.npoints:
        npoints = tuple(int(v) for v in args.npoints.split(","))
    elif mc.get("npoints"):
        npoints = tuple(int(v) for v in mc["npoints"])
    else:
        npoints = None
    def given(value, key, default):  # an option given on the command line wins, even 0 (refused in parse_args)
        return value if value is not None else mc.get(key) or default
    return dict(width=width, height=given(args.height_px, "height_px", d["height"]),
                width_px=given(args.width_px, "width_px", d["width"]),
                points=given(args.points, "points", d["points"]),
                trunk_dilation=tuple(int(v) for v in dil.split(",")), npoints=npoints,
                n_classes=given(args.n_classes, "n_classes", 2), n_kps=int(mc.get("n_kps", 8)),
                source=path, trained=mc.get("trained"), model_kps=mc.get("model_kps"))


def main(argv=None):
    args = parse_args(argv)
    for opt, path in (("--checkpoint", args.checkpoint), ("--model-config", args.model_config)):
        if path is not None and not os.path.isfile(path):
            sys.exit("export_pvn3d: %s %s: no such file" % (opt, path))
    mc = resolve_model_config(args)
    if mc["source"]:
        log("model config %s: width %s, trunk dilation %s, SA npoints %s, n_classes %d, %dx%d, N %d"
            % (mc["source"], mc["width"], mc["trunk_dilation"], mc["npoints"], mc["n_classes"],
               mc["height"], mc["width_px"], mc["points"]))
    args.width_name, args.n_classes = mc["width"], mc["n_classes"]
    d = DEFAULTS[args.width_name]
    h, w, n = mc["height"], mc["width_px"], mc["points"]
    out_dir = args.out_dir or DEFAULT_OUT[args.width_name]
    dil = mc["trunk_dilation"]
    npoints = mc["npoints"]
    if h % 8 or w % 8:
        sys.exit("export_pvn3d: the image size must be a multiple of 8, not %dx%d" % (h, w))
    try:  # now, not after the export: a file in the way or no permission ends it before the work
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        sys.exit("export_pvn3d: --out-dir %s: %s" % (out_dir, e.strerror or e))

    bj, tmp = bunny_json(args.bunny_json)
    try:
        if args.dataset_sample:
            split, index = args.dataset_sample.split(":")
            sample, *other = dataset_samples(bj, split, int(index), h, w, n)
        else:
            sample = scene.make_sample(bj, h, w, n, seed=args.seed)
            other = [scene.make_sample(bj, h, w, d["n2"], seed=args.seed + s) for s in (1, 2)]
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if mc["model_kps"] is not None:
        # the keypoints the model was trained on (train_pvn3d.py records the dataset's): the sample,
        # the expected pose and the --pose-head graph use them
        kps = np.asarray(mc["model_kps"], np.float32).reshape(-1, 3)
        old = dict(sample)["model_kps"]
        log("model keypoints from %s (max difference to the scene's: %.3g m)" % (
            mc["source"], float(np.abs(kps - old).max()) if kps.shape == old.shape else float("nan")))
        sample = [(k, kps if k == "model_kps" else v) for k, v in sample]
    sd = collections.OrderedDict(sample)
    inputs = tuple(torch.from_numpy(sd[k]) for k in INPUT_NAMES)
    log("sample: rgb %s, cld_rgb_nrm %s, %d object points, K:\n%s"
        % (list(sd["rgb"].shape), list(sd["cld_rgb_nrm"].shape), int(sd["labels"].sum()),
           np.round(sd["cam_K"], 3)))

    kw = dict(n_classes=args.n_classes, dilations=dil, npoints=npoints,
              index_outputs=not args.no_index_outputs)
    if mc["n_kps"] != 8:
        kw["n_kps"] = mc["n_kps"]
    if args.checkpoint:
        torch.manual_seed(args.seed)
        net = M.PVN3D(args.width_name, **kw).eval()
        try:
            rep = M.load_checkpoint(net, args.checkpoint)
        except Exception as e:  # not a torch file at all (a pickle error, a zip error, ...)
            sys.exit("export_pvn3d: %s is not a torch checkpoint (%s)" % (args.checkpoint, str(e).splitlines()[0]))
        log("checkpoint %s: %d tensors loaded" % (args.checkpoint, rep["loaded"]))
        for key in ("missing", "unexpected", "mismatched", "unused"):
            log("  %s (%d): %s" % (key, len(rep[key]), ", ".join(rep[key][:20])
                                   + (" ..." if len(rep[key]) > 20 else "")))
        if rep["loaded"] == 0 or rep["mismatched"]:
            # the network would keep its initial weights, in part or whole, under the checkpoint's name
            sys.exit("export_pvn3d: %s does not fit this %s network (%d tensors loaded, %d of another shape): "
                     "check --width, --n-classes and --model-config" % (args.checkpoint, args.width_name,
                                                                        rep["loaded"], len(rep["mismatched"])))
    else:
        net = M.build(args.width_name, inputs, seed=args.seed, **kw)
    args.net = net
    assert n >= net.min_points, "N=%d < first SA npoint %d" % (n, net.min_points)
    log("network %s: %d parameters (cnn %d, pointnet2 %d, fusion %d, heads %d), SA npoints %s, "
        "trunk dilation %s" % (args.width_name, M.n_params(net), M.n_params(net.cnn),
                               M.n_params(net.pointnet2), M.n_params(net.rgbd_feat),
                               M.n_params(net.SEG_layer) + M.n_params(net.KpOF_layer)
                               + M.n_params(net.CtrOf_layer),
                               list(net.cfg["pointnet"]["npoints"]), dil))

    out_names = M.OUTPUT_NAMES + ([] if args.no_index_outputs else M.INDEX_OUTPUT_NAMES)
    t0 = time.time()
    with torch.no_grad():
        outs = net(*inputs)
        votes, mask = pose.votes_and_mask(inputs[1], outs[0], outs[1], outs[2])
        kps_model = torch.from_numpy(sd["model_kps"])
        dev = "cuda" if torch.cuda.is_available() else "cpu"  # the reference mean shift is O(N^2)
        pres = pose.pose_solve_ref(votes.to(dev), mask.to(dev), kps_model)
    log("PyTorch forward + pose: %.1f s; mask %d points, inliers %d"
        % (time.time() - t0, int(mask.sum()), int(pres[3][0])))
    expected = collections.OrderedDict(zip(out_names, (o.numpy() for o in outs)))
    expected.update(zip(POSE_OUTPUT_NAMES, (p.numpy() for p in pres)))

    meta = dict(width=args.width_name, height=h, width_px=w, n_classes=args.n_classes,
                n_kps=net.n_kps, min_points=net.min_points,
                sa_npoints=",".join(map(str, net.cfg["pointnet"]["npoints"])),
                trunk_dilation=",".join(map(str, dil)), seed=args.seed,
                trunk_layout=("sub-image batches" if args.trunk_as_batches and resnet.atrous_batch_ok(h // 8, w // 8, dil)
                              else "dilated"),
                pointwise=args.pointwise,
                cnn_at_points=args.cnn_at_points,
                conv_before_upsample=",".join(map(str, conv_first_stages(args.conv_before_upsample))) or "none",
                checkpoint=os.path.basename(args.checkpoint) if args.checkpoint else "none",
                layouts="rgb[B,3,H,W] cld_rgb_nrm[B,N,9] choose[B,1,N] -> pred_rgbd_seg[B,N,C] "
                        "pred_kp_of[B,K,N,3] pred_ctr_of[B,1,N,3]; vote = xyz - offset")
    if mc["trained"]:
        meta["trained"] = json.dumps(mc["trained"], sort_keys=True)
    m, inferred = export(net, inputs, args, out_names, meta)
    inv = inventory(m)
    log("node inventory (%d nodes):" % sum(inv.values()))
    for k, v in sorted(inv.items(), key=lambda kv: (-kv[1], kv[0])):
        log("  %-40s %d" % (k, v))
    for name in ops.OP_NAMES:
        assert inv["%s::PVN3D_%s" % (ops.DOMAIN, name)] > 0, name
    assert "BatchNormalization" not in inv, "BatchNorm was not folded"
    for o in inferred.graph.output:
        log("output:", onnx.helper.printable_value_info(o))

    if not args.no_verify:
        log("numpy evaluation of the ONNX graph vs PyTorch:")
        feeds = [{k: sd[k] for k in INPUT_NAMES}]
        o1, o2 = dict(other[0]), dict(other[1])
        feeds.append({k: np.concatenate([o1[k], o2[k]], 0) for k in INPUT_NAMES})
        verify(m, net, feeds, out_names, args.tol)

    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, "pvn3d_%s" % args.width_name)
    with open(base + ".onnx", "wb") as f:
        f.write(m.SerializeToString())
    pvt.save(base + "_sample.bin", sample)
    pvt.save(base + "_expected.bin", expected)
    for suffix in (".onnx", "_sample.bin", "_expected.bin"):
        log("wrote %s (%d bytes)" % (base + suffix, os.path.getsize(base + suffix)))
    for k, v in expected.items():
        log("  expected %-14s %-8s %s" % (k, v.dtype, list(v.shape)))
    log("PyTorch-pipeline pose: R=%s t=%s inliers=%d" % (
        np.round(pres[0][0].numpy(), 4).tolist(), np.round(pres[1][0].numpy(), 4).tolist(),
        int(pres[3][0])))

    if args.time_cuda > 0:
        try:
            time_on_cuda(net, inputs, args.time_cuda)
        except Exception as e:  # the timing is a by-product: the export has been written
            log("--time-cuda failed: %r" % (e,))

    if args.pose_head:
        head = pose.PoseHead(net, sd["model_kps"]).eval()
        pm, _ = export(head, inputs, args, out_names + POSE_OUTPUT_NAMES,
                       dict(meta, pose_head="PVN3D_PoseSolve bandwidth=0.08 max_iter=300 "
                                            "center_filter=1 obj_class=1"))
        pinv = inventory(pm)
        assert pinv["%s::PVN3D_PoseSolve" % ops.DOMAIN] == 1
        if not args.no_verify:
            log("numpy evaluation of the pose-head graph vs the PyTorch pipeline:")
            got = npeval_ext.run(pm, {k: sd[k] for k in INPUT_NAMES}, keep_all=False)
            for k in POSE_OUTPUT_NAMES:
                g, e = got[k], expected[k]
                diff = float(np.abs(g.astype(np.float64) - e).max())
                log("  %-14s max abs diff %.3g" % (k, diff))
        with open(base + "_pose.onnx", "wb") as f:
            f.write(pm.SerializeToString())
        log("wrote %s_pose.onnx (%d bytes); extra nodes: %s" % (
            base, os.path.getsize(base + "_pose.onnx"),
            dict((k, v - inv.get(k, 0)) for k, v in pinv.items() if v != inv.get(k, 0))))
    return 0


def time_on_cuda(net, inputs, runs):
    """Median milliseconds of `runs` forward passes on the GPU (CUDA events, after two warm-up passes)."""
    if not torch.cuda.is_available():
        log("--time-cuda: no CUDA device, not timed")
        return
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    gnet = net.to("cuda")
    gin = tuple(t.to("cuda") for t in inputs)
    ms = []
    with torch.no_grad():
        for i in range(2 + runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            gnet(*gin)
            end.record()
            torch.cuda.synchronize()
            if i >= 2:
                ms.append(start.elapsed_time(end))
    ms.sort()
    med = ms[len(ms) // 2] if len(ms) % 2 else (ms[len(ms) // 2 - 1] + ms[len(ms) // 2]) / 2
    log("PyTorch forward on %s (torch %s, fp32, no TF32): median %.2f ms over %d runs, min %.2f, max %.2f"
        % (torch.cuda.get_device_name(0), torch.__version__, med, runs, ms[0], ms[-1]))
    net.to("cpu")


if __name__ == "__main__":
    sys.exit(main())
