package io.dataclay.exceptions;

/** An account with this name already exists. */
public class AccountAlreadyExistsException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public AccountAlreadyExistsException(String message) {
    super(ErrorCode.ACCOUNT_ALREADY_EXISTS, message);
  }
}
