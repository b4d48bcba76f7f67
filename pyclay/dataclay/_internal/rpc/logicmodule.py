"""The one wrapper around the Logic Module's generated stub (mirrors Java's LogicModuleClient).
Calls carry the session token as metadata; failures raise dataclay.exceptions classes; results
are protobuf messages."""
from __future__ import annotations

import functools

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.proto import common_pb2, logicmodule_pb2 as lm_pb2, logicmodule_pb2_grpc
from dataclay._internal.rpc.calls import build, check_timeout, unary
from dataclay._internal.rpc.tls import ClusterCa
from dataclay._internal.rpc.channels import ConnectionTarget, session_metadata

_EMPTY = common_pb2.Empty()


class LogicModuleClient:
    """A client of the Logic Module at `address` (on `channel` if given, which it then does not own);
    `token` (settable) is the session it acts in. `tls` is the cluster CA (None: plaintext) and
    `server_name` the name the server's certificate must carry (default: the host of `address`)."""

    def __init__(self, address: str, token: str | None = None, *, channel=None, tls: ClusterCa | None = None,
                 server_name: str | None = None):
        self.address = address
        self._target = ConnectionTarget(address, tls, server_name)
        self._owns_channel = channel is None
        self._channel = self._target.open() if channel is None else channel
        self._unary = functools.partial(unary, target=self._target)
        self._stub = logicmodule_pb2_grpc.LogicModuleStub(self._channel)
        self.token = token

    @property
    def token(self) -> str | None:
        """The session token sent with every call (None: no session)."""
        return self._token

    @token.setter
    def token(self, value: str | None) -> None:
        self._metadata = session_metadata(value)
        self._token = value

    def with_token(self, token: str | None) -> "LogicModuleClient":
        """A client sharing this one's channel and stub but acting in another session; its close() does nothing."""
        sibling = object.__new__(LogicModuleClient)
        sibling.__dict__.update(self.__dict__)
        sibling._owns_channel = False
        sibling.token = token
        return sibling

    def health(self, timeout: float = 5.0) -> str:
        """The Logic Module's version, if it answers within `timeout` seconds."""
        return self._unary(self._stub.Health, _EMPTY, (), check_timeout(timeout)).version

    def new_session(self, user: str, password: str, dataset: str = "") -> lm_pb2.SessionInfo:
        """Opens a session (the token is in the answer); `dataset` empty means the user's own."""
        request = build(lm_pb2.NewSessionRequest, "new_session", username=user, password=password,
                        dataset=dataset or "")
        return self._unary(self._stub.NewSession, request, ())

    def close_session(self, timeout: float | None = None) -> None:
        """Closes the session this client acts in."""
        self._unary(self._stub.CloseSession, _EMPTY, self._metadata, check_timeout(timeout))

    def new_account(self, user: str, password: str, admin: bool = False) -> None:
        """Creates an account (administrators only)."""
        request = build(lm_pb2.NewAccountRequest, "new_account", username=user, password=password, admin=admin)
        self._unary(self._stub.NewAccount, request, self._metadata)

    def new_data_contract(self, dataset: str, beneficiary: str, read_only: bool = False,
                          begins_at_ms: int = 0, expires_at_ms: int = 0) -> None:
        """Grants `beneficiary` access to `dataset` (created for the caller if needed): read-write, or
        read-only; from `begins_at_ms` (0: now) until `expires_at_ms` (0: never), epoch milliseconds.
        Granting again replaces the earlier terms."""
        request = build(lm_pb2.NewDataContractRequest, "new_data_contract", dataset=dataset,
                        beneficiary=beneficiary, read_only=read_only, begins_at_ms=begins_at_ms,
                        expires_at_ms=expires_at_ms)
        self._unary(self._stub.NewDataContract, request, self._metadata)

    def revoke_data_contract(self, dataset: str, beneficiary: str) -> None:
        """Takes back `beneficiary`'s contract on a dataset the caller owns."""
        request = build(lm_pb2.RevokeDataContractRequest, "revoke_data_contract", dataset=dataset,
                        beneficiary=beneficiary)
        self._unary(self._stub.RevokeDataContract, request, self._metadata)

    def list_data_contracts(self) -> list:
        """The contracts (DataContract) on the caller's datasets, then those granted to it."""
        return list(self._unary(self._stub.ListDataContracts, _EMPTY, self._metadata).contracts)

    def set_model_registration(self, user: str, allowed: bool) -> None:
        """Lets an account register models, or stops it (administrators only)."""
        request = build(lm_pb2.SetModelRegistrationRequest, "set_model_registration", username=user,
                        allowed=allowed)
        self._unary(self._stub.SetModelRegistration, request, self._metadata)

    def register_model(self, model: lm_pb2.Model) -> None:
        """Registers (or updates) a model; the Logic Module deploys it to every live backend."""
        self._unary(self._stub.RegisterModel, _message(model, lm_pb2.Model, "model"), self._metadata)

    def get_model(self, namespace: str) -> lm_pb2.Model:
        """The registered model of a namespace."""
        return self._unary(self._stub.GetModel, build(lm_pb2.GetModelRequest, "get_model", namespace=namespace),
                     self._metadata)

    def list_models(self, language: int = common_pb2.LANGUAGE_UNSPECIFIED) -> list:
        """Every registered model of a language (LANGUAGE_UNSPECIFIED: all)."""
        request = build(lm_pb2.ListModelsRequest, "list_models", language=language)
        return list(self._unary(self._stub.ListModels, request, self._metadata).models)

    def get_backends(self, timeout: float | None = None) -> list:
        """Every registered backend (BackendInfo) with its liveness."""
        return list(self._unary(self._stub.GetBackends, _EMPTY, self._metadata, check_timeout(timeout)).backends)

    def register_objects(self, objects: list, alias: str = "", alias_object_id: str = "") -> None:
        """Registers stored objects (ObjectInfo) and optionally an alias, in one transaction."""
        request = build(lm_pb2.RegisterObjectsRequest, "register_objects", objects=objects, alias=alias or "",
                        alias_object_id=alias_object_id or "")
        self._unary(self._stub.RegisterObjects, request, self._metadata)

    def get_object_info(self, object_id: str, timeout: float | None = None) -> common_pb2.ObjectInfo:
        """Class, dataset, master and replica locations and aliases of an object."""
        return self._unary(self._stub.GetObjectInfo, build(lm_pb2.ObjectIdRequest, "get_object_info", id=object_id),
                     self._metadata, check_timeout(timeout))

    def get_object_by_alias(self, alias: str, dataset: str = "") -> common_pb2.ObjectInfo:
        """The object with an alias; `dataset` empty means the session's dataset."""
        request = build(lm_pb2.AliasRequest, "get_object_by_alias", alias=alias, dataset=dataset or "")
        return self._unary(self._stub.GetObjectByAlias, request, self._metadata)

    def new_alias(self, alias: str, object_id: str) -> None:
        """Gives an existing object an alias in its dataset."""
        request = build(lm_pb2.NewAliasRequest, "new_alias", alias=alias, object_id=object_id)
        self._unary(self._stub.NewAlias, request, self._metadata)

    def delete_alias(self, alias: str, dataset: str = "") -> None:
        """Removes an alias; `dataset` empty means the session's dataset."""
        request = build(lm_pb2.AliasRequest, "delete_alias", alias=alias, dataset=dataset or "")
        self._unary(self._stub.DeleteAlias, request, self._metadata)

    def get_stats(self) -> lm_pb2.LogicModuleStats:
        """Per-RPC call counters and object, alias and session totals."""
        return self._unary(self._stub.GetStats, _EMPTY, self._metadata)

    def collect_garbage(self, timeout: float | None = None) -> lm_pb2.GarbageReport:
        """Runs a garbage collection now (administrators); BackendUnavailableError when it was abandoned."""
        return self._unary(self._stub.CollectGarbage, _EMPTY, self._metadata, check_timeout(timeout))

    def close(self) -> None:
        """Closes the channel (if this client opened it)."""
        if self._owns_channel:
            self._channel.close()


def _message(value, message_type, what: str):
    if not isinstance(value, message_type):
        raise InvalidArgumentError(f"{what} must be a {message_type.DESCRIPTOR.full_name}, "
                                   f"not {type(value).__name__}")
    return value
