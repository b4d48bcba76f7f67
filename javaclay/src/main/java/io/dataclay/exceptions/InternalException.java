package io.dataclay.exceptions;

/** An unexpected failure inside dataClay. */
public class InternalException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public InternalException(String message) {
    super(ErrorCode.INTERNAL, message);
  }
}
