package io.dataclay.exceptions;

/**
 * What kind of failure a {@link DataClayException} is. The constants are those of the protocol's
 * error code (proto/dataclay/v1/common.proto) without its "unspecified" zero value; only
 * {@code io.dataclay.rpc.GrpcErrors} maps between the two.
 */
public enum ErrorCode {
  /** Malformed request: the message says which field and why. */
  INVALID_ARGUMENT,
  /** Missing, unknown, closed or expired session; bad user or password. */
  NOT_AUTHENTICATED,
  /** Authenticated, but not allowed to do this. */
  PERMISSION_DENIED,
  /** The alias is already taken in its dataset. */
  ALIAS_ALREADY_EXISTS,
  /** No object has this alias. */
  ALIAS_DOES_NOT_EXIST,
  /** No such object anywhere (the Logic Module does not know it). */
  OBJECT_DOES_NOT_EXIST,
  /** This backend does not hold it: refresh the location and retry. */
  OBJECT_NOT_HERE,
  /** An object with this ID is already stored. */
  OBJECT_ALREADY_EXISTS,
  /** The class is not in any registered model. */
  CLASS_NOT_REGISTERED,
  /** The account name is already taken. */
  ACCOUNT_ALREADY_EXISTS,
  /** No account has this name. */
  ACCOUNT_DOES_NOT_EXIST,
  /** No dataset has this name. */
  DATASET_DOES_NOT_EXIST,
  /** A module or class already belongs to another namespace. */
  NAMESPACE_CONFLICT,
  /** No backend has this ID. */
  BACKEND_DOES_NOT_EXIST,
  /** The backend (or its execution environment) is down or restarting. */
  BACKEND_UNAVAILABLE,
  /** User code raised: see the remote type and message. */
  REMOTE_EXCEPTION,
  /** The backend's pool has no room; nothing was written. */
  STORE_FULL,
  /** consolidate_version on an object that is not a version. */
  NOT_A_VERSION,
  /** No such active method or field on the class. */
  METHOD_DOES_NOT_EXIST,
  /** State or arguments could not be decoded (or were refused as unsafe). */
  SERIALIZATION_ERROR,
  /** A bug or an unexpected failure: the message says what. */
  INTERNAL,
  /** A per-account limit says no: nothing was done. */
  QUOTA_EXCEEDED,
  /** A method ran past the backend's per-call deadline; its changes were not stored. */
  CALL_TIMED_OUT,
  /** Another account's call changed an object this call changed: nothing of it was stored; retry. */
  CONCURRENT_CHANGE
}
