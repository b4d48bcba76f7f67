package io.dataclay.ds.store;

/**
 * A figure only some engines have (2lm's cache hits), exported as a metric under {@code name},
 * which stays the same for the life of the store.
 *
 * @param counter whether it only grows (a Prometheus counter; the name then lacks "_total")
 */
public record EngineFigure(String name, String help, boolean counter, double value) {}
