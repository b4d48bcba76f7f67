package io.dataclay.ds.environments;

/** What an execution environment is asked to do with an object. */
public enum ExecutionKind {
  /** Run an active method; the payload is the encoded arguments. */
  CALL_METHOD,
  /** Read a field; no payload. */
  GET_FIELD,
  /** Assign a field; the payload is the encoded value. */
  SET_FIELD
}
