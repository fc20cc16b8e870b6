package org.pvn3d.ort.ops;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import org.pvn3d.ort.OrtException;

/**
 * The operator functions of libpvn3d_ops (cuda-ops/include/pvn3d_ops.h) as typed downcall handles,
 * bound once through {@link OpsLibrary}, which loads the library and turns its statuses into
 * {@link OrtException}s.
 */
final class Pvn3dNative {
    static final String LIBRARY = OpsLibrary.LIBRARY;
    static final int OK = OpsLibrary.OK;

    private static final FunctionDescriptor STATUS_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS);

    // library information and errors
    static final MethodHandle INDEX_ERROR_DESCRIBE = bind("pvn3d_index_error_describe",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG));

    // operators: (B, N, npoint, xyz, idx)
    static final MethodHandle FPS_CPU = bind("pvn3d_furthest_point_sample_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS));
    static final MethodHandle FPS_CUDA_WORKSPACE = bind("pvn3d_furthest_point_sample_cuda_workspace_bytes",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    static final MethodHandle FPS_CUDA = bind("pvn3d_furthest_point_sample_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    // (B, C, N, M, features, idx, out[, index_error, stream])
    static final MethodHandle GATHER_CPU = bind("pvn3d_gather_points_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle GATHER_CUDA = bind("pvn3d_gather_points_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, N, M, radius, nsample, xyz, new_xyz, idx[, stream])
    static final MethodHandle BALL_QUERY_CPU = bind("pvn3d_ball_query_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_FLOAT, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle BALL_QUERY_CUDA = bind("pvn3d_ball_query_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_FLOAT, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, C, N, M, S, features, idx, out[, index_error, stream])
    static final MethodHandle GROUP_CPU = bind("pvn3d_group_points_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle GROUP_CUDA = bind("pvn3d_group_points_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, n, m, unknown, known, dist2, idx[, stream])
    static final MethodHandle THREE_NN_CPU = bind("pvn3d_three_nn_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle THREE_NN_CUDA = bind("pvn3d_three_nn_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, C, m, n, features, idx, weight, out[, index_error, stream])
    static final MethodHandle THREE_INTERPOLATE_CPU = bind("pvn3d_three_interpolate_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle THREE_INTERPOLATE_CUDA = bind("pvn3d_three_interpolate_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));

    // pose operators (vote_aggregate.h, kabsch_solver.h, pose_solve.h); mask_dtype and center_filter are C ints
    static final int MASK_FLOAT32 = 0;
    static final int MASK_BOOL = 1;
    static final MethodHandle KABSCH_ERROR_DESCRIBE = bind("pvn3d_kabsch_error_describe",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
    // (votes, mask, mask_dtype, B, K, N, bandwidth, max_iter, center_filter, kps, inliers[, workspace, bytes, stream])
    static final MethodHandle VOTE_AGGREGATE_CPU = bind("pvn3d_vote_aggregate_cpu",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_FLOAT,
                    JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle VOTE_AGGREGATE_CUDA_WORKSPACE = bind("pvn3d_vote_aggregate_cuda_workspace_bytes",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    static final MethodHandle VOTE_AGGREGATE_CUDA = bind("pvn3d_vote_aggregate_cuda",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_FLOAT,
                    JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    // (model_kps, model_B, model_K, pred_kps, B, K, R, t[, input_error, stream])
    static final MethodHandle KABSCH_CPU = bind("pvn3d_kabsch_solver_cpu",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS));
    static final MethodHandle KABSCH_CUDA = bind("pvn3d_kabsch_solver_cuda",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS,
                    ADDRESS, ADDRESS));
    // (votes, mask, mask_dtype, B, K, N, model_kps, model_B, model_K, bandwidth, max_iter, center_filter,
    //  R, t, kps, inliers[, input_error, workspace, bytes, stream])
    static final MethodHandle POSE_SOLVE_CPU = bind("pvn3d_pose_solve_cpu",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG,
                    JAVA_LONG, JAVA_FLOAT, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle POSE_SOLVE_CUDA_WORKSPACE = bind("pvn3d_pose_solve_cuda_workspace_bytes",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    static final MethodHandle POSE_SOLVE_CUDA = bind("pvn3d_pose_solve_cuda",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG,
                    JAVA_LONG, JAVA_FLOAT, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS,
                    JAVA_LONG, ADDRESS));

    // device helpers
    static final MethodHandle CUDA_DEVICE_COUNT = bind("pvn3d_cuda_device_count", STATUS_PTR);
    static final MethodHandle CUDA_MALLOC_HOST = bind("pvn3d_cuda_malloc_host",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    static final MethodHandle CUDA_FREE_HOST = bind("pvn3d_cuda_free_host", STATUS_PTR);
    static final MethodHandle CUDA_HOST_DEVICE_POINTER = bind("pvn3d_cuda_host_device_pointer",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle CUDA_STREAM_SYNCHRONIZE = bind("pvn3d_cuda_stream_synchronize", STATUS_PTR);

    private Pvn3dNative() {}

    static void check(int status) {
        OpsLibrary.check(status);
    }

    static OrtException failure(int status) {
        return OpsLibrary.failure(status);
    }

    static String version() {
        return OpsLibrary.version();
    }

    static boolean builtWithCuda() {
        return OpsLibrary.builtWithCuda();
    }

    static RuntimeException rethrow(Throwable t) {
        return OpsLibrary.rethrow(t);
    }

    private static MethodHandle bind(String symbol, FunctionDescriptor descriptor) {
        return OpsLibrary.bind(symbol, descriptor);
    }
}
