package io.dataclay.exceptions;

/** The backend asked does not hold the object: refresh its location and retry. */
public class ObjectNotHereException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public ObjectNotHereException(String message) {
    super(ErrorCode.OBJECT_NOT_HERE, message);
  }
}
