package com.example.consumer;

import java.util.List;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.pipeline.ParityReport;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * A program compiled on the class path, as most users compile, that refers to the library's methods
 * through method references ({@code OnnxTensor::close} and the like). javac names the class that
 * declares the method in such a call site, so that class must be one the library's module exports.
 * {@link ModulePathTest} runs it with the library's jars on the module path; it prints "ok" at the end.
 */
public final class ModulePathProbe {
    private ModulePathProbe() {}

    public static void main(String[] args) {
        List<OnnxTensor> tensors = List.of(OnnxTensor.createTensor(new float[] {1, 2, 3}, 3), OnnxTensor.createTensor(new float[] {4}, 1));
        tensors.stream().map(OnnxTensor::toString).forEach(System.out::println);
        tensors.forEach(OnnxTensor::close);
        if (!tensors.stream().allMatch(OnnxTensor::isClosed)) {
            throw new AssertionError("a tensor is still open");
        }
        List.of(new SessionOptions()).forEach(SessionOptions::close);

        // the shipped model end to end: the native libraries and the model come out of the jars on the module path
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        try (Pvn3dPipeline pipeline = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu())) {
            Pvn3dPipeline.Result result = pipeline.run(sample);
            ParityReport report = ParityReport.compare(result, Pvn3dPipeline.tinyExpected(), sample, "cpu", Pvn3dPipeline.MODEL_RESOURCE);
            if (!report.passes()) {
                throw new AssertionError(report.summary());
            }
        }
        System.out.println("module " + OnnxTensor.class.getModule().getName());
        System.out.println("ok");
    }
}
