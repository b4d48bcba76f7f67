package io.dataclay.logic.events;

import java.util.Objects;

/**
 * Something that happened to the cluster as a whole (GetStats' history): when, of which {@code
 * kind}, to which backend ({@code backendId}, empty for a garbage collection), how many objects it
 * concerned, the backend's failover term after it (promotions only, else 0), and a line for people.
 */
public record ClusterEvent(long atMs, String kind, String backendId, long objects, long term, String detail) {
  /** A garbage collection ran: objects are those it collected, the detail says how many it examined and who ran it. */
  public static final String GC = "gc";
  /** A backend was first seen silent past the liveness timeout. */
  public static final String BACKEND_SILENT = "backend-silent";
  /** A backend that was silent answered again. */
  public static final String BACKEND_BACK = "backend-back";
  /** Replicas of a lost backend's objects were promoted to masters; term is its new term. */
  public static final String PROMOTED = "promoted";
  /** Replicas of a backend's objects, lost with it, were copied again. */
  public static final String REPLICAS_RESTORED = "replicas-restored";

  /** Requires every text part (empty when it does not apply). */
  public ClusterEvent {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(backendId, "backendId");
    Objects.requireNonNull(detail, "detail");
  }
}
