package io.dataclay.exceptions;

/** The object is not a version, so it cannot be consolidated. */
public class NotAVersionException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public NotAVersionException(String message) {
    super(ErrorCode.NOT_A_VERSION, message);
  }
}
