package io.dataclay.exceptions;

import io.dataclay.proto.ErrorCode;

/** The backend or its execution environment is down or restarting. */
public class BackendUnavailableException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public BackendUnavailableException(String message) {
    super(ErrorCode.BACKEND_UNAVAILABLE, message);
  }
}
