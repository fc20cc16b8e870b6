#!/usr/bin/env -S /usr/bin/python3
"""Checks the reference ops of pvn3d_export.ops against brute-force loops written like the
original CUDA kernels (one point at a time, numpy float32 scalar arithmetic), plus the hand-made
cases of the padding, fill and tie rules, the error rules, the PVT1 container and the export.

Run:  cd exporter && /usr/bin/python3 -m unittest -v test_ops
"""
import io
import os
import sys
import unittest

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvn3d_export import ops, pvt  # noqa: E402

f32 = np.float32


def sqd(a, b):
    dx = f32(a[0]) - f32(b[0])
    dy = f32(a[1]) - f32(b[1])
    dz = f32(a[2]) - f32(b[2])
    return f32(f32(f32(dx * dx) + f32(dy * dy)) + f32(dz * dz))


def fps_brute(xyz, npoint):
    B, N, _ = xyz.shape
    out = np.zeros((B, npoint), np.int64)
    for b in range(B):
        temp = [f32(1e10)] * N
        last = 0
        for i in range(1, npoint):
            best, besti = -1.0, 0
            for k in range(N):
                x, y, z = xyz[b, k]
                mag = f32(f32(f32(x * x) + f32(y * y)) + f32(z * z))
                if float(mag) <= 1e-3:
                    continue
                d2 = min(sqd(xyz[b, k], xyz[b, last]), temp[k])
                temp[k] = d2
                if d2 > best:
                    best, besti = d2, k
            out[b, i] = besti
            last = besti
    return out


def ball_query_brute(xyz, new_xyz, radius, nsample):
    B, N, _ = xyz.shape
    M = new_xyz.shape[1]
    r2 = f32(f32(radius) * f32(radius))
    out = np.zeros((B, M, nsample), np.int64)
    for b in range(B):
        for j in range(M):
            cnt = 0
            for k in range(N):
                if sqd(xyz[b, k], new_xyz[b, j]) < r2:
                    if cnt == 0:
                        out[b, j, :] = k
                    out[b, j, cnt] = k
                    cnt += 1
                    if cnt >= nsample:
                        break
    return out


def three_nn_brute(unknown, known):
    B, n, _ = unknown.shape
    m = known.shape[1]
    dist = np.zeros((B, n, 3), np.float32)
    idx = np.zeros((B, n, 3), np.int64)
    for b in range(B):
        for j in range(n):
            b1 = b2 = b3 = 1e40
            i1 = i2 = i3 = 0
            for k in range(m):
                d = float(sqd(unknown[b, j], known[b, k]))
                if d < b1:
                    b3, i3 = b2, i2
                    b2, i2 = b1, i1
                    b1, i1 = d, k
                elif d < b2:
                    b3, i3 = b2, i2
                    b2, i2 = d, k
                elif d < b3:
                    b3, i3 = d, k
            dist[b, j] = (b1, b2, b3)
            idx[b, j] = (i1, i2, i3)
    return dist, idx


def three_interp_brute(features, idx, weight):
    B, C, m = features.shape
    n = idx.shape[1]
    out = np.zeros((B, C, n), np.float32)
    for b in range(B):
        for c in range(C):
            for j in range(n):
                i0, i1, i2 = idx[b, j]
                w0, w1, w2 = weight[b, j]
                t = f32(features[b, c, i0] * w0)
                t = f32(t + f32(features[b, c, i1] * w1))
                t = f32(t + f32(features[b, c, i2] * w2))
                out[b, c, j] = t
    return out


def T(a):
    return torch.from_numpy(np.ascontiguousarray(a))


class FurthestPointSampleTest(unittest.TestCase):
    def test_random_vs_brute(self):
        rng = np.random.RandomState(1)
        for N, npoint in [(1, 1), (7, 7), (50, 16), (120, 40)]:
            xyz = rng.uniform(0, 0.5, (2, N, 3)).astype(np.float32)
            if N > 10:
                xyz[0, 3] = 0  # padding
                xyz[1, [0, 5, 9]] = 0.01  # norm2 3e-4: padding too
            got = ops.furthest_point_sample_ref(T(xyz), npoint).numpy()
            np.testing.assert_array_equal(got, fps_brute(xyz, npoint))

    def test_ties_padding_and_exhaustion(self):
        pts = np.array([[0.5, 0, 0], [-0.5, 0, 0], [0, 0.5, 0], [0, -0.5, 0], [0, 0, 0],
                        [0.5, 0, 0]], np.float32)[None]
        got = ops.furthest_point_sample_ref(T(pts), 6).numpy()
        # 1 is furthest; 2 and 3 tie (lowest wins); then everything is at distance 0 ->
        # lowest candidate (0); padding (4) is never picked
        np.testing.assert_array_equal(got, [[0, 1, 2, 3, 0, 0]])
        np.testing.assert_array_equal(got, fps_brute(pts, 6))

    def test_all_padding_gives_zeros(self):
        pts = np.zeros((2, 5, 3), np.float32)
        pts[1, 2] = [0.01, 0.01, 0.01]
        got = ops.furthest_point_sample_ref(T(pts), 4).numpy()
        np.testing.assert_array_equal(got, np.zeros((2, 4)))

    def test_first_point_padding(self):
        pts = np.array([[[0, 0, 0], [0.125, 0, 0], [0.375, 0, 0], [0.25, 0, 0]]], np.float32)
        got = ops.furthest_point_sample_ref(T(pts), 3).numpy()
        np.testing.assert_array_equal(got, [[0, 2, 1]])
        np.testing.assert_array_equal(got, fps_brute(pts, 3))

    def test_padding_threshold_inclusive(self):
        # squared norm exactly 1e-3 as float32 sum of 1e-3 + 0 + 0... use x with x*x <= 1e-3
        x = np.float32(np.sqrt(1e-3))
        while float(np.float32(x * x)) > 1e-3:
            x = np.nextafter(x, np.float32(0))
        pts = np.array([[[0.3, 0, 0], [x, 0, 0], [0.25, 0, 0]]], np.float32)
        got = ops.furthest_point_sample_ref(T(pts), 3).numpy()
        # point 1 is padding, never picked; after 0 and 2 everything is at 0 -> lowest candidate 0
        np.testing.assert_array_equal(got, [[0, 2, 0]])
        np.testing.assert_array_equal(got, fps_brute(pts, 3))

    def test_errors(self):
        with self.assertRaisesRegex(ops.OpError, "FurthestPointSample.*npoint=5 > N=4"):
            ops.furthest_point_sample_ref(torch.ones(1, 4, 3), 5)


class BallQueryTest(unittest.TestCase):
    def test_random_vs_brute(self):
        rng = np.random.RandomState(2)
        for N, M, r, ns in [(60, 10, 0.1, 4), (200, 30, 0.2, 8), (5, 3, 1.0, 8), (40, 40, 0.05, 1)]:
            xyz = rng.uniform(0, 0.5, (2, N, 3)).astype(np.float32)
            new = rng.uniform(-0.2, 0.7, (2, M, 3)).astype(np.float32)
            got = ops.ball_query_ref(T(xyz), T(new), r, ns).numpy()
            np.testing.assert_array_equal(got, ball_query_brute(xyz, new, r, ns))

    def test_fill_rule_and_no_hit(self):
        xyz = np.full((1, 10, 3), 5.0, np.float32)
        xyz[0, 3] = [0.1, 0, 0]
        xyz[0, 7] = [0, 0.1, 0]
        xyz[0, 8] = [0.5, 0, 0]  # exactly on the radius: not a hit (strict <)
        new = np.array([[[0, 0, 0], [-3, -3, -3]]], np.float32)
        got = ops.ball_query_ref(T(xyz), T(new), 0.5, 4).numpy()
        np.testing.assert_array_equal(got, [[[3, 7, 3, 3], [0, 0, 0, 0]]])

    def test_overflow_keeps_first_nsample(self):
        xyz = np.zeros((1, 6, 3), np.float32)
        new = np.zeros((1, 1, 3), np.float32)
        got = ops.ball_query_ref(T(xyz), T(new), 0.1, 3).numpy()
        np.testing.assert_array_equal(got, [[[0, 1, 2]]])


class GatherGroupTest(unittest.TestCase):
    def test_gather_group(self):
        rng = np.random.RandomState(3)
        f = rng.standard_normal((2, 4, 9)).astype(np.float32)
        idx = rng.randint(0, 9, (2, 5)).astype(np.int64)
        got = ops.gather_points_ref(T(f), T(idx)).numpy()
        for b in range(2):
            for c in range(4):
                for m in range(5):
                    self.assertEqual(got[b, c, m], f[b, c, idx[b, m]])
        gidx = rng.randint(0, 9, (2, 5, 3)).astype(np.int64)
        got = ops.group_points_ref(T(f), T(gidx)).numpy()
        self.assertEqual(got.shape, (2, 4, 5, 3))
        for b in range(2):
            for c in range(4):
                for m in range(5):
                    for s in range(3):
                        self.assertEqual(got[b, c, m, s], f[b, c, gidx[b, m, s]])

    def test_errors(self):
        f = torch.zeros(1, 2, 4)
        with self.assertRaisesRegex(ops.OpError, "GatherPoints.*index 4 outside"):
            ops.gather_points_ref(f, torch.tensor([[0, 4]]))
        with self.assertRaisesRegex(ops.OpError, "GroupPoints.*index -1 outside"):
            ops.group_points_ref(f, torch.tensor([[[0, -1]]]))


class ThreeNNTest(unittest.TestCase):
    def test_random_vs_brute(self):
        rng = np.random.RandomState(4)
        for n, m in [(10, 3), (50, 20), (100, 64)]:
            u = rng.uniform(0, 0.5, (2, n, 3)).astype(np.float32)
            k = rng.uniform(0, 0.5, (2, m, 3)).astype(np.float32)
            k[:, -1] = k[:, 0]  # duplicate point: tie
            d, i = ops.three_nn_ref(T(u), T(k))
            bd, bi = three_nn_brute(u, k)
            np.testing.assert_array_equal(i.numpy(), bi)
            np.testing.assert_array_equal(d.numpy(), bd)

    def test_ties_earlier_index(self):
        k = np.array([[[0, 0, 2], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0.5]]],
                     np.float32)
        u = np.zeros((1, 1, 3), np.float32)
        d, i = ops.three_nn_ref(T(u), T(k))
        np.testing.assert_array_equal(i.numpy(), [[[5, 1, 2]]])
        np.testing.assert_array_equal(d.numpy(), [[[0.25, 1, 1]]])

    def test_error(self):
        with self.assertRaisesRegex(ops.OpError, "ThreeNN.*m=2"):
            ops.three_nn_ref(torch.zeros(1, 4, 3), torch.zeros(1, 2, 3))


class ThreeInterpolateTest(unittest.TestCase):
    def test_random_vs_brute(self):
        rng = np.random.RandomState(5)
        f = rng.standard_normal((2, 6, 11)).astype(np.float32)
        idx = rng.randint(0, 11, (2, 17, 3)).astype(np.int64)
        w = rng.uniform(0, 1, (2, 17, 3)).astype(np.float32)
        got = ops.three_interpolate_ref(T(f), T(idx), T(w)).numpy()
        np.testing.assert_array_equal(got, three_interp_brute(f, idx, w))

    def test_error(self):
        with self.assertRaisesRegex(ops.OpError, "ThreeInterpolate.*index 3 outside"):
            ops.three_interpolate_ref(torch.zeros(1, 2, 3), torch.tensor([[[0, 1, 3]]]),
                                      torch.zeros(1, 1, 3))


class RunReferenceAndContainerTest(unittest.TestCase):
    def test_run_reference(self):
        xyz = np.random.RandomState(6).uniform(0, 0.5, (1, 30, 3)).astype(np.float32)
        out = ops.run_reference("PVN3D_FurthestPointSample", [xyz], {"npoint": 5})
        np.testing.assert_array_equal(out["idx"], fps_brute(xyz, 5))
        out = ops.run_reference("ball_query", {"xyz": xyz, "new_xyz": xyz[:, :4]},
                                {"radius": 0.2, "nsample": 3})
        np.testing.assert_array_equal(out["idx"], ball_query_brute(xyz, xyz[:, :4], 0.2, 3))

    def test_pvt_roundtrip(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.array([[-1, 2**40]], np.int64)
        c = np.zeros((0, 3), np.float32)
        data = pvt.dumps([("a", a), ("idx", b), ("empty", c)])
        self.assertEqual(data[:4], b"PVT1")
        back = pvt.loads(data)
        self.assertEqual(list(back), ["a", "idx", "empty"])
        np.testing.assert_array_equal(back["a"], a)
        np.testing.assert_array_equal(back["idx"], b)
        self.assertEqual(back["empty"].shape, (0, 3))
        # header of the first tensor, by hand
        self.assertEqual(data[4:8], (3).to_bytes(4, "little"))
        self.assertEqual(data[8:12], (1).to_bytes(4, "little"))
        self.assertEqual(data[12:13], b"a")
        self.assertEqual(data[13:21], (1).to_bytes(4, "little") + (2).to_bytes(4, "little"))


class ExportTest(unittest.TestCase):
    def test_symbolics(self):
        import onnx

        class M(torch.nn.Module):
            def forward(self, xyz):
                feats = xyz.transpose(1, 2).contiguous()
                i = ops.furthest_point_sample(xyz, 8)
                c = ops.gather_points(feats, i)
                g = ops.group_points(feats, ops.ball_query(xyz, c.transpose(1, 2), 0.2, 4))
                d, j = ops.three_nn(xyz, c.transpose(1, 2).contiguous())
                return g, ops.three_interpolate(c, j, d)

        buf = io.BytesIO()
        ops.onnx_export(M(), (torch.rand(2, 32, 3),), buf, opset_version=17,
                          input_names=["xyz"], output_names=["g", "f"],
                          dynamic_axes={"xyz": {0: "B", 1: "N"}},
                          custom_opsets={ops.DOMAIN: 1})
        model = onnx.load_from_string(buf.getvalue())
        types = {n.op_type: n for n in model.graph.node if n.domain == ops.DOMAIN}
        self.assertEqual(set(types), {"PVN3D_" + n for n in ops.OP_NAMES})
        attrs = {a.name: onnx.helper.get_attribute_value(a)
                 for a in types["PVN3D_BallQuery"].attribute}
        self.assertEqual(attrs["nsample"], 4)
        self.assertAlmostEqual(attrs["radius"], 0.2, places=6)
        self.assertEqual(len(types["PVN3D_ThreeNN"].output), 2)
        opsets = {o.domain: o.version for o in model.opset_import}
        self.assertEqual(opsets.get(ops.DOMAIN), 1)


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CommittedFixturesTest(unittest.TestCase):
    """The committed files agree with each other and with the reference (no onnxruntime)."""

    def test_default_model_reproduces_expected(self):
        import onnx
        from pvn3d_export import npeval
        res = os.path.join(REPO, "pvn3d-pipeline", "src")
        path = os.path.join(res, "main", "resources", "models", "pointnet2_default.onnx")
        model = onnx.load(path)
        xyz = pvt.load(os.path.join(res, "main", "resources", "models", "bunny_sample.bin"))["xyz"]
        exp = pvt.load(os.path.join(res, "test", "resources", "models",
                                    "pointnet2_default_expected.bin"))
        env = npeval.run(model, {"xyz": xyz})
        np.testing.assert_allclose(env["point_features"], exp["point_features"], atol=1e-4)
        sa1 = [n for n in model.graph.node if n.op_type == "PVN3D_FurthestPointSample"][0]
        np.testing.assert_array_equal(env[sa1.output[0]], exp["sa1_idx"])
        np.testing.assert_array_equal(exp["sa1_idx"], fps_brute(xyz, 256))

    def test_op_fixtures_match_brute_force(self):
        d = os.path.join(REPO, "pvn3d-ops", "src", "test", "resources", "ops")
        for case in (1, 2):
            t = pvt.load(os.path.join(d, "furthest_point_sample_case%d.bin" % case))
            np.testing.assert_array_equal(t["idx"], fps_brute(t["xyz"], 64))
            t = pvt.load(os.path.join(d, "ball_query_case%d.bin" % case))
            np.testing.assert_array_equal(t["idx"], ball_query_brute(t["xyz"], t["new_xyz"],
                                                                     0.2, 8))
            t = pvt.load(os.path.join(d, "three_nn_case%d.bin" % case))
            dist, idx = three_nn_brute(t["unknown"], t["known"])
            np.testing.assert_array_equal(t["idx"], idx)
            np.testing.assert_array_equal(t["dist2"], dist)


if __name__ == "__main__":
    unittest.main()
