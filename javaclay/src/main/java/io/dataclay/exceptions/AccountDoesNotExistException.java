package io.dataclay.exceptions;

/** No account has this name. */
public class AccountDoesNotExistException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public AccountDoesNotExistException(String message) {
    super(ErrorCode.ACCOUNT_DOES_NOT_EXIST, message);
  }
}
