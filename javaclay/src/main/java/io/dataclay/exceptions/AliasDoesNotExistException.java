package io.dataclay.exceptions;

/** No object has this alias in the dataset. */
public class AliasDoesNotExistException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public AliasDoesNotExistException(String message) {
    super(ErrorCode.ALIAS_DOES_NOT_EXIST, message);
  }
}
