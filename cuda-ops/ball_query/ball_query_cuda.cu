// PVN3D_BallQuery, CUDA kernel. See ball_query.h.
//
// One warp per centre, kWarps centres per block. The block streams the cloud through shared memory
// in tiles of kTile points (structure of arrays, so a warp's 32 consecutive reads hit 32 banks; the
// last tile padded with +inf points, which are never within a radius); the warp tests kUnroll x 32
// consecutive points at a time with one ballot per 32 and looks at the ballots only when one of them
// has a hit (rare: a ball holds a few dozen of N points), so a test costs little more than its
// arithmetic. A ballot + popcount gives each hit its slot in index order. A warp stops when it has
// nsample hits; the block stops loading tiles when all of its warps have (__syncthreads_and). Slots
// after the last hit get the first hit (0 without hits).
#include "ball_query.h"

#include "../common/cuda_utils.cuh"
#include "ball_query_args.h"
#include "../common/nvtx_range.h"

namespace pvn3d {
namespace ball_query {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kUnroll = 4;
constexpr int kTile = 2048;  // a multiple of 32 * kUnroll
constexpr unsigned kFull = 0xffffffffu;

__global__ void __launch_bounds__(kThreads)
    ball_query_kernel(int N, int M, float r2, int nsample, const float* __restrict__ xyz,
                      const float* __restrict__ new_xyz, int64_t* __restrict__ idx) {
  __shared__ float sx[kTile], sy[kTile], sz[kTile];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int blocks_per_batch = (M + kWarps - 1) / kWarps;
  const int b = blockIdx.x / blocks_per_batch;
  const int m = (blockIdx.x - b * blocks_per_batch) * kWarps + warp;
  const bool active = m < M;
  const float* points = xyz + static_cast<int64_t>(b) * N * 3;
  const int64_t centre = static_cast<int64_t>(b) * M + (active ? m : 0);
  const float cx = __ldg(new_xyz + 3 * centre), cy = __ldg(new_xyz + 3 * centre + 1),
              cz = __ldg(new_xyz + 3 * centre + 2);
  const float inf = __int_as_float(0x7f800000);
  int64_t* out = idx + centre * nsample;
  int count = 0;
  int first = 0;
  for (int base = 0; base < N; base += kTile) {
    // Also the barrier that keeps the previous tile alive until every warp is done with it.
    if (__syncthreads_and(!active || count >= nsample)) break;
    const int len = min(kTile, N - base);
    const int padded = (len + 32 * kUnroll - 1) / (32 * kUnroll) * (32 * kUnroll);
    for (int t = threadIdx.x; t < padded; t += kThreads) {
      if (t < len) {
        const float* q = points + 3 * static_cast<int64_t>(base + t);
        sx[t] = __ldg(q);
        sy[t] = __ldg(q + 1);
        sz[t] = __ldg(q + 2);
      } else {  // +inf: its squared distance is +inf or NaN, never < r2
        sx[t] = inf;
        sy[t] = inf;
        sz[t] = inf;
      }
    }
    __syncthreads();
    if (active && count < nsample) {
      for (int j = 0; j < padded; j += 32 * kUnroll) {
        unsigned mask[kUnroll];
        unsigned any = 0u;
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int k = j + 32 * u + lane;
          mask[u] = __ballot_sync(kFull, cuda::dist2(sx[k], sy[k], sz[k], cx, cy, cz) < r2);
          any |= mask[u];
        }
        if (any != 0u) {  // warp-uniform
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            if (mask[u] != 0u && count < nsample) {
              if (count == 0) first = base + j + 32 * u + __ffs(mask[u]) - 1;
              const int slot = count + __popc(mask[u] & ((1u << lane) - 1u));
              if (((mask[u] >> lane) & 1u) && slot < nsample) out[slot] = base + j + 32 * u + lane;
              count += __popc(mask[u]);
            }
          }
          if (count >= nsample) break;  // warp-uniform
        }
      }
    }
  }
  if (active) {
    const int filled = min(count, nsample);
    const int64_t fill = count > 0 ? first : 0;
    for (int s = filled + lane; s < nsample; s += 32) out[s] = fill;
  }
}

}  // namespace
}  // namespace ball_query
}  // namespace pvn3d

extern "C" pvn3d_status pvn3d_ball_query_cuda(int64_t B, int64_t N, int64_t M, float radius, int64_t nsample,
                                               const float* xyz, const float* new_xyz, int64_t* idx, void* stream) {
  using namespace pvn3d::ball_query;
  PVN3D_NVTX_RANGE(kOp);
  int64_t work = 0;
  PVN3D_TRY(check_args(B, N, M, radius, nsample, xyz, new_xyz, idx, &work));
  if (work == 0) return PVN3D_OK;
  PVN3D_TRY(pvn3d::check_at_most(kOp, "N", N, "2^31-1 (CUDA)", INT32_MAX));
  PVN3D_TRY(pvn3d::check_at_most(kOp, "M", M, "2^31-1 (CUDA)", INT32_MAX - kWarps));
  PVN3D_TRY(pvn3d::check_at_most(kOp, "nsample", nsample, "2^31-1 (CUDA)", INT32_MAX - 32));
  const int64_t blocks = B * ((M + kWarps - 1) / kWarps);
  if (blocks > INT32_MAX)
    return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: B*M (%lld) too large for one CUDA launch", kOp, (long long)(B * M));
  pvn3d::cuda::clear_stale_error();
  ball_query_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, pvn3d::cuda::as_stream(stream)>>>(
      static_cast<int>(N), static_cast<int>(M), radius * radius, static_cast<int>(nsample), xyz, new_xyz, idx);
  return pvn3d::cuda::check_launch(kOp);
}
