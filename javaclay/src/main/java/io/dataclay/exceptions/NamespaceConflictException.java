package io.dataclay.exceptions;

/** A module or class already belongs to another namespace. */
public class NamespaceConflictException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public NamespaceConflictException(String message) {
    super(ErrorCode.NAMESPACE_CONFLICT, message);
  }
}
