package org.pvn3d.ort.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.pvn3d.ort.jfr.OrtEvents;

/**
 * {@code --jfr FILE}: a recording with the JDK's "default" settings plus every event of this project
 * (no threshold), dumped to the file when the command ends. Loaded only when {@code --jfr} is given.
 */
final class JfrRecorder implements AutoCloseable {
    /** The pipeline's stage event (module org.pvn3d.ort.pipeline). */
    static final String STAGE_EVENT = "org.pvn3d.ort.PipelineStage";

    private final Recording recording;
    private final Path file;

    private JfrRecorder(Recording recording, Path file) {
        this.recording = recording;
        this.file = file;
    }

    static JfrRecorder start(Path file) {
        Recording r;
        try {
            r = new Recording(Configuration.getConfiguration("default"));
        } catch (IOException | ParseException e) {
            r = new Recording();
        }
        r.setName("pvn3d-ort");
        for (String name : OrtEvents.ALL) {
            r.enable(name).withThreshold(Duration.ZERO);
        }
        r.enable(STAGE_EVENT).withThreshold(Duration.ZERO);
        r.start();
        return new JfrRecorder(r, file);
    }

    @Override
    public void close() {
        try (recording) {
            recording.stop();
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                java.nio.file.Files.createDirectories(parent);
            }
            Io.writeAtomically(file, recording::dump); // a dump that fails halfway leaves no half a recording
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the JFR recording " + file, e); // Errors.describe adds why
        }
    }
}
