package io.dataclay.exceptions;

/** The backend's pool has no room; nothing was written. */
public class StoreFullException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public StoreFullException(String message) {
    super(ErrorCode.STORE_FULL, message);
  }
}
