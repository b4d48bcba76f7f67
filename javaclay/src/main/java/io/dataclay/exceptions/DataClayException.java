package io.dataclay.exceptions;

import io.dataclay.proto.ErrorCode;

/** Base of every dataClay error; carries the protocol error code it travels as. */
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

  /** The protocol code this error is sent as. */
  public ErrorCode code() {
    return code;
  }
}
