"""The protocol wrappers: error mapping in both directions over real gRPC calls, session
metadata, and input checks."""
import socket
import time

import grpc
import pytest

from dataclay import exceptions
from dataclay.exceptions import (
    AliasAlreadyExistsError, BackendUnavailableError, InternalError, InvalidArgumentError, NotAuthenticatedError,
    RemoteError)
from dataclay._internal.proto import common_pb2, logicmodule_pb2, logicmodule_pb2_grpc
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from dataclay._internal.rpc.errors import ERROR_TRAILER, error_from_info, error_info_for, status_code_for
from peers import DataServicePeer, LogicModulePeer, start_server

ALL_ERRORS = [cls for cls in vars(exceptions).values()
              if isinstance(cls, type) and issubclass(cls, exceptions.DataClayException)
              and not issubclass(cls, RemoteError)  # built from the remote type, not by the wire code
              and cls not in (exceptions.DataClayException, exceptions.ObjectNotPersistentError,
                              exceptions.DoesNotExistError, exceptions.AlreadyExistError)]


@pytest.fixture
def lm():
    peer = LogicModulePeer()
    yield peer
    peer.stop()


@pytest.fixture
def ds(lm):
    peer = DataServicePeer(lm)
    yield peer
    peer.stop()


def session_client(cls, address, lm):
    token = LogicModuleClient(lm.address).new_session("alice", "secret").token
    return cls(address, token)


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_every_error_class_survives_a_round_trip_through_error_info(cls):
    info = error_info_for(cls("what went wrong"))
    back = error_from_info(common_pb2.ErrorInfo.FromString(info.SerializeToString()))
    assert type(back) is cls and str(back) == "what went wrong"
    assert common_pb2.ErrorCode.Name(info.code) == cls.code


def test_status_codes_follow_the_internals_table():
    table = {"INVALID_ARGUMENT": "INVALID_ARGUMENT", "NOT_AUTHENTICATED": "UNAUTHENTICATED",
             "ALIAS_DOES_NOT_EXIST": "NOT_FOUND", "OBJECT_ALREADY_EXISTS": "ALREADY_EXISTS",
             "BACKEND_UNAVAILABLE": "UNAVAILABLE", "STORE_FULL": "RESOURCE_EXHAUSTED",
             "OBJECT_NOT_HERE": "FAILED_PRECONDITION", "REMOTE_EXCEPTION": "UNKNOWN",
             "METHOD_DOES_NOT_EXIST": "NOT_FOUND", "SERIALIZATION_ERROR": "INVALID_ARGUMENT", "INTERNAL": "INTERNAL"}
    assert {code: status_code_for(code).name for code in table} == table


def test_error_raised_by_a_server_reaches_the_client_as_its_class(lm, ds):
    ds.fail_with = AliasAlreadyExistsError("alias 'x' already exists")
    client = session_client(DataServiceClient, ds.address, lm)
    with pytest.raises(AliasAlreadyExistsError, match="alias 'x' already exists"):
        client.get_field("00000000-0000-4000-8000-000000000000", "f")


def test_remote_exception_keeps_type_args_and_traceback_across_the_wire(lm, ds):
    ds.fail_with = RemoteError("builtins.ValueError", "boom", b"\x80\x05\x95", "Traceback: line 1")
    client = session_client(DataServiceClient, ds.address, lm)
    with pytest.raises(RemoteError) as caught:
        client.set_field("00000000-0000-4000-8000-000000000000", "f", b"")
    error = caught.value
    assert (error.remote_type, error.remote_message, error.remote_args, error.remote_traceback) == \
        ("builtins.ValueError", "boom", b"\x80\x05\x95", "Traceback: line 1")


class _BareStatus(logicmodule_pb2_grpc.LogicModuleServicer):
    """Fails Health with a plain status (no dataClay trailer), or a garbled trailer."""

    code = grpc.StatusCode.NOT_FOUND
    garbled = False

    def Health(self, request, context):
        if self.garbled:
            context.set_trailing_metadata(((ERROR_TRAILER, b"\xff\xff not an ErrorInfo"),))
        context.abort(self.code, "plain failure")


@pytest.fixture
def bare():
    servicer = _BareStatus()
    server, port = start_server(lambda s: logicmodule_pb2_grpc.add_LogicModuleServicer_to_server(servicer, s))
    yield servicer, LogicModuleClient(f"127.0.0.1:{port}")
    server.stop(0)


@pytest.mark.parametrize("code, expected", [
    (grpc.StatusCode.UNAVAILABLE, BackendUnavailableError), (grpc.StatusCode.UNAUTHENTICATED, NotAuthenticatedError),
    (grpc.StatusCode.NOT_FOUND, InternalError), (grpc.StatusCode.INVALID_ARGUMENT, InternalError),
])
def test_status_without_trailer_maps_by_code(bare, code, expected):
    servicer, client = bare
    servicer.code = code
    with pytest.raises(expected, match="plain failure") as caught:
        client.health(timeout=5)
    if expected is BackendUnavailableError:
        assert caught.value.connect_failed is False


def test_garbled_trailer_is_an_internal_error(bare):
    servicer, client = bare
    servicer.garbled = True
    with pytest.raises(InternalError, match="undecodable error detail"):
        client.health(timeout=5)


def test_connection_refused_is_backend_unavailable_and_surely_not_sent():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = DataServiceClient(f"127.0.0.1:{port}", "token")
    with pytest.raises(BackendUnavailableError) as caught:
        client.call_method("00000000-0000-4000-8000-000000000000", "m", b"")
    assert caught.value.connect_failed is True


def test_deadline_is_backend_unavailable_but_maybe_sent():
    class Slow(logicmodule_pb2_grpc.LogicModuleServicer):
        def Health(self, request, context):
            time.sleep(1)
            return logicmodule_pb2.HealthResponse(version="late")

    server, port = start_server(lambda s: logicmodule_pb2_grpc.add_LogicModuleServicer_to_server(Slow(), s))
    try:
        with pytest.raises(BackendUnavailableError) as caught:
            LogicModuleClient(f"127.0.0.1:{port}").health(timeout=0.1)
        assert caught.value.connect_failed is False
    finally:
        server.stop(0)


def test_session_token_travels_as_metadata_and_can_be_changed(lm):
    client = LogicModuleClient(lm.address)
    with pytest.raises(NotAuthenticatedError):
        client.get_backends()
    client.token = client.new_session("alice", "secret").token
    assert client.get_backends() == []
    other = client.with_token("bogus")
    with pytest.raises(NotAuthenticatedError):
        other.get_backends()
    other.close()
    assert client.get_backends() == []


def test_wrongly_typed_arguments_are_invalid_argument_naming_the_call(lm):
    client = LogicModuleClient(lm.address)
    with pytest.raises(InvalidArgumentError, match="new_session"):
        client.new_session("alice", 42)
    with pytest.raises(InvalidArgumentError, match="timeout"):
        client.health(timeout=-1)
    with pytest.raises(InvalidArgumentError, match="host:port"):
        LogicModuleClient("no-port-here")
    with pytest.raises(InvalidArgumentError, match="model"):
        client.register_model("not a model")
    ds = DataServiceClient(lm.address)
    with pytest.raises(InvalidArgumentError, match="call_method"):
        ds.call_method("id", "m", "not bytes")
    with pytest.raises(InvalidArgumentError, match="single string"):
        ds.get_objects("one-id")
