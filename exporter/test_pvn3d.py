"""Tests of the PVN3D exporter: the committed tiny model against its fixture through the
numpy evaluator, a fresh export with another batch size and point count, the resampling matrices,
the checkpoint loader, the pose reference and the fixture's geometry.

    cd exporter && /usr/bin/python3 -m unittest -v test_pvn3d      (~1-2 min: one tiny export)

Needs no network and no npm: everything starts from the committed fixture.
"""
import io
import os
import sys
import tempfile
import unittest
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_pvn3d  # noqa: E402
from pvn3d_export import ops, pvt  # noqa: E402
from pvn3d_export.pvn3d import decoder, model as M, npeval_ext, pointwise, pose, pspnet, resnet  # noqa: E402

FIX = os.path.join(os.path.dirname(HERE), "pvn3d-pipeline", "src", "main", "resources", "pvn3d")
CHECKPOINT = os.path.join(HERE, "checkpoints", "pvn3d_tiny_bunny.pt")
ONNX = os.path.join(FIX, "pvn3d_tiny.onnx")
SAMPLE = os.path.join(FIX, "pvn3d_tiny_sample.bin")
EXPECTED = os.path.join(FIX, "pvn3d_tiny_expected.bin")
FLOAT_TOL = 2e-4  # numpy (float64 accumulation, folded BatchNorm) vs PyTorch float32
INPUTS = export_pvn3d.INPUT_NAMES
OUTPUTS = M.OUTPUT_NAMES + M.INDEX_OUTPUT_NAMES


def compare(tc, got, want, names, tol=FLOAT_TOL):
    for name in names:
        g, w = got[name], want[name]
        tc.assertEqual(g.shape, w.shape, name)
        if w.dtype == np.int64:
            tc.assertEqual(int((g != w).sum()), 0, "%s: index mismatches" % name)
        else:
            err = float(np.abs(g.astype(np.float64) - w).max())
            tc.assertLess(err, tol, "%s: max abs diff %g" % (name, err))


def evaluate_at_b2_n500(tc, m, net, s, seed):
    """The exported graph m (numpy evaluator) against PyTorch's net at B = 2, N = 500: two different
    random subsets of the sample's points."""
    rng = np.random.RandomState(seed)
    sel = [rng.choice(s["cld_rgb_nrm"].shape[1], 500, replace=False) for _ in range(2)]
    feeds = {"rgb": np.concatenate([s["rgb"]] * 2, 0),
             "cld_rgb_nrm": np.stack([s["cld_rgb_nrm"][0, i] for i in sel]),
             "choose": np.stack([s["choose"][0][:, i] for i in sel])}
    got = npeval_ext.run(m, feeds, keep_all=False)
    with torch.no_grad():
        want = net(*[torch.from_numpy(feeds[k]) for k in INPUTS])
    compare(tc, got, dict(zip(OUTPUTS, (w.numpy() for w in want))), OUTPUTS)


class CommittedFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = onnx.load(ONNX)
        cls.sample = pvt.load(SAMPLE)
        cls.expected = pvt.load(EXPECTED)

    def test_graph(self):
        onnx.checker.check_model(self.m)
        onnx.shape_inference.infer_shapes(self.m)
        inv = export_pvn3d.inventory(self.m)
        for name in ops.OP_NAMES:
            self.assertGreater(inv["%s::PVN3D_%s" % (ops.DOMAIN, name)], 0, name)
        self.assertNotIn("BatchNormalization", inv)
        self.assertEqual(inv.get("MaxPool", 0), 1)  # the ResNet stem only
        self.assertEqual([i.name for i in self.m.graph.input], INPUTS)
        self.assertEqual([o.name for o in self.m.graph.output], OUTPUTS)
        self.assertEqual({(o.domain, o.version) for o in self.m.opset_import},
                         {("", 17), (ops.DOMAIN, 1)})
        self.assertLessEqual(self.m.ir_version, 8)
        dims = [[d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim]
                for o in self.m.graph.output]
        self.assertEqual(dims[:3], [["B", "N", 2], ["B", 8, "N", 3], ["B", 1, "N", 3]])

    def test_numpy_evaluation_matches_pytorch(self):
        got = npeval_ext.run(self.m, {k: self.sample[k] for k in INPUTS}, keep_all=False)
        compare(self, got, self.expected, OUTPUTS)

    def test_expected_pose_is_the_reference_on_the_outputs(self):
        e, s = self.expected, self.sample
        votes, mask = pose.votes_and_mask(
            torch.from_numpy(s["cld_rgb_nrm"]), torch.from_numpy(e["pred_rgbd_seg"]),
            torch.from_numpy(e["pred_kp_of"]), torch.from_numpy(e["pred_ctr_of"]))
        R, t, kps, inl = pose.pose_solve_ref(votes, mask, torch.from_numpy(s["model_kps"]))
        self.assertEqual(int(inl[0]), int(e["pose_inliers"][0]))
        np.testing.assert_allclose(kps.numpy(), e["pose_kps"], atol=1e-6)
        np.testing.assert_allclose(R.numpy(), e["pose_R"], atol=1e-5)
        np.testing.assert_allclose(t.numpy(), e["pose_t"], atol=1e-6)

    def test_sample_geometry(self):
        s = self.sample
        B, N, C = s["cld_rgb_nrm"].shape
        self.assertEqual((B, C), (1, 9))
        self.assertEqual(s["choose"].shape, (1, 1, N))
        H, W = s["rgb"].shape[2:]
        K = s["cam_K"].astype(np.float64)
        xyz = s["cld_rgb_nrm"][0, :, :3].astype(np.float64)
        uvw = xyz @ K.T
        u, v = uvw[:, 0] / uvw[:, 2], uvw[:, 1] / uvw[:, 2]
        ch = s["choose"][0, 0]
        # each point is its pixel's back-projection (plus 1 mm depth noise along the ray)
        self.assertLess(np.abs(u - ch % W).max(), 0.05)
        self.assertLess(np.abs(v - ch // W).max(), 0.05)
        self.assertGreater((xyz ** 2).sum(1).min(), 1e-3 * 100)  # far from FPS padding
        n = s["cld_rgb_nrm"][0, :, 6:]
        np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1, atol=1e-5)
        self.assertTrue(((n * xyz).sum(1) <= 1e-6).all())  # normals face the camera
        R, t = s["gt_R"].astype(np.float64), s["gt_t"].astype(np.float64)
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-6)
        self.assertAlmostEqual(np.linalg.det(R), 1.0, places=5)
        # object points lie on the posed model surface (within noise), near its vertices
        obj = xyz[s["labels"][0] == 1]
        self.assertGreater(len(obj), N // 10)
        mp = s["model_points"].astype(np.float64) @ R.T + t
        d = np.sqrt(((obj[:, None] - mp[None]) ** 2).sum(-1)).min(1)
        self.assertLess(np.median(d), 0.01)
        kps = s["model_kps"]
        self.assertEqual(kps.shape, (9, 3))
        np.testing.assert_array_equal(kps[8], 0)  # centre last, at the model origin

    def test_fixture_sizes(self):
        total = sum(os.path.getsize(p) for p in (ONNX, SAMPLE, EXPECTED))
        self.assertLess(total, 4 * 1024 * 1024)


class FreshExport(unittest.TestCase):
    """Load the committed checkpoint of the shipped model, compare its outputs on the committed
    sample with the committed ones, export it, and evaluate the graph at another batch size and N."""

    def test_rebuild_export_dynamic(self):
        s, e = pvt.load(SAMPLE), pvt.load(EXPECTED)
        inputs = tuple(torch.from_numpy(s[k]) for k in INPUTS)
        net = M.PVN3D("tiny", dilations=(2, 4)).eval()
        rep = M.load_checkpoint(net, CHECKPOINT)
        self.assertEqual((rep["missing"], rep["mismatched"]), ([], []))
        with torch.no_grad():
            outs = net(*inputs)
        # identical with the torch that wrote the fixture; another torch version rounds the
        # forward differently (torch 2.11 vs 1.13: about 1e-5)
        compare(self, dict(zip(OUTPUTS, (o.numpy() for o in outs))), e, OUTPUTS, tol=1e-4)

        class A:
            width_name = "tiny"
            trunk_as_batches = True  # the graph runs layer3/layer4 as sub-image batches; PyTorch keeps them dilated
        A.net = net
        m, _ = export_pvn3d.export(net, inputs, A, OUTPUTS, {})
        # layer3/layer4 went out as sub-image batches (8x8 after the stem: dilations 2 and 4 divide it)
        dil = [a.ints for n in m.graph.node if n.op_type == "Conv" for a in n.attribute if a.name == "dilations"]
        self.assertTrue(dil and all(set(d) == {1} for d in dil), dil)
        perms = [list(a.ints) for n in m.graph.node if n.op_type == "Transpose" for a in n.attribute]
        self.assertEqual(sum(len(p) == 6 for p in perms), 4, perms)  # two splits, two merges
        evaluate_at_b2_n500(self, m, net, s, seed=5)


class AtrousAsBatch(unittest.TestCase):
    """resnet.py's sub-image batches: the same trunk output as the dilated layers, in PyTorch."""

    def test_space_to_batch_round_trip(self):
        x = torch.arange(2 * 3 * 8 * 12, dtype=torch.float32).reshape(2, 3, 8, 12)
        y = resnet.space_to_batch(x, 4)
        self.assertEqual(tuple(y.shape), (32, 3, 2, 3))
        torch.testing.assert_close(y[1 * 16 + 2 * 4 + 3], x[1, :, 2::4, 3::4], rtol=0, atol=0)
        torch.testing.assert_close(resnet.batch_to_space(y, 4), x, rtol=0, atol=0)

    def test_trunk_matches_dilated(self):
        torch.manual_seed(3)
        for widths, dil, hw in (((8, 16, 32, 64), (2, 4), (64, 96)), ((8, 16, 32, 64), (2, 2), (48, 80)),
                                ((16, 32, 64, 128), (1, 4), (64, 64)), ((8, 16, 32, 64), (1, 1), (64, 64))):
            trunk = resnet.ResNetTrunk(widths, (3, 4, 6, 3), dil)
            for m in trunk.modules():  # non-trivial BatchNorm statistics
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
                    m.weight.data.uniform_(0.75, 1.25)
            trunk.eval()
            x = torch.randn(2, 3, *hw)
            with torch.no_grad():
                want = trunk(x)
                trunk.atrous_as_batch = True
                got = trunk(x)
                trunk.atrous_as_batch = False
            self.assertTrue(resnet.atrous_batch_ok(hw[0] // 8, hw[1] // 8, dil))
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg="dilations %s" % (dil,))

    def test_falls_back_when_the_dilation_does_not_divide(self):
        self.assertFalse(resnet.atrous_batch_ok(60, 78, (2, 4)))  # 78 % 4
        self.assertFalse(resnet.atrous_batch_ok(60, 80, (4, 2)))  # 2 is not a multiple of 4
        self.assertTrue(resnet.atrous_batch_ok(60, 80, (2, 4)))   # 480x640
        trunk = resnet.ResNetTrunk((8, 16, 32, 64), (1, 1, 1, 1), (2, 4)).eval()
        x = torch.randn(1, 3, 48, 8 * 6)  # 6 x 6 after the stem: 4 does not divide it
        with torch.no_grad():
            want = trunk(x)
            trunk.atrous_as_batch = True
            got = trunk(x)
        torch.testing.assert_close(got, want, rtol=0, atol=0)


class PointwiseAsMatMul(unittest.TestCase):
    """pointwise.py: the per-point 1x1 convolutions as MatMul + Add (+ Relu), BatchNorm folded in."""

    def test_folded_layers_match_the_convolutions(self):
        torch.manual_seed(7)
        net = M.PVN3D("tiny", dilations=(2, 4))
        for m in net.modules():  # non-trivial BatchNorm statistics
            if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.data.uniform_(0.75, 1.25)
                m.bias.data.uniform_(-0.1, 0.1)
        net.eval()
        blocks, fusion = pointwise._layers(net)
        self.assertEqual(pointwise.count_convs(net), len(blocks) + 4)
        dims = {type(b.conv) for b in blocks}
        self.assertEqual(dims, {torch.nn.Conv1d, torch.nn.Conv2d})  # SA levels are 2-D, FP and heads 1-D
        for b in blocks[:3] + blocks[-3:]:
            x = torch.randn(2, b.conv.in_channels, 40)
            with torch.no_grad():
                want = b(x if isinstance(b.conv, torch.nn.Conv1d) else x.unsqueeze(-1))
                if isinstance(b.conv, torch.nn.Conv2d):
                    want = want.squeeze(-1)
                w, bias = pointwise.fold(b.conv, b.normlayer.bn if hasattr(b, "normlayer") else None)
                b.folded = (w, bias)
                got = b(x)
                b.folded = None
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        with self.assertRaises(ValueError):
            pointwise.fold(torch.nn.Conv1d(4, 4, 3))
        # the whole network: the same outputs with every per-point layer as a product, restored after
        inputs = (torch.rand(2, 3, 64, 96), torch.rand(2, 300, 9), torch.randint(0, 64 * 96, (2, 1, 300)))
        with torch.no_grad():
            want = net(*inputs)
            with pointwise.as_matmul(net):
                self.assertTrue(all(b.folded is not None for b in blocks) and fusion.folded is not None)
                got = net(*inputs)
            net.cnn_at_points = "final"  # and the CNN's final layer after picking the points
            got_late = net(*inputs)
            net.cnn_at_points = "none"
        self.assertTrue(all(b.folded is None for b in blocks) and fusion.folded is None)
        for g, g_late, w in zip(got, got_late, want):
            if w.dtype == torch.int64:
                self.assertTrue(torch.equal(g, w) and torch.equal(g_late, w))
            else:
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)
                torch.testing.assert_close(g_late, w, rtol=1e-4, atol=1e-4)

    def test_export_has_no_per_point_conv(self):
        """--pointwise matmul and --cnn-at-points final together: the graph against PyTorch's convolutions."""
        s = pvt.load(SAMPLE)
        inputs = tuple(torch.from_numpy(s[k]) for k in INPUTS)
        net = M.PVN3D("tiny", dilations=(2, 4)).eval()
        M.load_checkpoint(net, CHECKPOINT)

        class A:
            width_name = "tiny"
            pointwise = "matmul"
            cnn_at_points = "final"
        A.net = net
        m, _ = export_pvn3d.export(net, inputs, A, OUTPUTS, {})
        self.assertEqual(net.cnn_at_points, "none")  # restored after the export
        convs = [n.name for n in m.graph.node if n.op_type == "Conv"]
        self.assertTrue(convs and all(c.startswith("/cnn/") for c in convs), convs)
        self.assertFalse([c for c in convs if "final" in c], convs)  # the final layer left the CNN ...
        matmuls = [n.name for n in m.graph.node if n.op_type == "MatMul" and not n.name.startswith("/cnn/")]
        self.assertEqual(len(matmuls), pointwise.count_convs(net) + 1)  # ... as one more product
        # constant shapes: no Shape node feeds the products' reshapes
        self.assertFalse([n.name for n in m.graph.node if n.op_type == "Shape" and "/SA_modules" in n.name])
        evaluate_at_b2_n500(self, m, net, s, seed=9)


def _nontrivial_batchnorm(net):
    for m in net.modules():
        if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.75, 1.25)
            m.bias.data.uniform_(-0.1, 0.1)
    return net.eval()


class DecoderRewrites(unittest.TestCase):
    """decoder.py: a x2 stage's convolution before its upsampling, and the last stage at the chosen pixels."""

    def setUp(self):
        torch.manual_seed(11)
        self.net = _nontrivial_batchnorm(M.PVN3D("tiny", dilations=(2, 4)))
        self.psp = self.net.cnn.model
        for st in (self.psp.up_1, self.psp.up_2, self.psp.up_3):  # a slope that matters on negative inputs
            st.conv[3].weight.data.fill_(0.3)

    def test_conv_before_upsample_is_the_stage(self):
        with torch.no_grad():
            for st in (self.psp.up_1, self.psp.up_2, self.psp.up_3):
                for h, w in ((6, 10), (7, 5), (1, 3), (2, 1)):  # odd, and one-pixel maps (align_corners edge)
                    x = torch.randn(2, st.conv[1].in_channels, h, w)
                    want = st(x)
                    got = decoder.conv_before_upsample(st, x)
                    self.assertEqual(got.shape, want.shape)
                    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)

    def test_shifted_upsampling_is_the_padded_rows(self):
        m = decoder.shifted_upsampling(5).numpy()
        u = pspnet.bilinear_matrix(10, 5, align_corners=True).numpy()
        np.testing.assert_array_equal(m[1], u)
        np.testing.assert_array_equal(m[0][1:], u[:-1])
        np.testing.assert_array_equal(m[2][:-1], u[1:])
        self.assertFalse(m[0][0].any() or m[2][-1].any())  # the padding row

    def test_last_stage_at_points_is_the_map_at_those_pixels(self):
        x = torch.randn(2, self.psp.up_3.conv[1].in_channels, 12, 16)
        hh, ww = 24, 32
        choose = torch.randint(0, hh * ww, (2, 1, 300))
        corners = torch.tensor([0, ww - 1, (hh - 1) * ww, hh * ww - 1, ww, 2 * ww - 1])  # every border
        choose[0, 0, :6] = corners
        choose[1, 0, -6:] = corners
        with torch.no_grad():
            full = self.psp.final(self.psp.up_3(x)).flatten(2)
            want = torch.gather(full, 2, choose.repeat(1, int(full.shape[1]), 1))
            got = decoder.last_stage_at_points(self.psp.up_3, self.psp.final[0], x, choose)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)

    def test_every_combination_is_the_network(self):
        inputs = (torch.rand(2, 3, 64, 96), torch.rand(2, 300, 9), torch.randint(0, 64 * 96, (2, 1, 300)))
        with torch.no_grad():
            want = self.net(*inputs)
            for at in M.PVN3D.CNN_AT_POINTS:
                for first in ((), (1,), (1, 2, 3)):
                    self.net.cnn_at_points, self.psp.conv_first = at, first
                    got = self.net(*inputs)
                    for g, w in zip(got, want):
                        if w.dtype == torch.int64:
                            self.assertTrue(torch.equal(g, w))
                        else:
                            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4, msg="%s %s" % (at, first))
            self.net.cnn_at_points, self.psp.conv_first = "none", ()

    def test_bad_choices_are_refused(self):
        self.net.cnn_at_points = "up_2"
        with self.assertRaises(ValueError):
            self.net(torch.rand(1, 3, 64, 96), torch.rand(1, 300, 9), torch.randint(0, 64 * 96, (1, 1, 300)))
        self.net.cnn_at_points = "none"
        for bad in ("4", "0,1"):
            with self.assertRaises(ValueError):
                export_pvn3d.conv_first_stages(bad)
        self.assertEqual(export_pvn3d.conv_first_stages("2,1,1"), (1, 2))
        self.assertEqual(export_pvn3d.conv_first_stages("none"), ())
        plain = torch.nn.Sequential(torch.nn.Upsample(scale_factor=2, mode="nearest"), torch.nn.Conv2d(4, 4, 3, padding=1),
                                    torch.nn.BatchNorm2d(4), torch.nn.PReLU())
        with self.assertRaises(ValueError):
            decoder.conv_before_upsample(type("S", (), {"conv": plain})(), torch.rand(1, 4, 3, 3))

    def test_export_of_both_rewrites(self):
        """--conv-before-upsample 1 and --cnn-at-points up_3: the graph (numpy evaluator) against PyTorch's modules."""
        s = pvt.load(SAMPLE)
        inputs = tuple(torch.from_numpy(s[k]) for k in INPUTS)
        net = M.PVN3D("tiny", dilations=(2, 4)).eval()
        M.load_checkpoint(net, CHECKPOINT)

        class A:
            width_name = "tiny"
            pointwise = "matmul"
            cnn_at_points = "up_3"
            conv_before_upsample = "1"
        A.net = net
        m, _ = export_pvn3d.export(net, inputs, A, OUTPUTS, {})
        self.assertEqual((net.cnn_at_points, net.cnn.model.conv_first), ("none", ()))  # restored
        convs = [n.name for n in m.graph.node if n.op_type == "Conv"]
        for gone in ("up_1", "up_3", "final"):  # up_1 as products, up_3 and final at the points
            self.assertFalse([c for c in convs if gone in c], convs)
        self.assertTrue([c for c in convs if "up_2" in c], convs)
        key = "%s::PVN3D_GroupPoints" % ops.DOMAIN  # one more: the neighbourhoods of the chosen pixels
        self.assertEqual(export_pvn3d.inventory(m)[key], export_pvn3d.inventory(onnx.load(ONNX))[key] + 1)
        evaluate_at_b2_n500(self, m, net, s, seed=13)


class Resampling(unittest.TestCase):
    def test_adaptive_pool_and_bilinear_match_torch(self):
        torch.manual_seed(0)
        for h, w in ((8, 8), (60, 80), (7, 13)):
            x = torch.randn(2, 3, h, w)
            for s in (1, 2, 3, 6):
                got = pspnet.AdaptiveAvgPoolMM(s)(x)
                np.testing.assert_allclose(got, F.adaptive_avg_pool2d(x, s), atol=1e-5)
                y = torch.randn(2, 3, s, s)
                want = F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)
                np.testing.assert_allclose(pspnet.upsample_mm(y, h, w), want, atol=1e-5)


class Checkpoint(unittest.TestCase):
    def test_pvn3d_layout_loads(self):
        torch.manual_seed(1)
        src = M.PVN3D("tiny").eval()
        with torch.no_grad():
            for p in src.parameters():
                p.add_(torch.randn_like(p) * 0.01)
        sd = {}
        for k, v in src.state_dict().items():
            if ".FP_modules." in k and k.endswith("conv.weight"):
                v = v.unsqueeze(-1)  # PVN3D's FP convs are Conv2d
            sd["module." + k] = v
        sd["module.cnn.model.final_seg.0.weight"] = torch.zeros(22, 16, 1, 1)
        sd["module.something.else"] = torch.zeros(1)
        del sd["module.SEG_layer.3.conv.bias"]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ck.pth.tar")
            torch.save({"epoch": 1, "model_state": sd}, path)
            dst = M.PVN3D("tiny").eval()
            rep = M.load_checkpoint(dst, path)
        self.assertEqual(rep["missing"], ["SEG_layer.3.conv.bias"])
        self.assertEqual(rep["unexpected"], ["module.something.else"])
        self.assertEqual(rep["unused"], ["module.cnn.model.final_seg.0.weight"])
        self.assertEqual(rep["mismatched"], [])
        for k, v in src.state_dict().items():
            if k != "SEG_layer.3.conv.bias":
                self.assertTrue(torch.equal(dst.state_dict()[k], v), k)


class PoseReference(unittest.TestCase):
    def setUp(self):
        rng = np.random.RandomState(3)
        self.rng = rng
        self.model_kps = rng.uniform(-0.08, 0.08, (9, 3)).astype(np.float32)
        self.model_kps[8] = 0
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q
        self.R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                           [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                           [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        self.t = np.array([0.05, -0.02, 0.6])

    def votes(self, B, N, noise, outliers):
        kc = self.model_kps @ self.R.T + self.t
        v = kc[None, :, None, :] + self.rng.normal(0, noise, (B, 9, N, 3))
        v[:, :, :outliers] += self.rng.uniform(-0.3, 0.3, (B, 9, outliers, 3))
        return torch.tensor(v, dtype=torch.float32)

    def test_recovers_pose(self):
        votes = self.votes(2, 300, 0.004, 40)
        mask = torch.ones(2, 300, dtype=torch.bool)
        mask[1, 150:] = False
        R, t, kps, inl = pose.pose_solve_ref(votes, mask, torch.from_numpy(self.model_kps))
        for b in range(2):
            self.assertLess(np.abs(R[b].numpy() - self.R).max(), 0.02)
            self.assertLess(np.abs(t[b].numpy() - self.t).max(), 0.003)
            self.assertAlmostEqual(float(np.linalg.det(R[b].numpy())), 1.0, places=5)
        self.assertLessEqual(int(inl[1]), 150)
        self.assertGreater(int(inl[0]), 200)

    def test_empty_mask_and_errors(self):
        votes = self.votes(1, 50, 0.004, 0)
        R, t, kps, inl = pose.pose_solve_ref(votes, torch.zeros(1, 50), torch.from_numpy(self.model_kps))
        self.assertTrue(torch.isnan(kps).all() and torch.isnan(R).all() and torch.isnan(t).all())
        self.assertEqual(int(inl[0]), 0)
        with self.assertRaises(ops.OpError):
            pose.kabsch_ref(torch.zeros(2, 3), torch.zeros(1, 2, 3))
        with self.assertRaises(ops.OpError):
            pose.kabsch_ref(torch.zeros(4, 3), torch.zeros(1, 5, 3))

    def test_symbolic_emits_pose_solve(self):
        class Tiny(torch.nn.Module):
            def forward(self, votes, mask):
                return pose.pose_solve(votes, mask, torch.zeros(9, 3), 0.05, 10, 1)
        buf = io.BytesIO()
        v = self.votes(1, 20, 0.004, 0)
        kw = dict(opset_version=17, custom_opsets={ops.DOMAIN: 1},
                  input_names=["votes", "mask"], output_names=["R", "t", "kps", "inliers"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ops.onnx_export(Tiny(), (v, torch.ones(1, 20, dtype=torch.bool)), buf, **kw)
        m = onnx.load_from_string(buf.getvalue())
        node = [n for n in m.graph.node if n.domain == ops.DOMAIN]
        self.assertEqual([n.op_type for n in node], ["PVN3D_PoseSolve"])
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node[0].attribute}
        self.assertEqual(attrs["max_iter"], 10)
        self.assertEqual(attrs["center_filter"], 1)
        self.assertAlmostEqual(attrs["bandwidth"], 0.05, places=6)


if __name__ == "__main__":
    unittest.main()
