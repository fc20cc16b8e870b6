package org.pvn3d.ort.bench;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.PVN3D_MASK_FLOAT32;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_ball_query_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_ball_query_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_furthest_point_sample_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_furthest_point_sample_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_furthest_point_sample_cuda_workspace_bytes;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_gather_points_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_gather_points_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_group_points_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_group_points_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cuda_workspace_bytes;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_interpolate_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_interpolate_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_nn_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_nn_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_vote_aggregate_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_vote_aggregate_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_vote_aggregate_cuda_workspace_bytes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.ops.OpsLibrary;

/**
 * One operator at one size, named like {@code BallQuery_B1_N12288_M2048_S16_r0.0175}: the operator
 * (FPS, BallQuery, GroupPoints, ThreeNN, ThreeInterpolate, GatherPoints, VoteAggregate, PoseSolve),
 * then its sizes, each a key and a value ({@code np} = npoint, {@code r} = radius; keys are
 * case-sensitive: {@code n}/{@code m} of ThreeNN and ThreeInterpolate are not {@code N}/{@code M}).
 * Knows the operator's inputs and outputs (names as in the one-node models), the work of one call,
 * and calls its CPU kernel and CUDA launcher through the C ABI of libpvn3d_ops
 * (cuda-ops/include/pvn3d_ops.h).
 *
 * <p>The pose operators ({@code VoteAggregate_B1_K9_N3000}, {@code PoseSolve_B1_K9_N3000}: B batch
 * items, K keypoint rows with the centre last, N votes) run with PVN3D's attributes, bandwidth
 * {@value #BANDWIDTH} m, max_iter {@value #MAX_ITER}, center_filter {@value #CENTER_FILTER} (those of
 * the one-node models), on a float32 mask with every point set, over votes like PVN3D's
 * ({@link BenchData#poseVotes}); PoseSolve fits one shared [K,3] model (model_B = 0).
 */
final class KernelCase {
    /** A tensor of the case: model value name, type, shape, and its host data. */
    record HostTensor(String name, OnnxTensorType type, long[] shape, MemorySegment data) {}

    /** PVN3D's mean-shift attributes, as in bench-models/vote_aggregate.onnx and pose_solve.onnx. */
    static final float BANDWIDTH = 0.08f;
    static final long MAX_ITER = 300;
    static final int CENTER_FILTER = 1;

    final String spec;
    final String op;
    private final Map<String, String> keys;
    private final long b;
    // the sizes once more as fields, so a call does not parse them (0 where the operator has none)
    private final long kN, kM, kC, kS, kn, km, knp, kK;
    private final float kr;

    /** Loads libpvn3d_ops (an {@link org.pvn3d.ort.OrtException} where it cannot), then parses {@code spec}. */
    KernelCase(String spec) {
        OpsLibrary.load();
        this.spec = spec;
        String[] parts = spec.split("_");
        this.op = parts[0];
        this.keys = new HashMap<>();
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            int j = 0;
            while (j < p.length() && Character.isLetter(p.charAt(j))) {
                j++;
            }
            if (j == 0 || j == p.length()) {
                throw new IllegalArgumentException("bad size '" + p + "' in kernel case " + spec);
            }
            keys.put(p.substring(0, j), p.substring(j));
        }
        List<String> need = switch (op) {
            case "FPS" -> List.of("B", "N", "np");
            case "BallQuery" -> List.of("B", "N", "M", "S", "r");
            case "GroupPoints" -> List.of("B", "C", "N", "M", "S");
            case "ThreeNN" -> List.of("B", "n", "m");
            case "ThreeInterpolate" -> List.of("B", "C", "m", "n");
            case "GatherPoints" -> List.of("B", "C", "N", "M");
            case "VoteAggregate", "PoseSolve" -> List.of("B", "K", "N");
            default -> throw new IllegalArgumentException("unknown operator '" + op + "' in kernel case " + spec
                    + " (FPS, BallQuery, GroupPoints, ThreeNN, ThreeInterpolate, GatherPoints, VoteAggregate, "
                    + "PoseSolve)");
        };
        for (String k : need) {
            if (!keys.containsKey(k)) {
                throw new IllegalArgumentException("kernel case " + spec + " lacks " + k + " (needs " + need + ")");
            }
        }
        if (keys.size() != need.size()) {
            throw new IllegalArgumentException("kernel case " + spec + " has other keys than " + need);
        }
        this.b = l("B");
        this.kN = opt("N");
        this.kM = opt("M");
        this.kC = opt("C");
        this.kS = opt("S");
        this.kn = opt("n");
        this.km = opt("m");
        this.knp = opt("np");
        this.kK = opt("K");
        this.kr = keys.containsKey("r") ? Float.parseFloat(keys.get("r")) : 0f;
    }

    private long opt(String key) {
        return keys.containsKey(key) ? l(key) : 0;
    }

    private long l(String key) {
        return Long.parseLong(keys.get(key));
    }

    /** The ONNX operator name (without the PVN3D_ prefix). */
    String operatorName() {
        return op.equals("FPS") ? "FurthestPointSample" : op;
    }

    /** The one-node model for this case, a class-path resource written by make_bench_models.py. */
    String modelResource() {
        return switch (op) {
            case "FPS" -> "/bench-models/furthest_point_sample_np" + l("np") + ".onnx";
            case "BallQuery" -> "/bench-models/ball_query_r" + keys.get("r") + "_s" + l("S") + ".onnx";
            case "GroupPoints" -> "/bench-models/group_points.onnx";
            case "ThreeNN" -> "/bench-models/three_nn.onnx";
            case "ThreeInterpolate" -> "/bench-models/three_interpolate.onnx";
            case "VoteAggregate" -> "/bench-models/vote_aggregate.onnx";
            case "PoseSolve" -> "/bench-models/pose_solve.onnx";
            default -> "/bench-models/gather_points.onnx";
        };
    }

    /**
     * Bytes one call must move at least (inputs read once, outputs written once), for the kernels
     * that are memory-bound; 0 for the others. The same count as cuda-ops/tests/bench_cuda_ops.cpp.
     */
    double bytesPerCall() {
        return switch (op) {
            case "GroupPoints" -> (double) b * l("C") * l("M") * l("S") * 4 + (double) b * l("M") * l("S") * 8
                    + (double) b * l("C") * l("N") * 4;
            case "ThreeInterpolate" -> (double) b * l("C") * l("n") * 4 + (double) b * l("C") * l("m") * 4
                    + (double) b * l("n") * 3 * 12;
            case "GatherPoints" -> (double) b * l("C") * l("M") * 4 * 2 + (double) b * l("M") * 8;
            default -> 0;
        };
    }

    /**
     * Point-pair distance evaluations one call makes (compute-bound kernels; 0 for the others): FPS
     * B*N*npoint (every step updates every point), BallQuery B*M*N, ThreeNN B*n*m. The pose operators
     * report none: their work depends on how many mean-shift iterations the data needs.
     */
    double pairsPerCall() {
        return switch (op) {
            case "FPS" -> (double) b * l("N") * l("np");
            case "BallQuery" -> (double) b * l("M") * l("N");
            case "ThreeNN" -> (double) b * l("n") * l("m");
            default -> 0;
        };
    }

    /** The inputs, freshly made with a fixed seed per operator, in model order. */
    List<HostTensor> inputs(Arena arena) {
        OnnxTensorType f = OnnxTensorType.FLOAT;
        OnnxTensorType i64 = OnnxTensorType.INT64;
        switch (op) {
            case "FPS": {
                BenchData d = new BenchData(1);
                return List.of(new HostTensor("xyz", f, new long[] {b, l("N"), 3}, d.cloud(arena, b, l("N"))));
            }
            case "BallQuery": {
                BenchData d = new BenchData(2);
                MemorySegment cloud = d.cloud(arena, b, l("N"));
                return List.of(new HostTensor("xyz", f, new long[] {b, l("N"), 3}, cloud),
                        new HostTensor("new_xyz", f, new long[] {b, l("M"), 3}, d.centres(arena, cloud, b, l("N"), l("M"))));
            }
            case "GroupPoints": {
                BenchData d = new BenchData(3);
                return List.of(
                        new HostTensor("features", f, new long[] {b, l("C"), l("N")}, d.floats(arena, b * l("C") * l("N"), -1, 1)),
                        new HostTensor("idx", i64, new long[] {b, l("M"), l("S")}, d.indices(arena, b * l("M") * l("S"), l("N"))));
            }
            case "ThreeNN": {
                BenchData d = new BenchData(5);
                return List.of(new HostTensor("unknown", f, new long[] {b, l("n"), 3}, d.cloud(arena, b, l("n"))),
                        new HostTensor("known", f, new long[] {b, l("m"), 3}, d.cloud(arena, b, l("m"))));
            }
            case "ThreeInterpolate": {
                BenchData d = new BenchData(6);
                return List.of(
                        new HostTensor("features", f, new long[] {b, l("C"), l("m")}, d.floats(arena, b * l("C") * l("m"), -1, 1)),
                        new HostTensor("idx", i64, new long[] {b, l("n"), 3}, d.indices(arena, b * l("n") * 3, l("m"))),
                        new HostTensor("weight", f, new long[] {b, l("n"), 3}, d.weights(arena, b, l("n"))));
            }
            case "VoteAggregate":
            case "PoseSolve": {
                BenchData d = new BenchData(8);
                MemorySegment model = d.modelKeypoints(arena, l("K"));
                List<HostTensor> in = List.of(
                        new HostTensor("votes", f, new long[] {b, l("K"), l("N"), 3}, d.poseVotes(arena, model, b, l("K"), l("N"))),
                        new HostTensor("mask", f, new long[] {b, l("N")}, d.ones(arena, b * l("N"))));
                if (op.equals("VoteAggregate")) {
                    return in;
                }
                return List.of(in.get(0), in.get(1), new HostTensor("model_kps", f, new long[] {l("K"), 3}, model));
            }
            default: {
                BenchData d = new BenchData(4);
                return List.of(
                        new HostTensor("features", f, new long[] {b, l("C"), l("N")}, d.floats(arena, b * l("C") * l("N"), -1, 1)),
                        new HostTensor("idx", i64, new long[] {b, l("M")}, d.indices(arena, b * l("M"), l("N"))));
            }
        }
    }

    /** The outputs, zero-filled, in model order. */
    List<HostTensor> outputs(Arena arena) {
        OnnxTensorType f = OnnxTensorType.FLOAT;
        OnnxTensorType i64 = OnnxTensorType.INT64;
        return switch (op) {
            case "FPS" -> List.of(out(arena, "idx", i64, b, l("np")));
            case "BallQuery" -> List.of(out(arena, "idx", i64, b, l("M"), l("S")));
            case "GroupPoints" -> List.of(out(arena, "out", f, b, l("C"), l("M"), l("S")));
            case "ThreeNN" -> List.of(out(arena, "dist2", f, b, l("n"), 3), out(arena, "idx", i64, b, l("n"), 3));
            case "ThreeInterpolate" -> List.of(out(arena, "out", f, b, l("C"), l("n")));
            case "VoteAggregate" -> List.of(out(arena, "kps", f, b, l("K"), 3), out(arena, "inliers", i64, b));
            case "PoseSolve" -> List.of(out(arena, "R", f, b, 3, 3), out(arena, "t", f, b, 3),
                    out(arena, "kps", f, b, l("K"), 3), out(arena, "inliers", i64, b));
            default -> List.of(out(arena, "out", f, b, l("C"), l("M")));
        };
    }

    private static HostTensor out(Arena arena, String name, OnnxTensorType type, long... shape) {
        long count = 1;
        for (long s : shape) {
            count *= s;
        }
        return new HostTensor(name, type, shape, arena.allocate(count * type.byteSize(), 64));
    }

    /**
     * Bytes of device scratch the CUDA launcher needs (FPS above 16384 points; VoteAggregate and
     * PoseSolve always), from the library's {@code *_cuda_workspace_bytes}.
     */
    long cudaWorkspaceBytes() {
        return switch (op) {
            case "FPS" -> pvn3d_furthest_point_sample_cuda_workspace_bytes(b, l("N"), l("np"));
            case "VoteAggregate" -> pvn3d_vote_aggregate_cuda_workspace_bytes(b, kK, kN);
            case "PoseSolve" -> pvn3d_pose_solve_cuda_workspace_bytes(b, kK, kN);
            default -> 0L;
        };
    }

    /**
     * Whether the CUDA launcher takes a device error flag (int64[2]): the index-error flag of
     * GatherPoints, GroupPoints and ThreeInterpolate, PoseSolve's non-finite {@code input_error}
     * (what the ORT node passes too).
     */
    boolean hasIndexError() {
        return op.equals("GroupPoints") || op.equals("ThreeInterpolate") || op.equals("GatherPoints")
                || op.equals("PoseSolve");
    }

    /** One call of the CPU kernel on host memory; returns the pvn3d_status. */
    int cpu(MemorySegment[] in, MemorySegment[] out) {
        return switch (op) {
            case "FPS" -> pvn3d_furthest_point_sample_cpu(b, kN, knp, in[0], out[0]);
            case "BallQuery" -> pvn3d_ball_query_cpu(b, kN, kM, kr, kS, in[0], in[1], out[0]);
            case "GroupPoints" -> pvn3d_group_points_cpu(b, kC, kN, kM, kS, in[0], in[1], out[0]);
            case "ThreeNN" -> pvn3d_three_nn_cpu(b, kn, km, in[0], in[1], out[0], out[1]);
            case "ThreeInterpolate" -> pvn3d_three_interpolate_cpu(b, kC, km, kn, in[0], in[1], in[2], out[0]);
            case "VoteAggregate" -> pvn3d_vote_aggregate_cpu(in[0], in[1], PVN3D_MASK_FLOAT32(), b, kK, kN, BANDWIDTH,
                    MAX_ITER, CENTER_FILTER, out[0], out[1]);
            case "PoseSolve" -> pvn3d_pose_solve_cpu(in[0], in[1], PVN3D_MASK_FLOAT32(), b, kK, kN, in[2], 0L, kK,
                    BANDWIDTH, MAX_ITER, CENTER_FILTER, out[0], out[1], out[2], out[3]);
            default -> pvn3d_gather_points_cpu(b, kC, kN, kM, in[0], in[1], out[0]);
        };
    }

    /** One launch of the CUDA kernel on device memory, on {@code stream}; returns the pvn3d_status. */
    int cuda(MemorySegment[] in, MemorySegment[] out, MemorySegment workspace, long workspaceBytes,
            MemorySegment indexError, MemorySegment stream) {
        return switch (op) {
            case "FPS" -> pvn3d_furthest_point_sample_cuda(b, kN, knp, in[0], out[0], workspace, workspaceBytes, stream);
            case "BallQuery" -> pvn3d_ball_query_cuda(b, kN, kM, kr, kS, in[0], in[1], out[0], stream);
            case "GroupPoints" -> pvn3d_group_points_cuda(b, kC, kN, kM, kS, in[0], in[1], out[0],
                    indexError, stream);
            case "ThreeNN" -> pvn3d_three_nn_cuda(b, kn, km, in[0], in[1], out[0], out[1], stream);
            case "ThreeInterpolate" -> pvn3d_three_interpolate_cuda(b, kC, km, kn, in[0], in[1], in[2], out[0],
                    indexError, stream);
            case "VoteAggregate" -> pvn3d_vote_aggregate_cuda(in[0], in[1], PVN3D_MASK_FLOAT32(), b, kK, kN, BANDWIDTH,
                    MAX_ITER, CENTER_FILTER, out[0], out[1], workspace, workspaceBytes, stream);
            case "PoseSolve" -> pvn3d_pose_solve_cuda(in[0], in[1], PVN3D_MASK_FLOAT32(), b, kK, kN, in[2], 0L, kK,
                    BANDWIDTH, MAX_ITER, CENTER_FILTER, out[0], out[1], out[2], out[3], indexError, workspace,
                    workspaceBytes, stream);
            default -> pvn3d_gather_points_cuda(b, kC, kN, kM, in[0], in[1], out[0], indexError, stream);
        };
    }

    @Override
    public String toString() {
        return spec + String.format(Locale.ROOT, " (%s)", operatorName());
    }
}
