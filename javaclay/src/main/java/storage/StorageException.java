package storage;

/** A failure of the storage runtime interface, as COMPSs' storage API declares it; the dataClay error is its cause. */
public class StorageException extends Exception {
  private static final long serialVersionUID = 1L;

  /** An error without a message. */
  public StorageException() {
    super();
  }

  /** An error that says what is wrong. */
  public StorageException(String message) {
    super(message);
  }

  /** An error that says what is wrong, caused by {@code cause}. */
  public StorageException(String message, Exception cause) {
    super(message, cause);
  }

  /** An error caused by {@code cause} (its message becomes this one's). */
  public StorageException(Exception cause) {
    super(cause);
  }
}
