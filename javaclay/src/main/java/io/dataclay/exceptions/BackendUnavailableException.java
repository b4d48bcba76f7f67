package io.dataclay.exceptions;

/** The backend or its execution environment is down or restarting. */
public class BackendUnavailableException extends DataClayException {
  private final boolean connectFailed;

  /** Creates the error with a message that says what is wrong. */
  public BackendUnavailableException(String message) {
    this(message, false);
  }

  /**
   * Creates the error; {@code connectFailed} when the request surely never reached the server (no
   * connection could be made), so that sending it again cannot run it twice.
   */
  public BackendUnavailableException(String message, boolean connectFailed) {
    super(ErrorCode.BACKEND_UNAVAILABLE, message);
    this.connectFailed = connectFailed;
  }

  /** True when the request never reached the server: resending it is safe even if it changes state. */
  public boolean connectFailed() {
    return connectFailed;
  }
}
