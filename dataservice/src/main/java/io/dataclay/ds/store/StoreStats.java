package io.dataclay.ds.store;

/**
 * What a store reports about itself.
 *
 * @param engine kv | heap | 2lm | postgres | memory
 * @param durability the engine's promise, in words, for `dataclay status`
 * @param capacityBytes pool size, 0 when unbounded or unknown
 * @param encrypted whether field values are encrypted in the pool (a key file was configured)
 */
public record StoreStats(
    String engine, String durability, String path, long capacityBytes, long usedBytes, long objects, boolean encrypted) {}
