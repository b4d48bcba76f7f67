package io.dataclay.exceptions;

/** Another account's call changed an object this call changed while it ran: nothing of it was stored; retry. */
public class ConcurrentChangeException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public ConcurrentChangeException(String message) {
    super(ErrorCode.CONCURRENT_CHANGE, message);
  }
}
