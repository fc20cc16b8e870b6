package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;

/** Reads ORT's type and shape descriptions ({@code OrtTypeInfo}, {@code OrtTensorTypeAndShapeInfo}). */
final class Shapes {
    private Shapes() {}

    /** Reads and keeps a {@code const OrtTensorTypeAndShapeInfo*} (not released here). */
    static TensorInfo tensorInfo(MemorySegment typeAndShape) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment intOut = arena.allocate(JAVA_INT);
            Api.checkStatus(OrtApi.GetTensorElementType.invoke(Api.TypeInfo.GetTensorElementType, typeAndShape, intOut));
            OnnxTensorType type = OnnxTensorType.of(intOut.get(JAVA_INT, 0));
            MemorySegment countOut = arena.allocate(JAVA_LONG);
            Api.checkStatus(OrtApi.GetDimensionsCount.invoke(Api.TypeInfo.GetDimensionsCount, typeAndShape, countOut));
            int rank = Math.toIntExact(countOut.get(JAVA_LONG, 0));
            long[] dims = new long[rank];
            String[] names = new String[rank];
            if (rank > 0) {
                MemorySegment dimsOut = arena.allocate(JAVA_LONG, rank);
                Api.checkStatus(OrtApi.GetDimensions.invoke(Api.TypeInfo.GetDimensions, typeAndShape, dimsOut, rank));
                MemorySegment namesOut = arena.allocate(ADDRESS, rank);
                Api.checkStatus(OrtApi.GetSymbolicDimensions.invoke(Api.TypeInfo.GetSymbolicDimensions, typeAndShape, namesOut, rank));
                for (int i = 0; i < rank; i++) {
                    dims[i] = dimsOut.getAtIndex(JAVA_LONG, i);
                    MemorySegment name = namesOut.getAtIndex(ADDRESS, i);
                    names[i] = name.address() == 0 ? "" : name.reinterpret(Long.MAX_VALUE).getString(0);
                }
            }
            return new TensorInfo(type, dims, names);
        }
    }

    /** Reads an {@code OrtTypeInfo*} into a {@link NodeInfo} and releases the type info. */
    static NodeInfo nodeInfo(String name, MemorySegment typeInfo) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment intOut = arena.allocate(JAVA_INT);
            Api.checkStatus(OrtApi.GetOnnxTypeFromTypeInfo.invoke(Api.TypeInfo.GetOnnxTypeFromTypeInfo, typeInfo, intOut));
            OnnxValueType valueType = OnnxValueType.of(intOut.get(JAVA_INT, 0));
            TensorInfo tensor = null;
            if (valueType == OnnxValueType.TENSOR) {
                MemorySegment infoOut = arena.allocate(ADDRESS);
                Api.checkStatus(OrtApi.CastTypeInfoToTensorInfo.invoke(Api.TypeInfo.CastTypeInfoToTensorInfo, typeInfo, infoOut));
                // owned by the type info: not released separately
                tensor = tensorInfo(infoOut.get(ADDRESS, 0));
            }
            return new NodeInfo(name, valueType, tensor);
        } finally {
            OrtApi.ReleaseTypeInfo.invoke(Api.TypeInfo.ReleaseTypeInfo, typeInfo);
        }
    }
}
