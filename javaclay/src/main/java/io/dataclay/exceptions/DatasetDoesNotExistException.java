package io.dataclay.exceptions;

/** No dataset has this name. */
public class DatasetDoesNotExistException extends DataClayException {
  /** Creates the error with a message that says what is wrong. */
  public DatasetDoesNotExistException(String message) {
    super(ErrorCode.DATASET_DOES_NOT_EXIST, message);
  }
}
