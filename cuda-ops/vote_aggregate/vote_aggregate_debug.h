/* The debug record that the CUDA VoteAggregate (and PoseSolve, which shares its workspace) leaves at
 * the start of its workspace after a call (internal: for the native benchmark and for profiling; not
 * part of the C API, not installed; the layout may change with the kernel).
 *
 *   int32 at workspace offset 0:
 *     [0]              grid-wide barriers the cooperative kernel executed
 *     [1]              votes the shared-memory tile of a block holds (the task's votes stay resident
 *                      when they fit)
 *     [2]              blocks of the cooperative grid
 *     [3]              mean-shift iterations run by single blocks after the grid-wide steps (the tails),
 *                      summed over the tasks
 *     [4 + b*K + k]    mean-shift iterations of keypoint k of batch item b (0 for an item without
 *                      candidates or with max_iter 0)
 *
 * Read it back with a device-to-host copy of kDebugHeader + B*K int32 once the call has completed.
 */
#ifndef PVN3D_VOTE_AGGREGATE_DEBUG_H
#define PVN3D_VOTE_AGGREGATE_DEBUG_H

namespace pvn3d {
namespace vote {

constexpr int kDebugHeader = 4;

}  // namespace vote
}  // namespace pvn3d

#endif
