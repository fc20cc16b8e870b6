"""Tests of the synthetic bunny-scene generator (pvn3d_export/dataset) and make_dataset.py.

    cd exporter && /usr/bin/python3 -m unittest -v test_dataset      (~20-40 s on 2 CPU cores)

Needs the bunny: $PVN3D_BUNNY_JSON (a bunny.json from fetch_bunny.sh) or npm for fetch_bunny.sh
(the tests are skipped when neither works).
"""
import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_dataset  # noqa: E402
from pvn3d_export import pvt  # noqa: E402
from pvn3d_export.bunny import bunny_json as fetch_bunny  # noqa: E402
from pvn3d_export.dataset import (IMAGENET_MEAN, IMAGENET_STD, SPLITS, BunnyDataset, camera,  # noqa: E402
                                  hashrng, preview, raster, render, sampling, sensor, shapes, writer)
from pvn3d_export.dataset.core import seed_of  # noqa: E402
from pvn3d_export.pvn3d import scene  # noqa: E402

N_SCENES = 64  # test-split samples shared by most tests
_TMP = []


def bunny_json():
    path, tmp = fetch_bunny(required=False)
    if tmp:
        _TMP.append(tmp)
    return path


def tearDownModule():
    for t in _TMP:
        shutil.rmtree(t, ignore_errors=True)


class DatasetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bunny = bunny_json()
        if cls.bunny is None:
            raise unittest.SkipTest("no bunny: set PVN3D_BUNNY_JSON or install npm")
        cls.ds = BunnyDataset(cls.bunny, device="cpu")
        cls.b = cls.ds.batch("test", range(N_SCENES), extras=True)
        cls.ex = cls.b["extras"]

    # ---- the contract
    def test_entries_shapes_dtypes(self):
        B, H, W, N = N_SCENES, 64, 64, 1024
        want = dict(rgb=((B, 3, H, W), torch.float32), cld_rgb_nrm=((B, N, 9), torch.float32),
                    choose=((B, 1, N), torch.int64), labels=((B, N), torch.int64),
                    kp_targ_ofst=((B, 8, N, 3), torch.float32), ctr_targ_ofst=((B, 1, N, 3), torch.float32),
                    gt_R=((B, 3, 3), torch.float32), gt_t=((B, 3), torch.float32),
                    cam_K=((B, 3, 3), torch.float32), occlusion=((B,), torch.float32),
                    image=((B, H, W, 3), torch.uint8))
        for k, (shape, dt) in want.items():
            self.assertEqual(tuple(self.b[k].shape), shape, k)
            self.assertEqual(self.b[k].dtype, dt, k)
            self.assertEqual(self.b[k].device.type, "cpu", k)
        self.assertEqual(tuple(self.ds.model_kps.shape), (9, 3))
        self.assertEqual(tuple(self.ds.model_points.shape), (1839, 3))
        self.assertAlmostEqual(self.ds.model_diameter, 0.1895, places=3)
        np.testing.assert_array_equal(self.ds.model_kps[8].numpy(), 0.0)
        self.assertTrue(torch.isfinite(self.b["cld_rgb_nrm"]).all())
        c = self.b["choose"]
        self.assertTrue(bool((c >= 0).all()) and bool((c < H * W).all()))
        # N distinct pixels per sample (more than N valid pixels everywhere here)
        for b in range(B):
            self.assertEqual(len(set(c[b, 0].tolist())), N)

    def test_rgb_is_the_normalised_uint8_image(self):
        img = self.b["image"].numpy()
        x = img.astype(np.float32) / np.float32(255.0)
        want = ((x - IMAGENET_MEAN) / IMAGENET_STD).transpose(0, 3, 1, 2)
        np.testing.assert_array_equal(self.b["rgb"].numpy(), want)
        ch = self.b["choose"][:, 0].numpy()
        got = self.b["cld_rgb_nrm"][..., 3:6].numpy()
        for b in range(3):
            np.testing.assert_array_equal(got[b], x[b].reshape(-1, 3)[ch[b]])

    def test_cam_K_and_crop_contains_the_object(self):
        K = self.b["cam_K"].numpy().astype(np.float64)
        R, t = self.b["gt_R"].numpy().astype(np.float64), self.b["gt_t"].numpy().astype(np.float64)
        v = self.ds.model.vertices
        for b in range(N_SCENES):
            self.assertEqual(K[b, 2, 2], 1.0)
            self.assertAlmostEqual(K[b, 0, 1], 0.0)
            pc = v @ R[b].T + t[b]
            uv = pc[:, :2] / pc[:, 2:] * np.diag(K[b])[:2] + K[b, :2, 2]
            lk = camera.LINEMOD_K
            uvf = pc[:, :2] / pc[:, 2:] * np.diag(lk)[:2] + lk[:2, 2]
            in_frame = ((uvf >= -0.5) & (uvf < [639.5, 479.5])).all(1)
            in_crop = ((uv >= -0.5) & (uv < 63.5)).all(1)
            self.assertGreater(in_frame.mean(), 0.5, b)  # most of the object is in the camera's view
            self.assertGreater(in_crop[in_frame].mean(), 0.98, b)  # and what is in view is in the crop
            z = t[b, 2]
            self.assertTrue(0.35 <= z <= 0.9, z)
            # the object spans 1/1.6 .. 1/1.2 of the crop (jitter aside), within a few pixels
            span = (uv[in_frame].max(0) - uv[in_frame].min(0)).max()
            self.assertTrue(64 / 1.6 - 2 <= span <= 64 / 1.2 + 2, (b, span))
        self.assertGreater(int(self.ex["alone"].sum(1).min()), 100)

    def test_rotations_are_proper_and_spread(self):
        R = self.b["gt_R"].numpy().astype(np.float64)
        np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.tile(np.eye(3), (N_SCENES, 1, 1)), atol=1e-6)
        np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-6)
        # uniform rotations: the model's axes point everywhere (mean direction near 0)
        self.assertLess(np.linalg.norm(R[:, :, 1].mean(0)), 0.35)

    # ---- determinism and splits
    def test_deterministic_and_independent_of_the_batch(self):
        ds2 = BunnyDataset(self.bunny, device="cpu", chunk=5)
        again = ds2.batch("test", [13, 2, 40])
        for k in again:
            self.assertTrue(torch.equal(again[k], self.b[k][[13, 2, 40]]), k)

    def test_splits_are_disjoint_seed_ranges(self):
        ranges = sorted(SPLITS.values())
        for (a0, a1), (b0, _) in zip(ranges, ranges[1:]):
            self.assertLessEqual(a1, b0)
        self.assertEqual(SPLITS["train"], (0, 10 ** 9))
        self.assertEqual(SPLITS["val"], (10 ** 9, 10 ** 9 + 10 ** 6))
        self.assertEqual(SPLITS["test"], (2 * 10 ** 9, 2 * 10 ** 9 + 10 ** 6))
        self.assertEqual(seed_of("val", 5), 10 ** 9 + 5)
        with self.assertRaises(IndexError):
            seed_of("val", 10 ** 6)
        with self.assertRaises(IndexError):
            seed_of("test", -1)
        tr, va = self.ds.batch("train", [0, 1]), self.ds.batch("val", [0, 1])
        self.assertFalse(torch.equal(tr["gt_R"], va["gt_R"]))
        self.assertFalse(torch.equal(tr["image"], self.b["image"][:2]))

    def test_hash_rng_matches_the_integer_reference(self):
        x = torch.tensor([0, 1, 2, 12345, 2 ** 31 - 1, -1, -2 ** 31, 0x1234567], dtype=torch.int32)
        got = (hashrng.hash32(x).to(torch.int64) & 0xFFFFFFFF).tolist()
        self.assertEqual(got, [hashrng.hash32_int(int(v) & 0xFFFFFFFF) for v in x.tolist()])
        idx = torch.arange(20000, dtype=torch.int32)[None]
        u = hashrng.uniform(hashrng.stream_keys([5, 6], 1, "cpu"), idx)
        self.assertTrue(bool((u >= 0).all()) and bool((u < 1).all()))
        self.assertAlmostEqual(float(u.mean()), 0.5, delta=0.01)
        n = hashrng.normal(hashrng.stream_keys([5], 2, "cpu"), idx)
        self.assertAlmostEqual(float(n.mean()), 0.0, delta=0.03)
        self.assertAlmostEqual(float(n.std()), 1.0, delta=0.03)

    # ---- labels and geometry
    def test_labels_follow_the_rendered_ids(self):
        ch = self.b["choose"][:, 0]
        ids = torch.gather(self.ex["ids"], 1, ch)
        self.assertTrue(torch.equal(self.b["labels"], (ids == 0).to(torch.int64)))
        n_obj = self.b["labels"].sum(1)
        self.assertGreater(int(n_obj.min()), 20)
        self.assertGreater(float(n_obj.float().mean()), 120)

    def test_offsets_point_to_the_keypoints(self):
        R, t = self.b["gt_R"].double(), self.b["gt_t"].double()
        kps = self.ds.model_kps.double()
        kc = torch.einsum("bij,kj->bki", R, kps) + t[:, None]  # [B,9,3]
        xyz = self.b["cld_rgb_nrm"][..., :3].double()
        m = self.b["labels"] == 1
        votes = xyz[:, None] - self.b["kp_targ_ofst"].double()  # [B,8,N,3]
        err = (votes - kc[:, :8, None]).abs().amax(-1)
        self.assertLess(float(err.permute(0, 2, 1)[m].max()), 1e-5)
        cv = xyz - self.b["ctr_targ_ofst"][:, 0].double()
        self.assertLess(float((cv - kc[:, 8:9]).abs().amax(-1)[m].max()), 1e-5)
        np.testing.assert_allclose(kc[:, 8].numpy(), t.numpy(), atol=1e-7)
        # PVN3D's convention: no target on the other points
        self.assertEqual(float(self.b["kp_targ_ofst"].permute(0, 2, 1, 3)[~m].abs().max()), 0.0)
        self.assertEqual(float(self.b["ctr_targ_ofst"][:, 0][~m].abs().max()), 0.0)

    def test_bunny_points_lie_on_the_posed_mesh(self):
        v, f = self.ds.model.vertices, self.ds.model.faces
        rs = np.random.RandomState(0)
        a, b_, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
        area = np.linalg.norm(np.cross(b_ - a, c - a), axis=1)
        tri = rs.choice(len(f), 60000, p=area / area.sum())
        r1, r2 = np.sqrt(rs.rand(60000, 1)), rs.rand(60000, 1)
        surf = (1 - r1) * a[tri] + r1 * (1 - r2) * b_[tri] + r1 * r2 * c[tri]  # 0.3 mm spacing or so
        sig = self.ex["params"]["sensor_sigma0"]
        for b in range(0, N_SCENES, 8):
            m = self.b["labels"][b].numpy() == 1
            p = self.b["cld_rgb_nrm"][b, m, :3].numpy().astype(np.float64)
            R = self.b["gt_R"][b].numpy().astype(np.float64)
            t = self.b["gt_t"][b].numpy().astype(np.float64)
            q = (p - t) @ R  # model frame
            d = np.sqrt(((q[:, None, :] - surf[None, ::3]) ** 2).sum(-1)).min(1)
            sigma = sig[b] * (2 * p[:, 2]) ** 2 * 2  # the noise model's sigma at grazing angles
            bound = sigma * 3.5 * 1.1 + 0.0015  # |noise| <= 3.46 sigma, mm steps, sample spacing
            self.assertLess(np.median(d), np.median(sigma) + 0.001, b)
            self.assertGreater((d <= bound).mean(), 0.97, b)

    def test_normals_are_unit_and_face_the_camera(self):
        n = self.b["cld_rgb_nrm"][..., 6:9].double()
        xyz = self.b["cld_rgb_nrm"][..., :3].double()
        np.testing.assert_allclose(n.norm(dim=-1).numpy(), 1.0, atol=1e-5)
        self.assertLessEqual(float((n * xyz).sum(-1).max()), 1e-6)

    # ---- occlusion
    def test_occlusion_is_measured_and_distributed(self):
        occ = self.b["occlusion"].numpy()
        target = self.ex["params"]["occ_target"]
        # independent measurement: the bunny rasterised alone vs the labelled pixels
        R, t, K = self.b["gt_R"], self.b["gt_t"], self.b["cam_K"]
        vc = torch.einsum("bij,vj->bvi", R, self.ds.model_points) + t[:, None]
        K4 = torch.stack([K[:, 0, 0], K[:, 1, 1], K[:, 0, 2], K[:, 1, 2]], 1)
        alone = raster.rasterize(vc, self.ds.model_t["faces"], K4, 64, 64)["hit"]
        alone &= camera.in_frame(K4, 64, 64)
        vis = (self.ex["ids"] == 0)
        self.assertFalse(bool((vis & ~alone).any()))
        meas = 1 - vis.sum(1).double() / alone.sum(1).double()
        np.testing.assert_allclose(meas.numpy(), occ, atol=2e-3)
        unocc = target == 0
        self.assertTrue((occ[unocc] == 0).all())
        self.assertTrue(((occ[~unocc] >= 0.1) & (occ[~unocc] <= 0.6)).all(), occ[~unocc])
        self.assertTrue(0.1 <= unocc.mean() <= 0.55, unocc.mean())  # 30% expected
        self.assertGreater(((occ > 0.1) & (occ < 0.3)).sum(), 3)
        self.assertGreater(((occ > 0.4) & (occ <= 0.6)).sum(), 3)
        # the occluder is what hides the bunny, and it lies between the camera and the bunny
        ids = self.ex["ids"]
        occ_ids = torch.tensor([1 + s for s in sampling.OCCLUDER_SLOT.values()])
        for b in np.nonzero(~unocc)[0]:
            self.assertGreater(int(torch.isin(ids[b], occ_ids).sum()), 0)

    def test_occlusion_distribution_over_more_samples(self):
        # scene parameters only (cheap): 30% unoccluded, the targets spread over 0.12-0.58
        p = self.ds.scene_params([seed_of("train", i) for i in range(600)])
        tg = p["occ_target"]
        self.assertAlmostEqual((tg == 0).mean(), 0.3, delta=0.06)
        hist = np.histogram(tg[tg > 0], bins=5, range=(0.1, 0.6))[0]
        self.assertGreater(hist.min(), 40, hist)

    # ---- the depth sensor
    def test_depth_noise_statistics(self):
        z = self.ex["depth"]
        dn = self.ex["depth_noisy"]
        ok = self.ex["depth_valid"]
        nrm = self.ex["normal"]
        dx, dy = self.ex["dx"], self.ex["dy"]
        cos = ((nrm[..., 0] * dx + nrm[..., 1] * dy + nrm[..., 2]) / torch.sqrt(dx * dx + dy * dy + 1)).abs()
        sig0 = torch.from_numpy(self.ex["params"]["sensor_sigma0"]).float()[:, None]
        sigma = sig0 * (z / 0.5) ** 2 * (2 - cos)
        e = (dn - z)[ok].double()
        s = sigma[ok].double()
        ratio = float(((e ** 2).mean() / (s ** 2 + 1e-6 / 12).mean()).sqrt())
        self.assertAlmostEqual(ratio, 1.0, delta=0.08)
        self.assertLess(abs(float((e / s.sqrt().clamp(min=1e-9)).mean())), 0.05)
        self.assertLess(float(e.abs().max()), float(s.max()) * 3.5 + 6e-4)
        # ~1.5 mm at 0.5 m growing with z^2: near pixels are less noisy than far ones
        zz = z[ok]
        near, far = (zz > 0.4) & (zz < 0.55), (zz > 0.8) & (zz < 1.0)
        self.assertLess(float(e[near].std()) * 2, float(e[far].std()))
        self.assertTrue(0.0012 <= float(sig0.min()) and float(sig0.max()) <= 0.0018)
        # depth is on a 1 mm grid
        q = dn[ok].double() * 1000
        self.assertLess(float((q - q.round()).abs().max()), 1e-3)

    def test_missing_depth(self):
        inf = self.ex["in_frame"]
        ok = self.ex["depth_valid"]
        miss = 1 - (ok & inf).sum(1).double() / inf.sum(1).double()
        self.assertTrue(0.03 <= float(miss.mean()) <= 0.3, float(miss.mean()))
        self.assertGreater(float(miss.min()), 0.0)
        self.assertFalse(bool((ok & ~inf).any()))  # nothing outside the camera frame
        self.assertTrue(bool((self.ex["depth_noisy"][~ok] == 0).all()))
        # holes concentrate at depth discontinuities
        far, near = sensor._neighbour_diff(self.ex["depth"], inf, 64, 64)
        z = self.ex["depth"]
        zf = torch.where(torch.isfinite(z), z, torch.zeros_like(z))
        edge = (far > 0.02 + 0.03 * zf) & inf
        flat = ~edge & inf & torch.isfinite(self.ex["depth"])
        miss_edge = 1 - float(ok[edge].double().mean())
        miss_flat = 1 - float(ok[flat].double().mean())
        self.assertGreater(miss_edge, 2 * miss_flat)
        # no point without depth
        ch = self.b["choose"][:, 0]
        self.assertTrue(bool(torch.gather(ok, 1, ch).all()))
        self.assertTrue(bool((self.b["cld_rgb_nrm"][..., 2] >= 0.2).all()))

    def test_few_valid_pixels_sample_with_replacement(self):
        from pvn3d_export.dataset import labels as L
        valid = torch.zeros(2, 4096, dtype=torch.bool)
        valid[0, 100:150] = True
        valid[1, ::2] = True
        ch = L.choose_points([11, 12], valid, 1024)
        self.assertEqual(set(ch[0].tolist()), set(range(100, 150)))
        self.assertEqual(len(set(ch[1].tolist())), 1024)
        self.assertTrue(bool((ch[1] % 2 == 0).all()))

    # ---- renderer
    def test_rasteriser_matches_the_old_scene_renderer(self):
        v, tri = scene.load_bunny(self.bunny)
        nrm = scene.vertex_normals(v, tri)
        R, t = scene.gt_pose()
        vc = v @ R.T + t
        K = scene.camera(64, 64, (scene.LINEMOD_K @ t)[:2] / t[2], 4)
        depth, pts, normal, label, kind, p0, n_t = scene.render(vc, tri, nrm @ R.T, K, 64, 64, R, t,
                                                                v[:, 1].min())
        K4 = torch.tensor([[K[0, 0], K[1, 1], K[0, 2], K[1, 2]]], dtype=torch.float32)
        rs = raster.rasterize(torch.tensor(vc[None], dtype=torch.float32), torch.from_numpy(tri), K4, 64, 64)
        hit = rs["hit"][0].numpy().reshape(64, 64)
        self.assertGreater((hit == (label == 1)).mean(), 0.995)
        both = hit & (label == 1)
        zr = rs["depth"][0].numpy().reshape(64, 64)
        self.assertLess(np.abs(zr[both] - depth[both]).max(), 1e-5)
        # its table plane through the analytic plane caster
        Q = torch.zeros(1, 1, 3, 3)
        Q[0, 0, :, 2] = torch.tensor(n_t, dtype=torch.float32)
        dx, dy = camera.rays(K4, 64, 64)
        c0 = torch.tensor(p0, dtype=torch.float32)[None, None]
        zt = shapes.plane(dx, dy, c0, Q)[0].numpy().reshape(64, 64)
        tab = kind == 1
        np.testing.assert_allclose(zt[tab], depth[tab], rtol=1e-5)
        # normals of the interpolated vertex normals agree
        bw = rs["bary"][0].numpy().reshape(64, 64, 3)
        self.assertTrue(np.allclose(bw.sum(-1)[both], 1.0, atol=1e-4))

    def test_analytic_shapes(self):
        # a ray straight along z hits a sphere, a box and a cylinder at their front
        dx, dy = torch.zeros(1, 1), torch.zeros(1, 1)
        c = torch.tensor([[[0.0, 0.0, 1.0]]])
        Q = torch.eye(3)[None, None]
        size = torch.tensor([[[0.1, 0.2, 0.3]]])
        self.assertAlmostEqual(float(shapes.sphere(dx, dy, c, size)), 0.9, places=6)
        self.assertAlmostEqual(float(shapes.box(dx, dy, c, Q, size)), 0.7, places=6)
        self.assertAlmostEqual(float(shapes.cylinder(dx, dy, c, Q, size)), 0.7, places=6)  # cap
        Qx = torch.tensor([[[[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]]])  # axis along y: the side
        self.assertAlmostEqual(float(shapes.cylinder(dx, dy, c, Qx, size)), 0.9, places=6)
        miss = torch.full((1, 1), 0.5)
        self.assertEqual(float(shapes.sphere(miss, dy, c, size)), float("inf"))

    def test_scene_contents(self):
        ids = self.ex["ids"]
        def seen(slots):
            return float(torch.isin(ids, torch.tensor([1 + k for k in slots])).any(1).double().mean())

        self.assertGreater(seen([sampling.TABLE]), 0.5)
        self.assertGreater(seen([sampling.WALL]), 0.05)
        self.assertGreater(seen(sampling.DISTRACTOR_SLOTS), 0.1)
        p = self.ex["params"]
        self.assertEqual(set(p["tex"][:, :2].ravel().tolist()), {0, 1, 2, 3})
        self.assertGreater(len(np.unique(p["light_ambient"])), N_SCENES - 1)

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA")
    def test_cuda_matches_cpu(self):
        gpu = BunnyDataset(self.bunny, device="cuda").batch("test", range(16))
        cpu = {k: v[:16] for k, v in self.b.items() if k != "extras"}
        g = {k: v.cpu() for k, v in gpu.items()}
        for k in ("gt_R", "gt_t", "cam_K"):
            self.assertTrue(torch.equal(g[k], cpu[k]), k)
        self.assertLess(float((g["occlusion"] - cpu["occlusion"]).abs().max()), 0.01)
        same_img = (g["image"] == cpu["image"]).all(-1).double().mean()
        self.assertGreater(float(same_img), 0.99)
        same_pts = (g["choose"] == cpu["choose"]).double().mean()
        self.assertGreater(float(same_pts), 0.9)
        m = g["choose"][:, 0] == cpu["choose"][:, 0]
        d = (g["cld_rgb_nrm"] - cpu["cld_rgb_nrm"]).abs().amax(-1)[m]
        self.assertLess(float(d.quantile(0.99)), 1e-5)
        print("\nCUDA vs CPU: image pixels identical %.4f, points identical %.4f, cloud max diff %.3g, "
              "bit-identical batch: %s" % (float(same_img), float(same_pts), float(d.max()),
                                           all(torch.equal(g[k], cpu[k]) for k in cpu)))

    # ---- writer, CLI, preview
    def test_bad_counts_are_refused_before_anything_is_written(self):
        # a negative --batch wrote an index of 3 samples and none of them (exit 0); a start past the split left
        # a folder holding only model.bin
        out = tempfile.mkdtemp(prefix="ds.")
        self.addCleanup(shutil.rmtree, out, True)
        for bad in (["--count", "3", "--batch", "-1"], ["--count", "-5"], ["--count", "3", "--start", "-1"],
                    ["--count", "3", "--start", "999999"], ["--points", "0"]):
            target = os.path.join(out, "x")
            with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
                make_dataset.main(["--bunny-json", self.bunny, "--out", target] + bad)
            self.assertEqual(e.exception.code, 2, bad)
            self.assertFalse(os.path.exists(target), bad)

    def test_writer_files_and_determinism(self):
        out = tempfile.mkdtemp(prefix="ds.")
        self.addCleanup(shutil.rmtree, out, True)
        a, b = os.path.join(out, "a"), os.path.join(out, "b")
        make_dataset.main(["--bunny-json", self.bunny, "--split", "test", "--start", "3", "--count", "4",
                           "--out", a, "--batch", "3"])
        make_dataset.main(["--bunny-json", self.bunny, "--split", "test", "--start", "3", "--count", "4",
                           "--out", b, "--batch", "4"])
        def md5(d):
            out = {}
            for f in sorted(os.listdir(d)):
                with open(os.path.join(d, f), "rb") as fh:
                    out[f] = hashlib.md5(fh.read()).hexdigest()
            return out

        self.assertEqual(md5(a), md5(b))
        self.assertEqual(sorted(os.listdir(a)), ["index.json", "model.bin"]
                         + ["test_%06d.bin" % i for i in range(3, 7)])
        s = pvt.load(os.path.join(a, "test_000004.bin"))
        want = [("image", np.uint8, (64, 64, 3)), ("cld_rgb_nrm", np.float32, (1, 1024, 9)),
                ("choose", np.int64, (1, 1, 1024)), ("labels", np.uint8, (1, 1024)),
                ("gt_R", np.float32, (3, 3)), ("gt_t", np.float32, (3,)), ("cam_K", np.float32, (3, 3)),
                ("occlusion", np.float32, (1,)), ("seed", np.int64, (1,))]
        self.assertEqual([(k, v.dtype, v.shape) for k, v in s.items()],
                         [(k, np.dtype(d), sh) for k, d, sh in want])
        for k in ("image", "cld_rgb_nrm", "choose", "labels", "gt_R", "gt_t", "cam_K", "occlusion"):
            np.testing.assert_array_equal(s[k].reshape(-1), self.b[k][4].numpy().reshape(-1), k)
        self.assertEqual(int(s["seed"][0]), 2 * 10 ** 9 + 4)
        m = pvt.load(os.path.join(a, "model.bin"))
        self.assertEqual([(k, v.shape) for k, v in m.items()],
                         [("model_kps", (9, 3)), ("model_points", (1839, 3)), ("model_diameter", (1,))])
        np.testing.assert_array_equal(m["model_kps"], self.ds.model_kps.numpy())
        with open(os.path.join(a, "index.json")) as f:
            idx = json.load(f)
        self.assertEqual(idx["generator"], writer.VERSION)
        self.assertEqual(idx["split"], "test")
        self.assertEqual([x["seed"] for x in idx["samples"]], [2 * 10 ** 9 + i for i in range(3, 7)])
        self.assertAlmostEqual(idx["samples"][1]["occlusion"], float(self.b["occlusion"][4]), places=5)
        # uint8 (ONNX code 2) is a type the Java reader knows
        self.assertEqual(pvt.DTYPE_CODES[np.dtype(np.uint8)], 2)

    def test_preview_and_full_frame(self):
        out = tempfile.mkdtemp(prefix="prev.")
        self.addCleanup(shutil.rmtree, out, True)
        frames, batch = self.ds.full_frame("test", [0])
        self.assertEqual(tuple(frames.shape), (1, 480, 640, 3))
        self.assertTrue(torch.equal(batch["image"], self.b["image"][:1]))
        preview.contact_sheet(batch, os.path.join(out, "p.png"), frames=frames)
        self.assertGreater(os.path.getsize(os.path.join(out, "p.png")), 1000)
        self.assertEqual(render.NONE, 12)


if __name__ == "__main__":
    unittest.main()
