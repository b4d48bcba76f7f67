package io.dataclay.exceptions;

/** A request field is missing or malformed; nothing was changed. */
public class InvalidArgumentException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public InvalidArgumentException(String message) {
    super(ErrorCode.INVALID_ARGUMENT, message);
  }
}
