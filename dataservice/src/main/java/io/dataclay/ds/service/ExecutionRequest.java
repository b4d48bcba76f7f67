package io.dataclay.ds.service;

import java.util.Objects;
import java.util.UUID;

/**
 * One piece of work for an execution environment.
 *
 * @param session the caller's validated session (its dataset receives objects the call creates)
 * @param name the method or field name
 * @param payload encoded arguments (methods) or value (SET_FIELD); empty for GET_FIELD
 */
public record ExecutionRequest(
    Session session, UUID objectId, String className, ExecutionKind kind, String name, byte[] payload) {
  /** Validates the parts are present. */
  public ExecutionRequest {
    Objects.requireNonNull(session, "session");
    Objects.requireNonNull(objectId, "objectId");
    Objects.requireNonNull(className, "className");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(payload, "payload");
  }
}
