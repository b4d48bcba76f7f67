package io.dataclay.exceptions;

/** The class is not part of any registered model. */
public class ClassNotRegisteredException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public ClassNotRegisteredException(String message) {
    super(ErrorCode.CLASS_NOT_REGISTERED, message);
  }
}
