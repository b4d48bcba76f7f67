package io.dataclay.exceptions;

/** A method ran past the backend's per-call deadline; none of its changes were stored. */
public class CallTimedOutException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public CallTimedOutException(String message) {
    super(ErrorCode.CALL_TIMED_OUT, message);
  }
}
