package io.dataclay.client;

import io.dataclay.api.StoredObject;

/**
 * What a NewVersion call made: the version (its own ID; {@code versionOf} names the original) and
 * the serialised bytes sent to another backend for it.
 */
public record NewVersion(StoredObject version, long bytesSent) {}
