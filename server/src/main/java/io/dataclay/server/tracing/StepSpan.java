package io.dataclay.server.tracing;

import java.util.Map;

/**
 * A step an execution environment reports it timed for a traced call (its EnvironmentSpan), as
 * sent: nothing in it is trusted until {@link EnvironmentStep#end} has checked it.
 *
 * @param name what the step did
 * @param startUnixNano when it started, in nanoseconds since the epoch (the node's clock)
 * @param endUnixNano when it ended
 * @param attributes its attributes
 * @param error non-empty when the step failed: the exception's type and message
 * @param parent 0: a child of the Data Service's span for the call; n: of the n-th step reported
 */
public record StepSpan(String name, long startUnixNano, long endUnixNano, Map<String, String> attributes,
    String error, int parent) {}
