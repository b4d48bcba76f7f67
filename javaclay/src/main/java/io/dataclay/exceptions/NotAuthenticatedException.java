package io.dataclay.exceptions;

/** No valid session: missing, unknown, closed or expired token, or a bad user or password. */
public class NotAuthenticatedException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public NotAuthenticatedException(String message) {
    super(ErrorCode.NOT_AUTHENTICATED, message);
  }
}
