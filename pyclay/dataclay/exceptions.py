"""The errors dataClay raises, all derived from DataClayException (the base's name in every dataClay
release; DataClayError is the same class). Each class is one protocol ErrorCode (`.code` is its name),
so a failure keeps its meaning across Java and Python servers and clients (docs/internals.md)."""
from __future__ import annotations


class DataClayException(Exception):
    """Base of every error the dataClay API raises; `.code` is the protocol ErrorCode name it travels as."""

    code: str = "INTERNAL"


DataClayError = DataClayException
"""The same class as DataClayException (this package's earlier name for it)."""


class DoesNotExistError(DataClayException):
    """Base of the "no such alias / object / account / dataset / backend" errors (dataClay 4's name)."""


class AlreadyExistError(DataClayException):
    """Base of the "alias / object / account already exists" errors (dataClay 4's name)."""


class InvalidArgumentError(DataClayException):
    """A malformed request or argument; the message says which one and why."""

    code = "INVALID_ARGUMENT"


class NotAuthenticatedError(DataClayException):
    """Missing, unknown, closed or expired session; or a wrong user or password."""

    code = "NOT_AUTHENTICATED"


class PermissionDeniedError(DataClayException):
    """Authenticated, but not allowed to do this."""

    code = "PERMISSION_DENIED"


class AliasAlreadyExistsError(AlreadyExistError):
    """The alias is already taken in that dataset."""

    code = "ALIAS_ALREADY_EXISTS"


class AliasDoesNotExistError(DoesNotExistError):
    """No object has that alias in that dataset."""

    code = "ALIAS_DOES_NOT_EXIST"


class ObjectDoesNotExistError(DoesNotExistError):
    """No such object anywhere."""

    code = "OBJECT_DOES_NOT_EXIST"


class ObjectNotHereError(DataClayException):
    """The backend asked does not hold the object (the caller refreshes its location)."""

    code = "OBJECT_NOT_HERE"


class ObjectAlreadyExistsError(AlreadyExistError):
    """An object with this ID is already stored."""

    code = "OBJECT_ALREADY_EXISTS"


class ClassNotRegisteredError(DataClayException):
    """The class is not part of any registered model (or cannot be loaded where needed)."""

    code = "CLASS_NOT_REGISTERED"


class AccountAlreadyExistsError(AlreadyExistError):
    """An account with that name exists."""

    code = "ACCOUNT_ALREADY_EXISTS"


class AccountDoesNotExistError(DoesNotExistError):
    """No account with that name."""

    code = "ACCOUNT_DOES_NOT_EXIST"


class DatasetDoesNotExistError(DoesNotExistError):
    """No dataset with that name."""

    code = "DATASET_DOES_NOT_EXIST"


class NamespaceConflictError(DataClayException):
    """A module or class already belongs to another namespace."""

    code = "NAMESPACE_CONFLICT"


class BackendDoesNotExistError(DoesNotExistError):
    """No backend with that ID is registered."""

    code = "BACKEND_DOES_NOT_EXIST"


class BackendUnavailableError(DataClayException):
    """The backend (or its execution environment) is down or restarting.

    `connect_failed` is True when the request surely never reached the server (the connection
    could not be made), so even a non-idempotent call may be sent again."""

    code = "BACKEND_UNAVAILABLE"

    def __init__(self, message: str = "", connect_failed: bool = False):
        super().__init__(message)
        self.connect_failed = connect_failed


class RemoteError(DataClayException):
    """User code raised in a backend and the exception's type cannot be rebuilt here.

    Carries the remote type name ("module.QualName"), its message, its pickled arguments and
    the remote traceback text."""

    code = "REMOTE_EXCEPTION"

    def __init__(self, remote_type: str, message: str, remote_args: bytes = b"", remote_traceback: str = ""):
        super().__init__(f"{remote_type}: {message}" if remote_type else message)
        self.remote_type = remote_type
        self.remote_message = message
        self.remote_args = remote_args
        self.remote_traceback = remote_traceback


class FieldNotSetError(RemoteError, AttributeError):
    """A persistent field read on a proxy has no value in the stored object (an object stored before the model
    declared the field, or one whose field was deleted): an AttributeError, so hasattr() and getattr(obj, name,
    default) work on proxies as on local objects."""


class StoreFullError(DataClayException):
    """The backend's pool has no room; nothing was written."""

    code = "STORE_FULL"


class NotAVersionError(DataClayException):
    """consolidate_version on an object that is not a version."""

    code = "NOT_A_VERSION"


class MethodDoesNotExistError(DataClayException):
    """No such active method or persistent field on the class."""

    code = "METHOD_DOES_NOT_EXIST"


class SerializationError(DataClayException):
    """A value could not be encoded or decoded, or was refused as unsafe."""

    code = "SERIALIZATION_ERROR"


class InternalError(DataClayException):
    """A bug or an unexpected failure; the message says what."""

    code = "INTERNAL"


class QuotaExceededError(DataClayException):
    """A per-account limit (calls in flight, objects, bytes, sessions) refused the request; nothing was done."""

    code = "QUOTA_EXCEEDED"


class CallTimedOutError(DataClayException):
    """A method ran past the backend's per-call deadline; none of its changes were stored."""

    code = "CALL_TIMED_OUT"


class ConcurrentChangeError(DataClayException):
    """Another account's call changed an object this call changed while it ran: nothing of it was stored; retry."""

    code = "CONCURRENT_CHANGE"


class ObjectNotPersistentError(DataClayException):
    """A persistent-only operation was called on a volatile object (client side)."""

    code = "INVALID_ARGUMENT"


AliasAlreadyExistError = AliasAlreadyExistsError
"""dataClay 4's name of AliasAlreadyExistsError."""
ObjectNotRegisteredError = ObjectNotPersistentError
"""dataClay 4's name of ObjectNotPersistentError."""
ObjectIsNotVersionError = NotAVersionError
"""dataClay 4's name of NotAVersionError."""


ERRORS_BY_CODE: dict[str, type[DataClayException]] = {
    cls.code: cls for cls in (
        InvalidArgumentError, NotAuthenticatedError, PermissionDeniedError, AliasAlreadyExistsError,
        AliasDoesNotExistError, ObjectDoesNotExistError, ObjectNotHereError, ObjectAlreadyExistsError,
        ClassNotRegisteredError, AccountAlreadyExistsError, AccountDoesNotExistError, DatasetDoesNotExistError,
        NamespaceConflictError, BackendDoesNotExistError, BackendUnavailableError, RemoteError, StoreFullError,
        NotAVersionError, MethodDoesNotExistError, SerializationError, InternalError, QuotaExceededError,
        CallTimedOutError, ConcurrentChangeError)
}
"""The class a protocol error code becomes (ObjectNotPersistentError is client-only, so absent)."""
