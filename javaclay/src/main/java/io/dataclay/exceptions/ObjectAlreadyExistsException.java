package io.dataclay.exceptions;

/** An object with this ID is already stored. */
public class ObjectAlreadyExistsException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public ObjectAlreadyExistsException(String message) {
    super(ErrorCode.OBJECT_ALREADY_EXISTS, message);
  }
}
