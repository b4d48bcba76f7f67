package io.dataclay.exceptions;

/** A per-account limit (calls in flight, objects, bytes, sessions) refused the request; nothing was done. */
public class QuotaExceededException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public QuotaExceededException(String message) {
    super(ErrorCode.QUOTA_EXCEEDED, message);
  }
}
