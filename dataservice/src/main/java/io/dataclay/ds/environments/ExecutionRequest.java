package io.dataclay.ds.environments;

import io.dataclay.ds.session.Session;
import java.util.Objects;
import java.util.UUID;

/**
 * One piece of work for an execution environment.
 *
 * @param session the caller's validated session (its dataset receives objects the call creates)
 * @param name the method or field name
 * @param payload encoded arguments (methods) or value (SET_FIELD); empty for GET_FIELD
 * @param nested made by model code inside a backend (it does not wait for its object's turn)
 */
public record ExecutionRequest(
    Session session, UUID objectId, String className, ExecutionKind kind, String name, byte[] payload,
    boolean nested) {
  /** A request made by a client (not nested). */
  public ExecutionRequest(Session session, UUID objectId, String className, ExecutionKind kind, String name,
      byte[] payload) {
    this(session, objectId, className, kind, name, payload, false);
  }

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
