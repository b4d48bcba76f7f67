package io.dataclay.exceptions;

/** No object has this ID. */
public class ObjectDoesNotExistException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public ObjectDoesNotExistException(String message) {
    super(ErrorCode.OBJECT_DOES_NOT_EXIST, message);
  }
}
