"""Scene parameters: everything random about one sample except the per-pixel noise, drawn from a
numpy Generator (PCG64) seeded by the sample's seed, in a fixed order (changing that order or any
distribution is a new generator version: see dataset.VERSION).

A scene: the bunny (uniform random rotation, centre depth U(0.35, 0.9) m, projected centre uniform in
the 640x480 frame with a margin of half its projected bounding radius), a table plane touching the
bunny's lowest point, a wall behind it, up to 6 distractors (spheres, boxes, cylinders standing on the
table around the bunny) and, in 70% of the samples, one occluder between the camera and the bunny
(its placement across the image is searched at render time to hide a target fraction of the bunny).
"""
import math

import numpy as np

from . import camera

# surface slots after the bunny (render ids 1..11): table, wall, then three per shape type; the last
# slot of each type is the occluder's, the other two are distractors
PLANE, SPHERE, BOX, CYLINDER = 1, 2, 3, 4
SLOT_KIND = np.array([PLANE, PLANE, SPHERE, SPHERE, SPHERE, BOX, BOX, BOX, CYLINDER, CYLINDER, CYLINDER])
N_SLOTS = len(SLOT_KIND)
TABLE, WALL = 0, 1
DISTRACTOR_SLOTS = [2, 3, 5, 6, 8, 9]
OCCLUDER_SLOT = {SPHERE: 4, BOX: 7, CYLINDER: 10}
SOLID, CHECKER, STRIPES, NOISE = 0, 1, 2, 3

P_UNOCCLUDED = 0.3
OCCLUSION_RANGE = (0.12, 0.58)  # target of the occluder search (the measured value is recorded)
DEPTH_RANGE = (0.35, 0.9)
CROP_SCALE = (1.2, 1.6)
CROP_JITTER = 0.1
MAX_DISTRACTORS = 6


def _unit(v):
    return v / math.sqrt(float(v @ v))


def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _colour(rng, lo=0.05, hi=0.95):
    return rng.uniform(lo, hi, 3)


def _texture(rng, scale_lo, scale_hi, p_solid=0.25):
    """(tex kind, col1, col2, scale, tex seed)."""
    kind = SOLID if rng.random() < p_solid else int(rng.integers(1, 4))
    col1 = _colour(rng)
    col2 = _colour(rng) if rng.random() < 0.5 else col1 * rng.uniform(0.4, 0.85)
    scale = rng.uniform(scale_lo, scale_hi)
    return kind, col1, col2, scale, int(rng.integers(0, 2 ** 32))


def _yaw_frame(up, a1, a2, yaw):
    """Columns: a horizontal axis rotated by yaw, up, the other horizontal axis (right-handed)."""
    c, s = math.cos(yaw), math.sin(yaw)
    x = c * a1 + s * a2
    z = _cross(x, up)
    return np.stack([x, up, z], 1)


def sample_scene(seed, model, h, w):
    """One scene's parameters (a dict of numpy values) for sample seed `seed`."""
    rng = np.random.Generator(np.random.PCG64(seed))
    K = camera.LINEMOD_K
    fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    v = model.vertices

    # pose: uniform rotation, depth, projected centre inside the frame with a margin
    R = camera.random_rotation(rng)
    z = rng.uniform(*DEPTH_RANGE)
    margin = 0.5 * model.radius * fx / z
    uc = rng.uniform(margin, camera.FRAME_W - 1 - margin)
    vc_ = rng.uniform(margin, camera.FRAME_H - 1 - margin)
    t = np.array([(uc - cx) / fx * z, (vc_ - cy) / fy * z, z])
    pts = v @ R.T + t

    # the detector's box: the projected vertices' bounding box clipped to the frame, a jittered
    # square window around it, resampled to h x w
    uv = np.stack([fx * pts[:, 0] / pts[:, 2] + cx, fy * pts[:, 1] / pts[:, 2] + cy], 1)
    lo = np.maximum(uv.min(0), [-0.5, -0.5])
    hi = np.minimum(uv.max(0), [camera.FRAME_W - 0.5, camera.FRAME_H - 0.5])
    box_c = (lo + hi) / 2
    box_size = float((hi - lo).max())
    crop_c = box_c + rng.uniform(-CROP_JITTER, CROP_JITTER, 2) * box_size
    side = box_size * rng.uniform(*CROP_SCALE)
    Kc = camera.crop_intrinsics(crop_c, side, h, w)
    s = side / w
    box_c_crop = (box_c - crop_c) / s + np.array([w, h]) / 2.0 - 0.5

    # table under the bunny: the camera looks down at elevation U(10, 80) deg with a roll of
    # U(-20, 20) deg; the table touches the bunny's lowest point and lies >= 10 cm below the camera
    for _ in range(100):
        elev = math.radians(rng.uniform(10, 80))
        roll = math.radians(rng.uniform(-20, 20))
        up = np.array([-math.sin(roll) * -math.cos(elev), math.cos(roll) * -math.cos(elev),
                       -math.sin(elev)])
        hmin = float((pts @ up).min())
        if hmin < -0.1:
            break
    else:
        up = _unit(np.array([0.0, -0.2, -1.0]))
        hmin = float((pts @ up).min())
    fwd = np.array([0.0, 0.0, 1.0])
    fh = _unit(fwd - (fwd @ up) * up)  # horizontal forward
    side_ax = _cross(up, fh)  # horizontal, to the right or left
    foot = t - ((t @ up) - hmin) * up  # bunny centre dropped onto the table
    rel = pts - foot
    rel_h = rel - np.outer(rel @ up, up)
    foot_r = float(np.sqrt((rel_h ** 2).sum(1).max()))  # bunny footprint radius on the table

    kind = SLOT_KIND.copy()
    enabled = np.zeros(N_SLOTS, bool)
    centre = np.zeros((N_SLOTS, 3))
    axes = np.tile(np.eye(3), (N_SLOTS, 1, 1))
    size = np.zeros((N_SLOTS, 3))
    tex = np.zeros(N_SLOTS, np.int64)
    col1 = np.zeros((N_SLOTS, 3))
    col2 = np.zeros((N_SLOTS, 3))
    tex_scale = np.ones(N_SLOTS)
    tex_seed = np.zeros(N_SLOTS, np.int64)
    ks = np.zeros(N_SLOTS)

    psi = rng.uniform(0, math.pi)
    a1 = math.cos(psi) * side_ax + math.sin(psi) * fh
    enabled[TABLE] = True
    centre[TABLE] = foot
    axes[TABLE] = np.stack([a1, _cross(up, a1), up], 1)
    tex[TABLE], col1[TABLE], col2[TABLE], tex_scale[TABLE], tex_seed[TABLE] = _texture(rng, 0.01, 0.1)
    ks[TABLE] = rng.uniform(0, 0.15)
    wall_gap = rng.uniform(0.03, 0.6)
    enabled[WALL] = True
    centre[WALL] = foot + ((pts @ fh).max() - foot @ fh + wall_gap) * fh
    axes[WALL] = np.stack([side_ax, up, -fh], 1)
    tex[WALL], col1[WALL], col2[WALL], tex_scale[WALL], tex_seed[WALL] = _texture(rng, 0.01, 0.1)
    ks[WALL] = rng.uniform(0, 0.1)

    # distractors standing on the table around the bunny, not overlapping it or each other
    n_d = int(rng.integers(0, MAX_DISTRACTORS + 1))
    slots = rng.permutation(DISTRACTOR_SLOTS)[:n_d]
    placed = []
    for k in sorted(slots.tolist()):
        sz = rng.uniform(0.012, 0.05, 3)
        yaw = rng.uniform(0, 2 * math.pi)
        frame = _yaw_frame(up, a1, _cross(up, a1), yaw)
        if kind[k] == SPHERE:
            size[k] = [sz[0], sz[0], sz[0]]
            foot_k, height = sz[0], sz[0]
        elif kind[k] == BOX:
            size[k] = [sz[0], sz[1] * 1.3, sz[2]]
            foot_k, height = math.hypot(sz[0], sz[2]), sz[1] * 1.3
        else:
            size[k] = [sz[0] * 0.8, sz[0] * 0.8, sz[1] * 1.5]
            foot_k, height = sz[0] * 0.8, sz[1] * 1.5
            frame = np.stack([frame[:, 0], frame[:, 2], up], 1)  # axis (local z) = up
        ok = False
        for _ in range(10):
            phi = rng.uniform(0, 2 * math.pi)
            dist = foot_r + foot_k + rng.uniform(0.005, 0.1)
            base = foot + dist * (math.cos(phi) * a1 + math.sin(phi) * _cross(up, a1))
            if all(math.dist(base, b) > foot_k + r + 0.005 for b, r in placed):
                ok = True
                break
        if not ok:
            continue
        placed.append((base, foot_k))
        enabled[k] = True
        centre[k] = base + height * up
        axes[k] = frame
        tex[k], col1[k], col2[k], tex_scale[k], tex_seed[k] = _texture(rng, 0.005, 0.03, 0.5)
        ks[k] = rng.uniform(0, 0.4)

    # the occluder: its shape, size, orientation and depth now; where it sits across the image
    # (offset d along direction theta from the bunny's box centre, in crop pixels) is searched at
    # render time to hide `target` of the bunny's pixels
    occluded = rng.random() >= P_UNOCCLUDED
    target = rng.uniform(*OCCLUSION_RANGE) if occluded else 0.0
    occ_kind = [SPHERE, BOX, CYLINDER][int(rng.integers(0, 3))]
    occ_slot = OCCLUDER_SLOT[occ_kind]
    alpha = rng.uniform(0.5, 1.2) * box_size / fx  # angular size relative to the bunny's box
    gap = rng.uniform(0.01, 0.15)
    Q = camera.random_rotation(rng)
    dims = rng.uniform(0.35, 1.0, 3)
    dims[int(rng.integers(0, 3))] = 1.0
    if occ_kind == SPHERE:
        shape, rho_f = np.array([0.5, 0.5, 0.5]), 0.5
    elif occ_kind == BOX:
        shape = 0.5 * dims
        rho_f = float(np.linalg.norm(shape))
    else:
        shape = 0.5 * np.array([dims[0] * 0.8, dims[0] * 0.8, 1.0])
        rho_f = float(math.hypot(shape[0], shape[2]))
    z_near = float(pts[:, 2].min())
    z_occ = (z_near - gap) / (1.0 + alpha * rho_f)  # farthest occluder point = z_near - gap
    occ_size = alpha * z_occ * shape
    theta = rng.uniform(0, 2 * math.pi)
    rho_px = alpha * rho_f * Kc[0, 0] * 1.25
    bunny_px = 0.75 * box_size / s
    occ_tex = _texture(rng, 0.005, 0.03, 0.4)
    occ_ks = rng.uniform(0, 0.4)
    if occluded:
        enabled[occ_slot] = True
        size[occ_slot] = occ_size
        axes[occ_slot] = Q
        tex[occ_slot], col1[occ_slot], col2[occ_slot], tex_scale[occ_slot], tex_seed[occ_slot] = occ_tex
        ks[occ_slot] = occ_ks

    # light (direction towards the light, camera frame), ambient / diffuse, tint, background
    ldir = _unit(up * rng.uniform(0.3, 1.0) - fwd * rng.uniform(0.3, 1.0)
                 + 0.5 * _unit(rng.standard_normal(3)))
    light = dict(dir=ldir, ambient=rng.uniform(0.2, 0.5), diffuse=rng.uniform(0.45, 0.9),
                 tint=1.0 + rng.uniform(-0.12, 0.12, 3), gain=rng.uniform(0.85, 1.15),
                 noise=rng.uniform(0.003, 0.02), background=_colour(rng, 0.0, 0.3))
    # depth sensor: noise scale, edge / grazing / random / blob dropouts
    sensor = dict(sigma0=rng.uniform(0.0012, 0.0018), p_edge=rng.uniform(0.3, 0.9),
                  cos_graze=rng.uniform(0.08, 0.2), p_rand=rng.uniform(0.0, 0.02),
                  blob_scale=rng.uniform(3.0, 8.0), blob_thr=rng.uniform(0.7, 1.0),
                  blob_off=rng.uniform(0, 1000, 2))
    return dict(seed=seed, R=R, t=t, K4=np.array([Kc[0, 0], Kc[1, 1], Kc[0, 2], Kc[1, 2]]),
                kind=kind, enabled=enabled, centre=centre, axes=axes, size=size, tex=tex,
                col1=col1, col2=col2, tex_scale=tex_scale, tex_seed=tex_seed, ks=ks,
                occ_slot=occ_slot if occluded else -1, occ_target=target, occ_z=z_occ,
                occ_dir=np.array([math.cos(theta), math.sin(theta)]), occ_base=box_c_crop,
                occ_dmax=bunny_px + rho_px + 2.0, **{"light_" + k: v for k, v in light.items()},
                **{"sensor_" + k: v for k, v in sensor.items()})


def stack(scenes):
    """Stack per-sample dicts into batch arrays (one numpy array per key)."""
    return {k: np.stack([np.asarray(sc[k]) for sc in scenes]) for k in scenes[0]}
