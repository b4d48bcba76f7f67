package io.dataclay.exceptions;

/** Base of every dataClay error; carries the code of its kind, which it travels as on the wire. */
public class DataClayException extends RuntimeException {
  private final ErrorCode code;

  /** An error of the given code with a message that says what is wrong. */
  public DataClayException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  /** An error of the given code caused by another throwable. */
  public DataClayException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /** The kind of error this is (the wire code it is sent as is GrpcErrors' business). */
  public ErrorCode code() {
    return code;
  }
}
