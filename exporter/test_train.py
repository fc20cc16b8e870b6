#!/usr/bin/env -S /usr/bin/python3
"""Checks train_pvn3d.py: the losses on hand-made inputs, the pose metrics, an exact resume, and a
short command-line run (CPU, tiny network) writing every output, whose state_dict.pt loads by name.

The data come from StandInDataset below, a small stand-in with the API of
pvn3d_export.dataset.BunnyDataset (an ellipsoid "object" on a plane, points sampled directly, no
rendering), so these tests need neither the bunny nor the real generator.

Run:  cd exporter && /usr/bin/python3 -m unittest -v test_train
"""
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_pvn3d as T  # noqa: E402
from pvn3d_export import native_ops, ops  # noqa: E402
from pvn3d_export.pvn3d import model as M  # noqa: E402

HAVE_LIB = native_ops.available()
N_TEST = 320  # points per sample in these tests (>= the tiny network's first SA npoint, 256)


def blob_points(n, centre, axes, rng):
    """n points on an ellipsoid surface and their unit normals."""
    u = rng.normal(size=(n, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    nrm = u / axes
    return u * axes + centre, nrm / np.linalg.norm(nrm, axis=1, keepdims=True)


class StandInDataset:
    """The API of pvn3d_export.dataset.BunnyDataset on made-up scenes. Deterministic per
    (split, index). Object: 600 points on three ellipsoids (a body, a head, an ear: no rotational
    symmetry; about 14 cm across), coloured along the model's x axis; 8 keypoints by FPS from the
    centre, then the centre; random rotation, t ~ (±3 cm, ±3 cm, 0.45..0.55 m); the other points on a
    plane 10 cm behind. Offsets as the project's convention: vote = point - offset."""

    BLOBS = (((0.0, 0.0, 0.0), (0.06, 0.045, 0.04), 360),
             ((0.06, 0.03, 0.0), (0.025, 0.025, 0.025), 160),
             ((0.06, 0.065, 0.012), (0.008, 0.025, 0.008), 80))

    def __init__(self, bunny_json_path=None, device="cpu", h=64, w=64, n_points=1024):
        self.device = torch.device(device)
        self.h, self.w, self.n_points = h, w, n_points
        rng = np.random.RandomState(0)
        parts = [blob_points(n, np.array(c), np.array(a), rng) for c, a, n in self.BLOBS]
        pts = np.concatenate([p for p, _ in parts])
        self._normals = np.concatenate([q for _, q in parts])
        lo, hi = pts.min(0), pts.max(0)
        self.model_points = (pts - (lo + hi) / 2).astype(np.float32)
        x = self.model_points[:, 0]
        g = ((x - x.min()) / (x.max() - x.min()))[:, None]
        self._colours = (1 - g) * np.array([0.9, 0.75, 0.5]) + g * np.array([0.6, 0.3, 0.2])
        from pvn3d_export.pvn3d import scene
        self.model_kps = scene.model_keypoints(self.model_points.astype(np.float64), 8).astype(np.float32)
        d = self.model_points[:, None] - self.model_points[None]
        self.model_diameter = float(np.sqrt((d ** 2).sum(-1)).max())
        self.K = np.array([[143.1, 0, w / 2], [0, 143.4, h / 2], [0, 0, 1]], np.float32)

    def _sample(self, split, index):
        rng = np.random.RandomState({"train": 1, "val": 2, "test": 3}[split] * 1000003 + int(index))
        q, r = np.linalg.qr(rng.normal(size=(3, 3)))
        R = q * np.sign(np.diag(r))
        if np.linalg.det(R) < 0:
            R[:, 0] = -R[:, 0]
        t = np.array([rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03), rng.uniform(0.45, 0.55)])
        n_obj = rng.randint(self.n_points // 4, self.n_points // 2)
        sel = rng.randint(0, len(self.model_points), n_obj)
        obj = self.model_points[sel] @ R.T + t + rng.normal(0, 0.001, (n_obj, 3))
        nrm_obj = self._normals[sel] @ R.T
        nb = self.n_points - n_obj
        bg = np.stack([rng.uniform(-0.12, 0.12, nb), rng.uniform(-0.12, 0.12, nb),
                       np.full(nb, t[2] + 0.1)], 1)
        xyz = np.concatenate([obj, bg])
        nrm = np.concatenate([nrm_obj, np.tile([0.0, 0.0, -1.0], (nb, 1))])
        nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
        nrm[(nrm * xyz).sum(1) > 0] *= -1
        col = np.concatenate([self._colours[sel], np.tile([0.4, 0.5, 0.65], (nb, 1))])
        col = np.clip(col + rng.normal(0, 0.03, col.shape), 0, 1)
        labels = np.concatenate([np.ones(n_obj, np.int64), np.zeros(nb, np.int64)])
        perm = rng.permutation(self.n_points)
        xyz, nrm, col, labels = xyz[perm], nrm[perm], col[perm], labels[perm]
        uv = xyz @ self.K.T.astype(np.float64)
        u = np.clip(np.round(uv[:, 0] / uv[:, 2]), 0, self.w - 1).astype(np.int64)
        v = np.clip(np.round(uv[:, 1] / uv[:, 2]), 0, self.h - 1).astype(np.int64)
        image = np.tile(np.array([0.4, 0.5, 0.65]), (self.h, self.w, 1))
        image[v, u] = col
        kp_cam = self.model_kps @ R.T + t  # [9,3]
        ofst = xyz[None] - kp_cam[:, None]  # [9,N,3]
        mean, std = np.array(T.IMAGENET_MEAN), np.array(T.IMAGENET_STD)
        return dict(
            rgb=((image - mean) / std).transpose(2, 0, 1), cld_rgb_nrm=np.concatenate([xyz, col, nrm], 1),
            choose=(v * self.w + u)[None], labels=labels, kp_targ_ofst=ofst[:8], ctr_targ_ofst=ofst[8:],
            gt_R=R, gt_t=t, cam_K=self.K, occlusion=np.float64(0.0),
            image=np.round(image * 255).astype(np.uint8))

    def batch(self, split="train", indices=(0,)):
        items = [self._sample(split, i) for i in indices]
        out = {}
        for k in items[0]:
            a = np.stack([it[k] for it in items])
            dtype = {np.dtype(np.int64): torch.int64, np.dtype(np.uint8): torch.uint8}.get(a.dtype,
                                                                                         torch.float32)
            out[k] = torch.as_tensor(a).to(dtype).to(self.device)
        return out


class Losses(unittest.TestCase):
    def test_of_loss_by_hand(self):
        # B=1, K=2, N=3 points of which 2 are object points
        pred = torch.tensor([[[[0.1, 0.0, 0.0], [0.0, 0.2, 0.0], [9.0, 9.0, 9.0]],
                              [[0.0, 0.0, 0.0], [0.3, 0.3, 0.3], [1.0, 1.0, 1.0]]]])
        targ = torch.zeros_like(pred)
        labels = torch.tensor([[1, 1, 0]])
        got = T.of_loss(pred, targ, labels)
        want = torch.tensor([[(0.1 + 0.2) / (2 + 1e-3), (0.9) / (2 + 1e-3)]])
        self.assertTrue(torch.allclose(got, want, atol=1e-7), (got, want))
        # no object point: 0, not NaN
        self.assertEqual(float(T.of_loss(pred, targ, torch.zeros_like(labels)).abs().sum()), 0.0)

    def test_focal_loss_by_hand(self):
        logits = torch.tensor([[[2.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
        labels = torch.tensor([[0, 0, 1]])
        p = torch.softmax(logits[0], 1)
        pt = [float(p[0, 0]), float(p[1, 0]), float(p[2, 1])]
        want = sum(-(1 - q) ** 2 * math.log(q) for q in pt) / 3
        self.assertAlmostEqual(float(T.focal_loss(logits, labels, 2.0)), want, places=6)
        ce = torch.nn.functional.cross_entropy(logits[0], labels[0])
        self.assertAlmostEqual(float(T.focal_loss(logits, labels, 0.0)), float(ce), places=6)
        # PVN3D's gradient: (1 - pt)^gamma is a constant weight
        lg = logits.clone().requires_grad_(True)
        T.focal_loss(lg, labels, 2.0).backward()
        w = torch.tensor([(1 - q) ** 2 for q in pt])
        lg2 = logits.clone().requires_grad_(True)
        (w * torch.nn.functional.cross_entropy(lg2[0], labels[0], reduction="none")).mean().backward()
        self.assertTrue(torch.allclose(lg.grad, lg2.grad, atol=1e-7))

    def test_total_loss_weights(self):
        g = torch.Generator().manual_seed(0)
        B, N = 2, 6
        outs = (torch.randn(B, N, 2, generator=g), torch.randn(B, 8, N, 3, generator=g),
                torch.randn(B, 1, N, 3, generator=g))
        batch = dict(labels=torch.tensor([[1, 1, 0, 0, 1, 0], [0, 1, 0, 0, 0, 0]]),
                     kp_targ_ofst=torch.randn(B, 8, N, 3, generator=g),
                     ctr_targ_ofst=torch.randn(B, 1, N, 3, generator=g))
        cfg = dict(T.DEFAULTS)
        total, parts = T.pvn3d_loss(outs, batch, cfg)
        seg = T.focal_loss(outs[0], batch["labels"], 2.0)
        kp = T.of_loss(outs[1], batch["kp_targ_ofst"], batch["labels"]).sum(1).mean()
        ctr = T.of_loss(outs[2], batch["ctr_targ_ofst"], batch["labels"]).sum(1).mean()
        self.assertAlmostEqual(float(total), float(2.0 * seg + kp + ctr), places=5)
        self.assertAlmostEqual(float(parts["kp"]), float(kp), places=6)
        cfg["of_reduction"] = "sum"
        total2, parts2 = T.pvn3d_loss(outs, batch, cfg)
        self.assertAlmostEqual(float(total2), float(2.0 * seg + B * kp + B * ctr), places=5)

    def test_schedule(self):
        cfg = dict(T.DEFAULTS, steps=1000, warmup=100, lr=1e-3, min_lr=1e-5)
        self.assertAlmostEqual(T.lr_factor(0, cfg), 0.01)
        self.assertAlmostEqual(T.lr_factor(100, cfg), 1.0)
        self.assertAlmostEqual(T.lr_factor(550, cfg), 0.505, places=6)
        self.assertAlmostEqual(T.lr_factor(1000, cfg), 0.01)
        self.assertAlmostEqual(T.lr_factor(5000, cfg), 0.01)


class PoseMetrics(unittest.TestCase):
    def setUp(self):
        self.ds = StandInDataset()
        self.pts = torch.from_numpy(self.ds.model_points)
        b = self.ds.batch("val", range(4))
        self.R, self.t = b["gt_R"], b["gt_t"]

    def test_add_zero_for_ground_truth(self):
        add, adds = T.pose_errors(self.R, self.t, self.R, self.t, self.pts)
        self.assertEqual(add.tolist(), [0.0] * 4)
        self.assertEqual(adds.tolist(), [0.0] * 4)

    def test_adds_at_most_add(self):
        g = torch.Generator().manual_seed(3)
        for _ in range(5):
            q, _ = torch.linalg.qr(torch.randn(4, 3, 3, generator=g))
            R2 = q * torch.sign(torch.det(q)).view(4, 1, 1)
            t2 = self.t + 0.02 * torch.randn(4, 3, generator=g)
            add, adds = T.pose_errors(R2, t2, self.R, self.t, self.pts)
            self.assertTrue(bool((adds <= add).all()), (add, adds))
            self.assertTrue(bool((add > 0).all()))

    def test_translation_and_nan(self):
        shift = torch.tensor([0.003, -0.004, 0.0])
        t2 = self.t + shift
        t2[1] = float("nan")
        add, adds = T.pose_errors(self.R, t2, self.R, self.t, self.pts)
        self.assertAlmostEqual(float(add[0]), 0.005, places=6)
        self.assertTrue(math.isinf(float(add[1])) and math.isinf(float(adds[1])))
        # a symmetric object: turning an ellipsoid by 180 degrees about one of its axes costs ADD
        # its size but ADD-S only the sampling of the surface
        ell = torch.from_numpy(blob_points(2000, np.zeros(3), np.array([0.07, 0.05, 0.04]),
                                           np.random.RandomState(1))[0]).float()
        R2 = self.R @ torch.diag(torch.tensor([-1.0, -1.0, 1.0]))
        add, adds = T.pose_errors(R2, self.t, self.R, self.t, ell)
        self.assertTrue(bool((add > 0.04).all() and (adds < 0.005).all()), (add, adds))

    @unittest.skipUnless(HAVE_LIB, "libpvn3d_ops not available")
    def test_pose_from_perfect_predictions(self):
        """Ground-truth offsets and labels through solve_poses give the ground-truth pose."""
        b = self.ds.batch("val", range(3))
        seg = torch.stack([1.0 - b["labels"].float(), b["labels"].float()], 2) * 5
        R, t, _, inl = T.solve_poses(b["cld_rgb_nrm"], seg, b["kp_targ_ofst"], b["ctr_targ_ofst"],
                                     torch.from_numpy(self.ds.model_kps))
        add, _ = T.pose_errors(R, t, b["gt_R"], b["gt_t"], self.pts)
        self.assertLess(float(add.max()), 1e-4)
        self.assertTrue(bool((inl > 0).all()))


def _argv(out, *extra):
    return ["--out", out, "--dataset", "test_train:StandInDataset", "--device", "cpu", "--points",
            str(N_TEST), "--batch-size", "2", "--n-val", "2", "--val-batch", "2", "--log-every", "1",
            "--warmup", "2", "--steps", "4", "--val-every", "2", "--ckpt-every", "100",
            "--pose-max-iter", "20"] + list(extra)


@unittest.skipUnless(HAVE_LIB, "libpvn3d_ops not available (build it: see exporter/README.md)")
class Training(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pvn3d_train_test.")
        torch.set_num_threads(2)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        ops.set_backend("reference")

    def test_resume_is_exact_and_outputs(self):
        a = os.path.join(self.tmp, "a")
        b = os.path.join(self.tmp, "b")
        ta = T.main(_argv(a, "--stop-after", "3", "--val-every", "100"))
        self.assertEqual(ta.step, 3)
        T.main(_argv(b, "--stop-after", "2", "--val-every", "100"))
        tb = T.main(_argv(b, "--resume", "auto", "--stop-after", "1"))
        self.assertEqual(tb.step, 3)
        la = {r["step"]: r for r in T.read_jsonl(os.path.join(a, "log.jsonl"))}
        lb = {r["step"]: r for r in T.read_jsonl(os.path.join(b, "log.jsonl"))}
        self.assertEqual(sorted(lb), [1, 2, 3])
        for s in (3,):  # the step after the resume
            for k in ("loss", "seg", "kp", "ctr", "lr"):
                self.assertEqual(la[s][k], lb[s][k], (s, k))
        sa, sb = ta.model.state_dict(), tb.model.state_dict()
        for k in sa:
            self.assertTrue(torch.equal(sa[k], sb[k]), k)
        self.assertEqual(ta.seen, tb.seen)

    def test_command_line_run(self):
        out = os.path.join(self.tmp, "run")
        tr = T.main(_argv(out, "--stop-after", "2"))
        self.assertEqual(tr.step, 2)
        tr = T.main(_argv(out, "--resume", "auto"))  # to --steps 4, validating at 2 and 4
        self.assertEqual(tr.step, 4)
        for name in ("log.jsonl", "val.jsonl", "curves.png", "last.pt", "best.pt", "state_dict.pt",
                     "state_dict.json", "config.json"):
            path = os.path.join(out, name)
            if name == "curves.png" and importlib.util.find_spec("matplotlib") is None:
                self.fail("curves.png needs matplotlib: apt-get install python3-matplotlib (CI installs it)")
            self.assertTrue(os.path.isfile(path) and os.path.getsize(path) > 0, name)
        val = T.read_jsonl(os.path.join(out, "val.jsonl"))
        self.assertEqual([r["step"] for r in val], [2, 4])
        for r in val:
            self.assertTrue(0.0 <= r["seg_acc"] <= 1.0 and 0.0 <= r["add_acc"] <= 1.0)
            self.assertTrue(r["bn_finite"])
        logs = T.read_jsonl(os.path.join(out, "log.jsonl"))
        self.assertEqual([r["step"] for r in logs], list(range(1, 5)))
        self.assertTrue(all(r["samples_per_s"] > 0 for r in logs))
        with open(os.path.join(out, "state_dict.json")) as f:
            mc = json.load(f)
        self.assertEqual(mc["format"], T.MODEL_CONFIG_FORMAT)
        self.assertEqual((mc["width"], mc["trunk_dilation"], mc["points"]), ("tiny", [2, 4], N_TEST))
        # the plain state dict loads by name into the network export_pvn3d.py builds
        net = M.PVN3D(mc["width"], n_classes=mc["n_classes"], dilations=tuple(mc["trunk_dilation"]),
                      npoints=mc["npoints"])
        rep = M.load_checkpoint(net, os.path.join(out, "state_dict.pt"))
        self.assertEqual(rep["missing"], [])
        self.assertEqual(rep["unexpected"] + rep["mismatched"], [])
        self.assertEqual(rep["loaded"], len(net.state_dict()))
        # as do the training checkpoints (model under "model"), which carry their model config
        rep = M.load_checkpoint(M.PVN3D("tiny"), os.path.join(out, "best.pt"))
        self.assertEqual(rep["missing"], [])
        import export_pvn3d as E
        got = E.resolve_model_config(E.parse_args(["--checkpoint", os.path.join(out, "best.pt")]))
        self.assertEqual((got["width"], got["trunk_dilation"], got["points"]), ("tiny", (2, 4), N_TEST))
        self.assertEqual(len(mc["model_kps"]), 9)
        # a changed model option is refused on resume
        with self.assertRaises(SystemExit):
            T.main(_argv(out, "--resume", "auto", "--width", "small"))

    def test_a_run_without_matplotlib_goes_on_without_curves(self):
        import contextlib
        import io
        from unittest import mock
        out = os.path.join(self.tmp, "nomatplotlib")
        err = io.StringIO()
        # None in sys.modules makes `import matplotlib` raise ImportError, as on a machine without it
        with contextlib.ExitStack() as stack:
            stack.enter_context(mock.patch.dict(sys.modules, {"matplotlib": None}))
            stack.enter_context(mock.patch.object(T.plot_curves, "warned", False, create=True))
            stack.enter_context(contextlib.redirect_stderr(err))
            tr = T.main(_argv(out, "--stop-after", "2"))  # validates at step 2 and stops: two plot_curves calls
        self.assertEqual(tr.step, 2)
        self.assertFalse(os.path.exists(os.path.join(out, "curves.png")))
        for name in ("log.jsonl", "val.jsonl", "last.pt", "state_dict.pt"):
            self.assertTrue(os.path.getsize(os.path.join(out, name)) > 0, name)
        self.assertEqual(err.getvalue().count("no matplotlib"), 1, err.getvalue())  # one warning a process

    def test_time_limit_stops_and_saves(self):
        out = os.path.join(self.tmp, "tl")
        tr = T.main(_argv(out, "--time-limit", "1", "--steps", "1000"))
        self.assertEqual(tr.stop_reason, "time limit")
        ck = T.torch_load(os.path.join(out, "last.pt"))
        self.assertEqual(ck["step"], tr.step)


class ExportConfig(unittest.TestCase):
    def test_export_refuses_bad_arguments_and_a_checkpoint_that_does_not_fit(self):
        import export_pvn3d as E
        import contextlib
        import io
        for bad in (["--dataset-sample", "test"], ["--dataset-sample", "foo:0"], ["--npoints", "256,128"],
                    ["--n-classes", "0"], ["--points", "0"]):
            with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
                E.parse_args(bad)
            self.assertEqual(e.exception.code, 2, bad)
        from pvn3d_export.bunny import bunny_json
        bj, bunny_tmp = bunny_json(None, required=False)  # $PVN3D_BUNNY_JSON in CI
        if bj is None:
            self.skipTest("no bunny.json (npm) for the export's sample")
        tmp = tempfile.mkdtemp(prefix="pvn3d_export_bad.")
        try:
            nokeys = os.path.join(tmp, "nokeys.pt")
            torch.save({"foo.weight": torch.zeros(3)}, nokeys)  # loads nothing: it exited 0 with initial weights
            out = os.path.join(tmp, "out")
            with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
                E.main(["--checkpoint", nokeys, "--no-verify", "--out-dir", out, "--bunny-json", bj])
            self.assertIn("does not fit this tiny network (0 tensors loaded", str(e.exception.code))
            self.assertEqual([f for f in os.listdir(out) if f.endswith(".onnx")], [])
            with self.assertRaises(SystemExit) as e:
                E.main(["--checkpoint", os.path.join(tmp, "missing.pt"), "--out-dir", out])
            self.assertIn("no such file", str(e.exception.code))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if bunny_tmp:
                shutil.rmtree(bunny_tmp, ignore_errors=True)

    def test_export_reads_model_config(self):
        import export_pvn3d as E
        tmp = tempfile.mkdtemp(prefix="pvn3d_export_cfg.")
        try:
            ck = os.path.join(tmp, "state_dict.pt")
            mc = T.model_config(dict(T.DEFAULTS, width="small", trunk_dilation="2,4", points=2048))
            T.write_json_atomic(mc, os.path.join(tmp, "state_dict.json"))
            args = E.parse_args(["--checkpoint", ck])
            got = E.resolve_model_config(args)
            self.assertEqual((got["width"], got["trunk_dilation"], got["points"]),
                             ("small", (2, 4), 2048))
            args = E.parse_args(["--checkpoint", ck, "--trunk-dilation", "1,1", "--points", "1024"])
            got = E.resolve_model_config(args)
            self.assertEqual((got["trunk_dilation"], got["points"]), ((1, 1), 1024))
            args = E.parse_args(["--checkpoint", os.path.join(tmp, "other.pt")])  # no JSON: as before
            got = E.resolve_model_config(args)
            self.assertEqual((got["width"], got["trunk_dilation"]), ("tiny", (1, 1)))
            got = E.resolve_model_config(E.parse_args([]))
            self.assertEqual((got["width"], got["trunk_dilation"], got["points"]), ("tiny", (2, 4), 1024))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
