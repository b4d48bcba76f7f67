package io.dataclay.exceptions;

/** No backend has this ID. */
public class BackendDoesNotExistException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public BackendDoesNotExistException(String message) {
    super(ErrorCode.BACKEND_DOES_NOT_EXIST, message);
  }
}
