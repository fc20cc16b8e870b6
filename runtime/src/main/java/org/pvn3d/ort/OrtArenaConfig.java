package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.CString;

/**
 * Settings for an ORT arena allocator ({@code OrtArenaCfg}, built with {@code CreateArenaCfgV2}),
 * e.g. for {@link OrtEnvironment#createAndRegisterAllocator(OrtMemoryInfo, OrtArenaConfig)}. A plain
 * Java value: the native configuration exists only for the call that uses it (ORT copies it). Keys
 * left unset keep ORT's defaults.
 */
public final class OrtArenaConfig {
    /** {@code arena_extend_strategy}. */
    public enum ExtendStrategy {
        NEXT_POWER_OF_TWO(0), SAME_AS_REQUESTED(1);

        final int value;

        ExtendStrategy(int value) {
            this.value = value;
        }
    }

    private final Map<String, Long> entries = new LinkedHashMap<>();

    /** No key set: ORT's defaults for all of them. */
    public OrtArenaConfig() {}

    /** {@code max_mem}: the most bytes the arena may hold (0: ORT's default, no limit). */
    public OrtArenaConfig setMaxMemory(long bytes) {
        return set("max_mem", bytes);
    }

    /** {@code arena_extend_strategy}. */
    public OrtArenaConfig setExtendStrategy(ExtendStrategy strategy) {
        return set("arena_extend_strategy", strategy.value);
    }

    /** {@code initial_chunk_size_bytes}: the size of the arena's first allocation. */
    public OrtArenaConfig setInitialChunkSize(long bytes) {
        return set("initial_chunk_size_bytes", bytes);
    }

    /** {@code max_dead_bytes_per_chunk}: unused bytes in a chunk above which it is split. */
    public OrtArenaConfig setMaxDeadBytesPerChunk(long bytes) {
        return set("max_dead_bytes_per_chunk", bytes);
    }

    /** {@code initial_growth_chunk_size_bytes}: the size of the second allocation (power-of-two strategy). */
    public OrtArenaConfig setInitialGrowthChunkSize(long bytes) {
        return set("initial_growth_chunk_size_bytes", bytes);
    }

    /** Any key {@code CreateArenaCfgV2} knows (ORT rejects unknown ones when the config is used). */
    public OrtArenaConfig set(String key, long value) {
        if (value < 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "arena setting " + key + " must not be negative: " + value);
        }
        entries.put(key, value);
        return this;
    }

    public Map<String, Long> entries() {
        return Map.copyOf(entries);
    }

    /** Creates the native {@code OrtArenaCfg} (released with {@code ReleaseArenaCfg} by the caller). */
    MemorySegment toNative(Arena arena) {
        int n = entries.size();
        MemorySegment keys = arena.allocate(ADDRESS, Math.max(1, n));
        MemorySegment values = arena.allocate(JAVA_LONG, Math.max(1, n));
        int i = 0;
        for (Map.Entry<String, Long> e : entries.entrySet()) {
            keys.setAtIndex(ADDRESS, i, CString.of(arena, e.getKey()));
            values.setAtIndex(JAVA_LONG, i, e.getValue());
            i++;
        }
        MemorySegment out = arena.allocate(ADDRESS);
        Api.checkStatus(OrtApi.CreateArenaCfgV2.invoke(Api.Allocator.CreateArenaCfgV2, keys, values, n, out), "CreateArenaCfgV2 " + entries);
        return out.get(ADDRESS, 0);
    }

    static void release(MemorySegment cfg) {
        if (cfg.address() != 0) {
            OrtApi.ReleaseArenaCfg.invoke(Api.Allocator.ReleaseArenaCfg, cfg);
        }
    }

    @Override
    public String toString() {
        return "OrtArenaConfig" + entries;
    }
}
