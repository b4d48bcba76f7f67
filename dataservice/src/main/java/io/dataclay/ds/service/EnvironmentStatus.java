package io.dataclay.ds.service;

import io.dataclay.common.Language;

/**
 * An execution environment's state, for GetStatus.
 *
 * @param alive ready to run calls now
 * @param pid its process ID (0 when in-process or not running)
 * @param restarts how many times it was restarted since the Data Service started
 * @param calls requests sent to it since the Data Service started
 */
public record EnvironmentStatus(Language language, boolean alive, long pid, int restarts, long calls) {}
