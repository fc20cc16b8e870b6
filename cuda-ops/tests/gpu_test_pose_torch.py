"""Dense-N x N PyTorch mean shift, as PVN3D's evaluation uses it (lib/utils/meanshift_pytorch.py,
MeanShiftTorch), timed on the GPU for comparison with the library's VoteAggregate / PoseSolve.

    python3 gpu_test_pose_torch.py [--n 3000] [--k 9] [--reps 50] [--out file]

Data: the same kind as pvn3d_bench_cuda --pose (model keypoints in a 15 cm box, a random pose, each point
votes for every keypoint with 1 cm Gaussian noise, 30% of the points vote uniformly in a 0.5 m cube),
generated here independently. The timed region is PVN3D's per-object clustering: the centre fit over
all points, then one fit per keypoint over the points of the centre cluster (use_ctr_clus_flter).
"""
import argparse
import statistics

import torch


def gaussian_kernel(distance, bandwidth):
    return (1 / (bandwidth * torch.sqrt(2 * torch.tensor(torch.pi, device=distance.device)))) * torch.exp(
        -0.5 * ((distance / bandwidth)) ** 2)


class MeanShiftTorch:
    """PVN3D's MeanShiftTorch, verbatim in behaviour."""

    def __init__(self, bandwidth=0.05, max_iter=300):
        self.bandwidth = bandwidth
        self.stop_thresh = bandwidth * 1e-3
        self.max_iter = max_iter

    def fit(self, A):
        N, c = A.size()
        it = 0
        C = A.clone()
        while True:
            it += 1
            Ar = A.view(1, N, c).repeat(N, 1, 1)
            Cr = C.view(N, 1, c).repeat(1, N, 1)
            dis = torch.norm(Cr - Ar, dim=2)
            w = gaussian_kernel(dis, self.bandwidth).view(N, N, 1)
            new_C = torch.sum(w * Ar, dim=1) / torch.sum(w, dim=1)
            Adis = torch.norm(new_C - C, dim=1)
            C = new_C
            if torch.max(Adis) < self.stop_thresh or it > self.max_iter:
                break
        Cr = A.view(N, 1, c).repeat(1, N, 1)
        dis = torch.norm(Ar - Cr, dim=2)
        num_in = torch.sum(dis < self.bandwidth, dim=1)
        max_num, max_idx = torch.max(num_in, 0)
        labels = dis[max_idx] < self.bandwidth
        return C[max_idx, :], labels, it


def make_votes(n, k, seed=77, sigma=0.01, outliers=0.3, device="cuda"):
    g = torch.Generator().manual_seed(seed)
    model = (torch.rand(k, 3, generator=g, dtype=torch.float64) - 0.5) * 0.15
    q = torch.randn(4, generator=g, dtype=torch.float64)
    q = q / q.norm()
    w, x, y, z = q.tolist()
    R = torch.tensor([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]], dtype=torch.float64)
    t = torch.tensor([0.05, -0.03, 0.8], dtype=torch.float64)
    kps = model @ R.T + t                                    # [k,3]
    votes = kps[:, None, :] + sigma * torch.randn(k, n, 3, generator=g, dtype=torch.float64)
    out = torch.rand(n, generator=g) < outliers
    votes[:, out, :] = t + (torch.rand(k, int(out.sum()), 3, generator=g, dtype=torch.float64) - 0.5) * 0.5
    return votes.float().to(device)                          # [k,n,3], last row = centre


def pvn3d_cluster(votes, bandwidth=0.08):
    ms = MeanShiftTorch(bandwidth=bandwidth)
    ctr, ctr_labels, it_c = ms.fit(votes[-1])
    if ctr_labels.sum() < 1:
        ctr_labels[0] = 1
    its = [it_c]
    kps = []
    for kp_votes in votes[:-1, ctr_labels, :]:
        kp, _, it = ms.fit(kp_votes)
        kps.append(kp)
        its.append(it)
    kps.append(ctr)
    return torch.stack(kps), its


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--k", type=int, default=9)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    votes = make_votes(a.n, a.k)
    for _ in range(3):
        kps, its = pvn3d_cluster(votes)
    torch.cuda.synchronize()
    times = []
    for _ in range(a.reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        kps, its = pvn3d_cluster(votes)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    line = (f"PyTorch {torch.__version__} dense N x N mean shift (PVN3D MeanShiftTorch, centre filter), "
            f"K={a.k} N={a.n} bandwidth 0.08: median {statistics.median(times):.3f} ms over {a.reps} runs "
            f"(iterations per keypoint: {its}) on {torch.cuda.get_device_name()}")
    print(line)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
