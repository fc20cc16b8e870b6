#!/usr/bin/env -S /usr/bin/python3
"""Checks the ctypes binding to libpvn3d_ops (pvn3d_export.native_ops): every operator against the
reference operators of pvn3d_export.ops (indices identical, floats within 1e-5), the argument and
index errors, the backward of GatherPoints / GroupPoints / ThreeInterpolate against autograd through
the reference (torch.gather), the ops.use_backend switch (same network outputs, export unchanged),
and on a GPU: CUDA == CPU, deferred / sync index errors, and launches on torch's current stream.

Needs the library (build/libpvn3d_ops.so, or $PVN3D_OPS_PATH); the CUDA cases are skipped, with the
reason, when torch has no GPU or the library was built without CUDA.

Run:  cd exporter && /usr/bin/python3 -m unittest -v test_native_ops
"""
import io
import os
import sys
import time
import unittest
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvn3d_export import native_ops as nat  # noqa: E402
from pvn3d_export import ops  # noqa: E402

SIZES = ((2, 300), (2, 777))  # (B, N): two sizes, batch 2
TOL = 1e-5


def _cloud(g, B, N, scale=0.5):
    xyz = (torch.rand(B, N, 3, generator=g) - 0.5) * scale
    xyz[:, :, 2] += 0.6  # away from the origin: FPS padding never applies
    return xyz


def _inputs(seed, B, N):
    """Inputs of every operator at one size, made as the network makes them."""
    g = torch.Generator().manual_seed(seed)
    xyz = _cloud(g, B, N)
    M = N // 4
    C = 7
    feats = torch.randn(B, C, N, generator=g)
    fps = ops.furthest_point_sample_ref(xyz, M)
    centres = torch.stack([xyz[b, fps[b]] for b in range(B)])
    ball = ops.ball_query_ref(xyz, centres, 0.08, 16)
    dist2, nn_idx = ops.three_nn_ref(xyz, centres)
    recip = 1.0 / (torch.sqrt(dist2) + 1e-8)
    weight = recip / recip.sum(2, keepdim=True)
    return dict(xyz=xyz, M=M, C=C, feats=feats, fps=fps, centres=centres, ball=ball, dist2=dist2,
                nn_idx=nn_idx, weight=weight, known_feats=torch.randn(B, C, M, generator=g))


def _have_lib():
    try:
        nat.library()
        return True, ""
    except nat.LibraryNotFound as e:
        return False, str(e)


HAVE_LIB, LIB_MSG = _have_lib()
HAVE_GPU = torch.cuda.is_available()
CUDA_SKIP = ("no CUDA device in torch" if not HAVE_GPU else
             "libpvn3d_ops was built without CUDA" if HAVE_LIB and not nat.built_with_cuda() else "")


@unittest.skipUnless(HAVE_LIB, "libpvn3d_ops not available: " + LIB_MSG)
class CpuOps(unittest.TestCase):
    def assertClose(self, a, b, tol=TOL):
        self.assertEqual(tuple(a.shape), tuple(b.shape))
        diff = (a.double() - b.double()).abs()
        scale = b.double().abs().clamp_min(1.0)
        self.assertLessEqual(float((diff / scale).max()) if diff.numel() else 0.0, tol)

    def test_against_reference(self):
        for seed, (B, N) in enumerate(SIZES):
            with self.subTest(B=B, N=N):
                d = _inputs(seed, B, N)
                idx = nat.furthest_point_sample(d["xyz"], d["M"])
                self.assertEqual(idx.dtype, torch.int64)
                self.assertTrue(torch.equal(idx, d["fps"]))
                out = nat.gather_points(d["feats"], d["fps"])
                self.assertClose(out, ops.gather_points_ref(d["feats"], d["fps"]))
                ball = nat.ball_query(d["xyz"], d["centres"], 0.08, 16)
                self.assertTrue(torch.equal(ball, d["ball"]))
                self.assertGreater(int((ball != ball[..., :1]).sum()), 0)  # partial fills exist
                out = nat.group_points(d["feats"], d["ball"])
                self.assertClose(out, ops.group_points_ref(d["feats"], d["ball"]))
                dist2, nn_idx = nat.three_nn(d["xyz"], d["centres"])
                self.assertTrue(torch.equal(nn_idx, d["nn_idx"]))
                self.assertClose(dist2, d["dist2"])
                out = nat.three_interpolate(d["known_feats"], d["nn_idx"], d["weight"])
                self.assertClose(out, ops.three_interpolate_ref(d["known_feats"], d["nn_idx"],
                                                                d["weight"]))

    def test_padding_and_ties(self):
        xyz = torch.zeros(1, 6, 3)
        xyz[0, 1] = torch.tensor([0.5, 0.0, 0.0])
        xyz[0, 3] = torch.tensor([0.0, 0.5, 0.0])
        xyz[0, 4] = torch.tensor([0.0, 0.5, 0.0])  # duplicate of 3
        idx = nat.furthest_point_sample(xyz, 5)
        self.assertTrue(torch.equal(idx, ops.furthest_point_sample_ref(xyz, 5)))
        d2, i = nat.three_nn(torch.zeros(1, 1, 3), xyz)
        self.assertTrue(torch.equal(i, ops.three_nn_ref(torch.zeros(1, 1, 3), xyz)[1]))

    def test_pose_ops_against_reference(self):
        from pvn3d_export.pvn3d import pose
        g = torch.Generator().manual_seed(5)
        B, K, N = 2, 9, 120
        centre = torch.tensor([0.02, -0.01, 0.5])
        model_kps = torch.randn(K, 3, generator=g) * 0.05
        model_kps[-1] = 0
        votes = (centre + model_kps).view(1, K, 1, 3) + 0.004 * torch.randn(B, K, N, 3, generator=g)
        mask = torch.rand(B, N, generator=g) > 0.3
        R, t, kps, inl = nat.pose_solve(votes, mask, model_kps)
        Rr, tr, kpsr, inlr = pose.pose_solve_ref(votes, mask, model_kps)
        self.assertTrue(torch.equal(inl, inlr))
        self.assertClose(kps, kpsr, 1e-4)
        self.assertClose(R, Rr, 1e-4)
        self.assertClose(t, tr, 1e-4)
        kps2, inl2 = nat.vote_aggregate(votes, mask.float())
        self.assertTrue(torch.equal(inl2, inl))
        self.assertClose(kps2, kps)
        R, t, kps, inl = nat.pose_solve(votes, torch.zeros(B, N, dtype=torch.bool), model_kps)
        self.assertTrue(torch.isnan(R).all() and torch.isnan(kps).all())
        self.assertEqual(inl.tolist(), [0, 0])

    def test_errors(self):
        d = _inputs(0, 2, 300)
        bad = d["fps"].clone()
        bad[1, 3] = 300
        with self.assertRaises(nat.NativeOpError) as cm:
            nat.gather_points(d["feats"], bad)
        e = cm.exception
        self.assertIsInstance(e, ops.OpError)
        self.assertEqual(e.status_name, "PVN3D_ERR_INDEX_OUT_OF_RANGE")
        self.assertIn("PVN3D_GatherPoints", str(e))
        self.assertIn("300", str(e))
        self.assertIn("outside [0, 300)", str(e))
        badb = d["ball"].clone()
        badb[0, 0, 0] = -1
        with self.assertRaisesRegex(nat.NativeOpError, "PVN3D_GroupPoints: input idx holds index -1"):
            nat.group_points(d["feats"], badb)
        badn = d["nn_idx"].clone()
        badn[0, 5, 2] = d["M"]
        with self.assertRaisesRegex(nat.NativeOpError, "PVN3D_ThreeInterpolate.*outside"):
            nat.three_interpolate(d["known_feats"], badn, d["weight"])
        with self.assertRaisesRegex(nat.NativeOpError, "npoint"):
            nat.furthest_point_sample(d["xyz"], 301)
        with self.assertRaisesRegex(nat.NativeOpError, "radius"):
            nat.ball_query(d["xyz"], d["centres"], 0.0, 4)
        with self.assertRaisesRegex(nat.NativeOpError, "m"):
            nat.three_nn(d["xyz"], d["centres"][:, :2].contiguous())
        # Python-side checks: dtype, shape, contiguity, device, batch
        with self.assertRaisesRegex(ops.OpError, "features must be float32, got float64"):
            nat.gather_points(d["feats"].double(), d["fps"])
        with self.assertRaisesRegex(ops.OpError, "idx must be int64, got int32"):
            nat.group_points(d["feats"], d["ball"].int())
        with self.assertRaisesRegex(ops.OpError, r"xyz must have shape \[\?,\?,3\], got \[2, 300, 2\]"):
            nat.furthest_point_sample(d["xyz"][..., :2].contiguous(), 4)
        with self.assertRaisesRegex(ops.OpError, "contiguous"):
            nat.gather_points(d["feats"].transpose(1, 2).transpose(1, 2)[:, :, ::2], d["fps"])
        with self.assertRaisesRegex(ops.OpError, r"idx must have shape \[2,\?\]"):
            nat.gather_points(d["feats"], d["fps"][:1])
        with self.assertRaisesRegex(ops.OpError, "weight must have shape"):
            nat.three_interpolate(d["known_feats"], d["nn_idx"], d["weight"][:, :5].contiguous())
        # the autograd layer casts floats but not indices
        with self.assertRaisesRegex(ops.OpError, "idx must be int64"):
            nat.GatherPoints.apply(d["feats"], d["fps"].int())
        out = nat.GatherPoints.apply(d["feats"].double(), d["fps"])
        self.assertEqual(out.dtype, torch.float32)

    def test_gradients(self):
        for seed, (B, N) in enumerate(SIZES):
            with self.subTest(B=B, N=N):
                d = _inputs(10 + seed, B, N)
                g = torch.Generator().manual_seed(99 + seed)
                # GatherPoints (fps indices hold no duplicates: add some so the scatter must add)
                idx = torch.cat([d["fps"], d["fps"][:, :9]], 1)
                cases = [
                    ("GatherPoints", nat.GatherPoints.apply, ops.gather_points_ref, d["feats"], idx),
                    ("GroupPoints", nat.GroupPoints.apply, ops.group_points_ref, d["feats"], d["ball"]),
                ]
                for name, fn, ref, feats, index in cases:
                    f1 = feats.clone().requires_grad_(True)
                    f2 = feats.clone().requires_grad_(True)
                    out1, out2 = fn(f1, index), ref(f2, index)
                    self.assertClose(out1.detach(), out2.detach())
                    go = torch.randn(out1.shape, generator=g)
                    (gr1,) = torch.autograd.grad(out1, f1, go)
                    (gr2,) = torch.autograd.grad(out2, f2, go)
                    self.assertClose(gr1, gr2)
                    self.assertGreater(float(gr1.abs().sum()), 0.0, name)
                # ThreeInterpolate: features and weight
                kf = d["known_feats"]
                f1, f2 = kf.clone().requires_grad_(True), kf.clone().requires_grad_(True)
                w1 = d["weight"].clone().requires_grad_(True)
                w2 = d["weight"].clone().requires_grad_(True)
                out1 = nat.ThreeInterpolate.apply(f1, d["nn_idx"], w1)
                out2 = ops.three_interpolate_ref(f2, d["nn_idx"], w2)
                self.assertClose(out1.detach(), out2.detach())
                go = torch.randn(out1.shape, generator=g)
                gf1, gw1 = torch.autograd.grad(out1, (f1, w1), go)
                gf2, gw2 = torch.autograd.grad(out2, (f2, w2), go)
                self.assertClose(gf1, gf2)
                self.assertClose(gw1, gw2)
                # features only (weight without grad, as in PVN3D)
                f3 = kf.clone().requires_grad_(True)
                (gf3,) = torch.autograd.grad(nat.ThreeInterpolate.apply(f3, d["nn_idx"], d["weight"]),
                                             f3, go)
                self.assertClose(gf3, gf2)

    def test_gradient_dtype_follows_input(self):
        d = _inputs(3, 2, 300)
        f = d["feats"].double().requires_grad_(True)
        out = nat.GroupPoints.apply(f, d["ball"])
        self.assertEqual(out.dtype, torch.float32)
        out.sum().backward()
        self.assertEqual(f.grad.dtype, torch.float64)

    def test_non_differentiable_outputs(self):
        d = _inputs(4, 2, 300)
        xyz = d["xyz"].clone().requires_grad_(True)
        idx = nat.FurthestPointSample.apply(xyz, 16)
        self.assertFalse(idx.requires_grad)
        ball = nat.BallQuery.apply(xyz, d["centres"], 0.1, 8)
        self.assertFalse(ball.requires_grad)
        dist2, nn = nat.ThreeNN.apply(xyz, d["centres"])
        self.assertFalse(dist2.requires_grad or nn.requires_grad)

    def test_backend_switch_network(self):
        from pvn3d_export.pvn3d.pointnet2_msg import Pointnet2MSG
        from pvn3d_export.pvn3d import model as M
        torch.manual_seed(0)
        net = Pointnet2MSG(M.config("tiny")["pointnet"]).eval()
        d = _inputs(6, 2, 600)
        pc = torch.cat([d["xyz"], torch.rand(2, 600, 6)], 2)
        self.assertEqual(ops.get_backend(), "reference")
        with torch.no_grad():
            ref, ref_idx = net(pc)
        with ops.use_backend("native"):
            self.assertEqual(ops.get_backend(), "native")
            with torch.no_grad():
                got, got_idx = net(pc)
            net.train()
            pc2 = pc.clone().requires_grad_(True)
            out, _ = net(pc2)
            out.square().mean().backward()
            self.assertTrue(all(p.grad is not None for p in net.parameters()))
            self.assertGreater(float(pc2.grad[..., 3:].abs().sum()), 0.0)  # through Group/Gather
        self.assertEqual(ops.get_backend(), "reference")
        self.assertTrue(torch.equal(ref_idx[0], got_idx[0]))
        for a, b in zip(ref_idx[1], got_idx[1]):
            self.assertTrue(torch.equal(a, b))
        self.assertClose(got, ref)
        with self.assertRaises(ValueError):
            ops.use_backend("cudnn")

    def test_export_unchanged_by_backend(self):
        from pvn3d_export.pointnet2 import SmallPointNet2
        torch.manual_seed(1)
        net = SmallPointNet2().eval()
        xyz = _cloud(torch.Generator().manual_seed(2), 1, 300)

        def export():
            buf = io.BytesIO()
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ops.onnx_export(net, (xyz,), buf, opset_version=17, input_names=["xyz"],
                                  output_names=["point_features"],
                                  custom_opsets={ops.DOMAIN: ops.OPSET})
            return buf.getvalue()
        ref = export()
        with ops.use_backend("native"):
            got = export()
        self.assertEqual(ref, got)
        self.assertIn(b"PVN3D_FurthestPointSample", got)


@unittest.skipUnless(HAVE_LIB, "libpvn3d_ops not available: " + LIB_MSG)
class IndexReport(unittest.TestCase):
    def test_decode_against_the_kernels_packing(self):
        # record_bad_index (cuda-ops/common/index_check_cuda.cuh), written out: unsigned minima of
        # (position << 32) | one half of the value, from {-1, -1}
        def record(words, p, v):
            m = (1 << 64) - 1
            pos, bits = min(p, 0xFFFFFFFE), v & m
            hi, lo = (pos << 32) | (bits >> 32), (pos << 32) | (bits & 0xFFFFFFFF)
            u = [w & m for w in words]
            u = [min(u[0], hi), min(u[1], lo)]
            return [x - (1 << 64) if x >= 1 << 63 else x for x in u]

        self.assertEqual(nat.decode_index_report(-1, -1), (-1, -1))
        for p in (0, 612, (1 << 31) + 5, 0xFFFFFFFD):
            for v in (0, -1, -3, 50, 1 << 40, -(1 << 35) - 7, (1 << 63) - 1, -(1 << 63)):
                self.assertEqual(nat.decode_index_report(*record([-1, -1], p, v)), (p, v))
        words = [-1, -1]
        for p, v in ((777, -3), (5000, 1 << 40), (612, 55), (613, -(1 << 63))):
            words = record(words, p, v)
        self.assertEqual(nat.decode_index_report(*words), (612, 55))


class LibraryLoading(unittest.TestCase):
    def test_candidates_and_error(self):
        import subprocess
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from pvn3d_export import native_ops as n\n"
                "try:\n    n.library()\nexcept n.LibraryNotFound as e:\n    print('ERR', e)\n"
                "else:\n    print('OK', n.library_path())\n") % os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, PVN3D_OPS_PATH="/nonexistent/dir/libpvn3d_ops.so")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             check=True).stdout
        self.assertIn("ERR libpvn3d_ops not found", out)
        self.assertIn("/nonexistent/dir/libpvn3d_ops.so", out)
        folder = os.path.dirname(nat.library_path())
        env = dict(os.environ, PVN3D_OPS_PATH=folder)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             check=True).stdout
        self.assertEqual(out.strip(), "OK " + os.path.join(folder, nat.LIB_FILE))

    def test_cuda_call_without_cuda_build(self):
        if nat.built_with_cuda() or not HAVE_GPU:
            self.skipTest("needs a GPU and a CPU-only library")
        with self.assertRaisesRegex(nat.NativeOpError, "built without CUDA"):
            nat.furthest_point_sample(torch.rand(1, 8, 3, device="cuda"), 2)


@unittest.skipIf(not HAVE_LIB or CUDA_SKIP, CUDA_SKIP or "libpvn3d_ops not available")
class CudaOps(unittest.TestCase):
    def setUp(self):
        nat.check_index_errors()
        self.prev_mode = nat.set_index_check("deferred")

    def tearDown(self):
        nat.set_index_check(self.prev_mode)
        nat.check_index_errors()

    def _both(self, fn, *args):
        cpu = fn(*args)
        gpu = fn(*[a.cuda() if torch.is_tensor(a) else a for a in args])
        return cpu, gpu

    def assertSame(self, cpu, gpu, exact):
        cpu = cpu if isinstance(cpu, tuple) else (cpu,)
        gpu = gpu if isinstance(gpu, tuple) else (gpu,)
        for c, g in zip(cpu, gpu):
            self.assertTrue(g.is_cuda)
            g = g.cpu()
            if exact or c.dtype == torch.int64:
                self.assertTrue(torch.equal(c, g))
            else:
                self.assertLessEqual(float(((c - g).abs() / c.abs().clamp_min(1.0)).max()), TOL)

    def test_cuda_equals_cpu(self):
        for seed, (B, N) in enumerate(SIZES):
            with self.subTest(B=B, N=N):
                d = _inputs(20 + seed, B, N)
                self.assertSame(*self._both(nat.furthest_point_sample, d["xyz"], d["M"]), True)
                self.assertSame(*self._both(nat.gather_points, d["feats"], d["fps"]), True)
                self.assertSame(*self._both(nat.ball_query, d["xyz"], d["centres"], 0.08, 16), True)
                self.assertSame(*self._both(nat.group_points, d["feats"], d["ball"]), True)
                self.assertSame(*self._both(nat.three_nn, d["xyz"], d["centres"]), True)
                self.assertSame(*self._both(nat.three_interpolate, d["known_feats"], d["nn_idx"],
                                            d["weight"]), True)
        # large N: FPS with a device workspace
        xyz = _cloud(torch.Generator().manual_seed(3), 2, 20000)
        self.assertSame(*self._both(nat.furthest_point_sample, xyz, 256), True)
        nat.check_index_errors()

    def test_cuda_gradients_equal_cpu(self):
        d = _inputs(30, 2, 777)
        for fn, feats, idx in ((nat.GatherPoints.apply, d["feats"], d["fps"]),
                               (nat.GroupPoints.apply, d["feats"], d["ball"])):
            grads = []
            for dev in ("cpu", "cuda"):
                f = feats.to(dev).requires_grad_(True)
                out = fn(f, idx.to(dev))
                go = torch.linspace(-1, 1, out.numel()).view(out.shape).to(dev)
                grads.append(torch.autograd.grad(out, f, go)[0].cpu())
            self.assertLessEqual(float((grads[0] - grads[1]).abs().max()), TOL)
        grads = []
        for dev in ("cpu", "cuda"):
            f = d["known_feats"].to(dev).requires_grad_(True)
            w = d["weight"].to(dev).requires_grad_(True)
            out = nat.ThreeInterpolate.apply(f, d["nn_idx"].to(dev), w)
            go = torch.linspace(-1, 1, out.numel()).view(out.shape).to(dev)
            grads.append([gr.cpu() for gr in torch.autograd.grad(out, (f, w), go)])
        for a, b in zip(*grads):
            self.assertLessEqual(float((a - b).abs().max()), TOL)

    def test_autocast_runs_in_float32(self):
        d = _inputs(31, 2, 300)
        f = d["feats"].cuda().requires_grad_(True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = torch.nn.functional.conv1d(f, torch.eye(7, device="cuda").unsqueeze(-1))
            self.assertEqual(h.dtype, torch.bfloat16)
            out = nat.GroupPoints.apply(h, d["ball"].cuda())
        self.assertEqual(out.dtype, torch.float32)
        out.sum().backward()
        self.assertEqual(f.grad.dtype, torch.float32)

    def test_index_errors_deferred_and_sync(self):
        d = _inputs(32, 2, 300)
        feats, bad = d["feats"].cuda(), d["fps"].clone()
        bad[1, 7] = 1000
        bad = bad.cuda()
        out = nat.gather_points(feats, bad)  # returns: the error is on the device
        self.assertEqual(nat.pending_index_checks(), 1)
        self.assertEqual(float(out[1, :, 7].abs().sum()), 0.0)  # a bad index reads nothing
        with self.assertRaisesRegex(nat.NativeOpError,
                                    r"PVN3D_GatherPoints: input idx holds index 1000 at flat position "
                                    r"%d, outside \[0, 300\)" % (d["M"] + 7)):
            nat.check_index_errors()
        self.assertEqual(nat.pending_index_checks(), 0)
        nat.check_index_errors()  # emptied
        nat.set_index_check("sync")
        with self.assertRaisesRegex(nat.NativeOpError, "PVN3D_GroupPoints.*-5"):
            badb = d["ball"].clone()
            badb[0, 2, 3] = -5
            nat.group_points(feats, badb.cuda())
        nat.set_index_check("off")
        nat.three_interpolate(d["known_feats"].cuda(), d["nn_idx"].cuda() + 1000, d["weight"].cuda())
        self.assertEqual(nat.pending_index_checks(), 0)
        nat.set_index_check("deferred")
        for _ in range(3):
            nat.gather_points(feats, d["fps"].cuda())
        nat.check_index_errors()  # good indices: no error

    def test_pending_queue_is_bounded(self):
        d = _inputs(33, 2, 300)
        feats, idx = d["feats"].cuda(), d["fps"].cuda()
        for _ in range(nat.PENDING_LIMIT + 5):
            nat.gather_points(feats, idx)
        self.assertLess(nat.pending_index_checks(), nat.PENDING_LIMIT)

    def test_current_stream(self):
        """The op is enqueued on torch's current stream and does not synchronise: on a side stream
        that is busy (a sleep kernel, then the copy of the real input), the call returns at once,
        the default stream stays idle, and the result is that of the real input (an op on any other
        stream would have read the zeros)."""
        if not hasattr(torch.cuda, "_sleep"):
            self.skipTest("torch.cuda._sleep is missing in this torch")
        d = _inputs(34, 2, 777)
        want_idx = nat.furthest_point_sample(d["xyz"], d["M"])
        want_out = nat.gather_points(d["feats"], d["fps"])
        xyz = torch.zeros_like(d["xyz"], device="cuda")
        feats = torch.zeros_like(d["feats"], device="cuda")
        src_xyz, src_feats, fps = d["xyz"].cuda(), d["feats"].cuda(), d["fps"].cuda()
        nat.furthest_point_sample(src_xyz, d["M"])  # load the kernels (lazy module loading)
        nat.gather_points(src_feats, fps)
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        self.assertNotEqual(side.cuda_stream, torch.cuda.default_stream().cuda_stream)
        with torch.cuda.stream(side):
            torch.cuda._sleep(int(1e9))  # ~0.5 s of GPU time (~2 GHz) on this stream only
            xyz.copy_(src_xyz)
            feats.copy_(src_feats)
            t0 = time.perf_counter()
            idx = nat.furthest_point_sample(xyz, d["M"])
            out = nat.gather_points(feats, fps)
            dt = time.perf_counter() - t0
            self.assertFalse(side.query())  # still sleeping: nothing waited for it
        self.assertTrue(torch.cuda.default_stream().query())
        self.assertLess(dt, 0.25)
        side.synchronize()
        self.assertTrue(torch.equal(idx.cpu(), want_idx))
        self.assertTrue(torch.equal(out.cpu(), want_out))
        nat.check_index_errors()

    def test_pose_solve_cuda(self):
        g = torch.Generator().manual_seed(7)
        B, K, N = 3, 9, 400
        model_kps = torch.randn(K, 3, generator=g) * 0.05
        votes = (torch.tensor([0.0, 0.0, 0.5]) + model_kps).view(1, K, 1, 3) \
            + 0.004 * torch.randn(B, K, N, 3, generator=g)
        mask = torch.rand(B, N, generator=g) > 0.5
        cpu = nat.pose_solve(votes, mask, model_kps)
        gpu = nat.pose_solve(votes.cuda(), mask.cuda(), model_kps.cuda())
        self.assertTrue(torch.equal(cpu[3], gpu[3].cpu()))
        for c, gg in zip(cpu[:3], gpu[:3]):
            self.assertLessEqual(float((c - gg.cpu()).abs().max()), 1e-4)
        nat.check_index_errors()

    def test_network_cuda_equals_cpu(self):
        from pvn3d_export.pvn3d.pointnet2_msg import Pointnet2MSG
        from pvn3d_export.pvn3d import model as M
        torch.manual_seed(0)
        net = Pointnet2MSG(M.config("tiny")["pointnet"]).eval()
        d = _inputs(35, 2, 600)
        pc = torch.cat([d["xyz"], torch.rand(2, 600, 6)], 2)
        with ops.use_backend("native"), torch.no_grad():
            a, ia = net(pc)
            b, ib = net.cuda()(pc.cuda())
        self.assertTrue(torch.equal(ia[0], ib[0].cpu()))
        self.assertLessEqual(float((a - b.cpu()).abs().max()), 1e-4)
        nat.check_index_errors()


if __name__ == "__main__":
    unittest.main()
