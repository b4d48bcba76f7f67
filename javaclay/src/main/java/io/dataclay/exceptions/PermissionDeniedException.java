package io.dataclay.exceptions;

/** The session is valid but may not do this. */
public class PermissionDeniedException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public PermissionDeniedException(String message) {
    super(ErrorCode.PERMISSION_DENIED, message);
  }
}
