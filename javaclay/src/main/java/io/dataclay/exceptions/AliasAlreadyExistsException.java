package io.dataclay.exceptions;

/** The alias is already taken in the dataset. */
public class AliasAlreadyExistsException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public AliasAlreadyExistsException(String message) {
    super(ErrorCode.ALIAS_ALREADY_EXISTS, message);
  }
}
