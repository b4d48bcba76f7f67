package io.dataclay.logic.collection;

/**
 * The outcome of one garbage collection.
 *
 * @param collected objects removed from their backends and from the metadata
 * @param examined objects of the snapshot the collection looked at
 */
public record CollectionResult(long collected, long examined, long durationMs) {}
