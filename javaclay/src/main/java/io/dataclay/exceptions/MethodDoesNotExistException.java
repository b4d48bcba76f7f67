package io.dataclay.exceptions;

/** The class has no such active method or field. */
public class MethodDoesNotExistException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public MethodDoesNotExistException(String message) {
    super(ErrorCode.METHOD_DOES_NOT_EXIST, message);
  }
}
