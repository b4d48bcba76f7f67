package io.dataclay.exceptions;

/**
 * User code raised an exception inside a backend. Carries the remote type name, its
 * encoded arguments and the remote traceback; clients rethrow the original type when
 * they can rebuild it and this otherwise.
 */
public class RemoteException extends DataClayException {
  private final String remoteType;
  private final byte[] remoteArgs;
  private final String remoteTraceback;

  /** A remote failure of {@code remoteType} with its message, encoded args and traceback. */
  public RemoteException(String remoteType, String message, byte[] remoteArgs, String remoteTraceback) {
    super(ErrorCode.REMOTE_EXCEPTION, remoteType + ": " + message);
    this.remoteType = remoteType;
    this.remoteArgs = remoteArgs == null ? new byte[0] : remoteArgs;
    this.remoteTraceback = remoteTraceback == null ? "" : remoteTraceback;
  }

  /** Fully qualified type name of the exception in its language. */
  public String remoteType() {
    return remoteType;
  }

  /** The exception's arguments, encoded by its language's serialiser; may be empty. */
  public byte[] remoteArgs() {
    return remoteArgs.clone();
  }

  /** The remote traceback as text. */
  public String remoteTraceback() {
    return remoteTraceback;
  }

  /** The remote message without the type prefix. */
  public String remoteMessage() {
    String m = getMessage();
    return m.substring(Math.min(m.length(), remoteType.length() + 2));
  }
}
