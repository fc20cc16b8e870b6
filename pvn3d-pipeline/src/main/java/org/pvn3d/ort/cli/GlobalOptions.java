package org.pvn3d.ort.cli;

import picocli.CommandLine.Option;

/** The option every command takes. */
final class GlobalOptions {
    static final String DEBUG = "--debug";

    @Option(names = DEBUG, description = "On an error, also print the Java stack trace.")
    boolean debug;
}
