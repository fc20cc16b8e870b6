"""The pose stage: votes from the offsets, mean-shift clustering (PVN3D_VoteAggregate), Kabsch fit
(PVN3D_KabschSolver), fused as PVN3D_PoseSolve, in plain PyTorch (the reference), and the
autograd Function whose ONNX symbolic emits ai.onnx.contrib::PVN3D_PoseSolve.

The reading of spec/ops.md is the one cuda-ops/vote_aggregate/vote_aggregate.h documents:
candidates = masked points whose K votes are all finite; for a keypoint over points P,
count_i = #{j: d2(x_i, x_j) < bw^2} over the original votes, best = argmax count (lowest index);
non-blurring mean shift of every mode m_i <- m_i + sum_j w_ij (x_j - m_i) / sum_j w_ij with
w_ij = exp(-0.5 d2(m_i, x_j) / bw^2) (float32, exponent below ln(2^-126) or result below FLT_MIN
flushed to 0; a mode with no weight stays), sums accumulated in float64, stop after the first
iteration in which no mode moved more than bw*1e-3 (all modes of a keypoint together) or after
max_iter; the answer is m_best. center_filter = 1: the last row (centre) is clustered first over all
candidates; the other rows use the candidates whose centre vote is within bw of the chosen centre
vote (all candidates if none). Kabsch in float64: H = sum (a - ma)(b - mb)^T = U S V^T,
R = V U^T, last column of V negated when det R < 0; t = mb - R ma.
"""
import numpy as np
import torch
from torch import nn

from .. import ops

DOMAIN = ops.DOMAIN
K_MIN_EXPONENT = np.float32(-87.33654475)
FLT_MIN = np.float32(np.finfo(np.float32).tiny)


def _consts(bandwidth):
    bw = np.float32(bandwidth)
    bw2 = np.float32(bw * bw)
    tol = np.float32(bw * np.float32(1e-3))
    return bw2, np.float32(np.float32(-0.5) / bw2), np.float32(tol * tol)


def _cluster(x, bandwidth, max_iter, chunk=1024):
    """x [n,3] float32 (n >= 1) -> (answer [3] float32, best index)."""
    bw2, nhi, tol2 = _consts(bandwidth)
    n = x.shape[0]
    count = torch.zeros(n, dtype=torch.int64, device=x.device)
    for i0 in range(0, n, chunk):
        d2 = ops._sqdist(x[i0:i0 + chunk].unsqueeze(1), x.unsqueeze(0))
        count[i0:i0 + chunk] = (d2 < torch.tensor(bw2, device=x.device)).sum(1)
    best = int(torch.argmax(count))  # first maximum
    if (count == count[best]).nonzero()[0, 0] != best:
        best = int((count == count[best]).nonzero()[0, 0])
    m = x.clone()
    for _ in range(int(max_iter)):
        moved = False
        new = m.clone()
        for i0 in range(0, n, chunk):
            mi = m[i0:i0 + chunk]
            dx = x.unsqueeze(0) - mi.unsqueeze(1)  # [c,n,3] float32
            d2 = dx[..., 0] * dx[..., 0]
            d2 = d2 + dx[..., 1] * dx[..., 1]
            d2 = d2 + dx[..., 2] * dx[..., 2]
            e = d2 * torch.tensor(nhi)
            w = torch.exp(e)
            w = torch.where((e < torch.tensor(K_MIN_EXPONENT)) | (w < torch.tensor(FLT_MIN)),
                            torch.zeros_like(w), w)
            sw = w.double().sum(1)
            s = (w.unsqueeze(-1) * dx).double().sum(1)  # [c,3]
            ok = sw > 0
            step = torch.where(ok.unsqueeze(-1), (s / sw.clamp_min(1e-300).unsqueeze(-1)).float(),
                               torch.zeros_like(mi))
            nm = torch.where(ok.unsqueeze(-1), mi + step, mi)
            ex = nm - mi
            sh = ex[:, 0] * ex[:, 0] + ex[:, 1] * ex[:, 1] + ex[:, 2] * ex[:, 2]
            moved = moved or bool((sh > torch.tensor(tol2)).any())
            new[i0:i0 + chunk] = nm
        m = new
        if not moved:
            break
    return m[best], best


def vote_aggregate_ref(votes, mask, bandwidth=0.08, max_iter=300, center_filter=1):
    """votes [B,K,N,3] float32, mask [B,N] (bool or float, nonzero = used) ->
    kps [B,K,3] float32, inliers int64 [B] (on the CPU; the clustering runs on votes' device)."""
    votes = votes.detach().float()
    B, K, N, _ = votes.shape
    mask = mask.detach().to(votes.device)
    kps = torch.full((B, K, 3), float("nan"), dtype=torch.float32)
    inl = torch.zeros(B, dtype=torch.int64)
    bw2, _, _ = _consts(bandwidth)
    for b in range(B):
        finite = torch.isfinite(votes[b]).all(dim=2).all(dim=0)  # [N]
        cand = ((mask[b] != 0) & finite).nonzero().reshape(-1)
        if cand.numel() == 0:
            continue
        used = cand
        rows = range(K)
        if center_filter:
            xc = votes[b, K - 1, cand]
            kc, best = _cluster(xc, bandwidth, max_iter)
            kps[b, K - 1] = kc.cpu()
            d2 = ops._sqdist(xc, xc[best].unsqueeze(0))
            sel = cand[d2 < torch.tensor(bw2, device=d2.device)]
            used = sel if sel.numel() > 0 else cand
            rows = range(K - 1)
        for k in rows:
            kps[b, k] = _cluster(votes[b, k, used], bandwidth, max_iter)[0].cpu()
        inl[b] = used.numel()
    return kps, inl


def kabsch_ref(model_kps, kps):
    """model_kps [K,3] or [B,K,3], kps [B,K,3] -> R [B,3,3], t [B,3] (float32; NaN rows where
    kps holds NaN)."""
    b_ = kps.detach().double().cpu().numpy()
    a_ = model_kps.detach().double().cpu().numpy()
    B, K, _ = b_.shape
    if K < 3:
        raise ops.OpError("PVN3D_KabschSolver: needs K >= 3 keypoints, got K=%d" % K)
    if a_.ndim == 2:
        a_ = np.broadcast_to(a_, (B,) + a_.shape)
    if a_.shape[1] != K:
        raise ops.OpError("PVN3D_KabschSolver: model_kps has K=%d, kps has K=%d" % (a_.shape[1], K))
    R = np.full((B, 3, 3), np.nan)
    t = np.full((B, 3), np.nan)
    for i in range(B):
        a, b = a_[i], b_[i]
        if not np.isfinite(b).all():
            continue
        ma, mb = a.mean(0), b.mean(0)
        H = (a - ma).T @ (b - mb)
        U, S, Vt = np.linalg.svd(H)
        V = Vt.T
        r = V @ U.T
        if np.linalg.det(r) < 0:
            V[:, 2] = -V[:, 2]
            r = V @ U.T
        R[i], t[i] = r, mb - r @ ma
    return torch.from_numpy(R.astype(np.float32)), torch.from_numpy(t.astype(np.float32))


def pose_solve_ref(votes, mask, model_kps, bandwidth=0.08, max_iter=300, center_filter=1):
    kps, inl = vote_aggregate_ref(votes, mask, bandwidth, max_iter, center_filter)
    R, t = kabsch_ref(model_kps, kps)
    return R, t, kps, inl


class PoseSolve(torch.autograd.Function):
    @staticmethod
    def forward(ctx, votes, mask, model_kps, bandwidth, max_iter, center_filter):
        R, t, kps, inl = pose_solve_ref(votes, mask, model_kps, bandwidth, max_iter, center_filter)
        dev = votes.device
        return R.to(dev), t.to(dev), kps.to(dev), inl.to(dev)

    @staticmethod
    def symbolic(g, votes, mask, model_kps, bandwidth, max_iter, center_filter):
        R, t, kps, inl = g.op(DOMAIN + "::PVN3D_PoseSolve", votes, mask, model_kps,
                              bandwidth_f=float(bandwidth), max_iter_i=int(max_iter),
                              center_filter_i=int(center_filter), outputs=4)
        ops._set_type(R, votes, torch.float32, [None, 3, 3])
        ops._set_type(t, votes, torch.float32, [None, 3])
        ops._set_type(kps, votes, torch.float32, [None, ops._static(votes, 1), 3])
        ops._set_type(inl, votes, torch.int64, [None])
        return R, t, kps, inl


def pose_solve(votes, mask, model_kps, bandwidth=0.08, max_iter=300, center_filter=1):
    return PoseSolve.apply(votes, mask, model_kps, float(bandwidth), int(max_iter),
                           int(center_filter))


def votes_and_mask(cld_rgb_nrm, pred_rgbd_seg, pred_kp_of, pred_ctr_of, obj_class=1):
    """PVN3D's votes: point - offset, keypoints then the centre (last row) -> [B,K+1,N,3];
    mask: points whose argmax class is obj_class -> bool [B,N]."""
    xyz = cld_rgb_nrm[..., 0:3].unsqueeze(1)
    votes = torch.cat([xyz - pred_kp_of, xyz - pred_ctr_of], dim=1)
    mask = torch.argmax(pred_rgbd_seg, dim=2) == obj_class
    return votes, mask


class PoseHead(nn.Module):
    """Appends PVN3D_PoseSolve to a PVN3D model: outputs (..., pose_R, pose_t, pose_kps,
    pose_inliers). model_kps [K+1,3] (centre last) is baked into the graph."""

    def __init__(self, net, model_kps, obj_class=1, bandwidth=0.08, max_iter=300,
                 center_filter=1):
        super().__init__()
        self.net = net
        self.register_buffer("model_kps", torch.as_tensor(np.asarray(model_kps, np.float32)))
        self.obj_class, self.bandwidth = int(obj_class), float(bandwidth)
        self.max_iter, self.center_filter = int(max_iter), int(center_filter)

    def forward(self, rgb, cld_rgb_nrm, choose):
        outs = self.net(rgb, cld_rgb_nrm, choose)
        votes, mask = votes_and_mask(cld_rgb_nrm, outs[0], outs[1], outs[2], self.obj_class)
        return tuple(outs) + pose_solve(votes, mask, self.model_kps, self.bandwidth,
                                        self.max_iter, self.center_filter)


def run_reference(name, inputs, attrs):
    """numpy entry for npeval_ext: PoseSolve / VoteAggregate / KabschSolver."""
    t = [torch.from_numpy(np.ascontiguousarray(x)) for x in inputs]
    bw = attrs.get("bandwidth", 0.08)
    it = attrs.get("max_iter", 300)
    cf = attrs.get("center_filter", 1)
    if name == "PoseSolve":
        res = pose_solve_ref(t[0], t[1], t[2], bw, it, cf)
    elif name == "VoteAggregate":
        res = vote_aggregate_ref(t[0], t[1], bw, it, cf)
    elif name == "KabschSolver":
        res = kabsch_ref(t[0], t[1])
    else:
        raise NotImplementedError("PVN3D_" + name)
    return [r.numpy() for r in res]
