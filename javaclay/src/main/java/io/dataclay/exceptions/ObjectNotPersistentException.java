package io.dataclay.exceptions;

/** A persistent-only operation was called on an object that is not persistent (client side). */
public class ObjectNotPersistentException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public ObjectNotPersistentException(String message) {
    super(ErrorCode.INVALID_ARGUMENT, message);
  }
}
