package org.pvn3d.ort.internal;

/**
 * Something session options keep for the sessions created from them (a custom-operator domain's
 * hold, say) that wants to follow those sessions: each session {@link #attach()}es when it is created
 * and closes what that returns when it is closed, and calls {@link #afterRun()} after each successful
 * run, where errors known only once the run's device work finished are reported (the run then fails
 * with that exception, its outputs released). The options close their dependencies that are
 * {@link AutoCloseable} when they are closed themselves.
 */
public interface SessionDependency {
    /** A session created from the options starts using this dependency until it closes what this returns. */
    AutoCloseable attach();

    /** A run of such a session succeeded; throw an {@code OrtException} to fail it after all. */
    default void afterRun() {}
}
