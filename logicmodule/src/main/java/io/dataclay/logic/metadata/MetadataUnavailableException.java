package io.dataclay.logic.metadata;

/** The metadata database cannot be opened (bad URL, unreachable server, unwritable file, newer schema). */
public final class MetadataUnavailableException extends RuntimeException {
  /** The failure, with a message that names the database (without credentials) and the cause. */
  public MetadataUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
