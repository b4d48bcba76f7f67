package io.dataclay.exceptions;

/** State or arguments could not be decoded, or were refused as unsafe. */
public class SerializationException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public SerializationException(String message) {
    super(ErrorCode.SERIALIZATION_ERROR, message);
  }
}
