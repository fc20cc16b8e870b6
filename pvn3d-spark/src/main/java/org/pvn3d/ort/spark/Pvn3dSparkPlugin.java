package org.pvn3d.ort.spark;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Closes the executor's cached sessions when the executor shuts down ({@link SessionCache#closeAll()}).
 * Enable it with {@code spark.plugins=org.pvn3d.ort.spark.Pvn3dSparkPlugin} (the {@code pvn3d-spark} entry
 * point adds it); without it a JVM shutdown hook closes them.
 */
public final class Pvn3dSparkPlugin implements SparkPlugin {
    @Override
    public DriverPlugin driverPlugin() {
        return null;
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new ExecutorPlugin() {
            @Override
            public void shutdown() {
                SessionCache.closeAll();
            }
        };
    }
}
