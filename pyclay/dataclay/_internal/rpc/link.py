"""The execution environment's side of ExecutionEnvironmentLink: one bidirectional stream to its
Data Service, authenticated by the secret the Data Service gave it at spawn."""
from __future__ import annotations

import grpc

from dataclay.exceptions import BackendUnavailableError
from dataclay._internal.proto import executionenv_pb2_grpc
from dataclay._internal.rpc.channels import EE_SECRET_KEY
from dataclay._internal.rpc.calls import check_timeout
from dataclay._internal.rpc.errors import error_from_rpc


class EnvironmentLinkClient:
    """Attaches the stream on `channel` (usually shared with the DataServiceClient of the same backend)."""

    def __init__(self, channel: grpc.Channel, secret: str):
        self._channel = channel
        self._stub = executionenv_pb2_grpc.ExecutionEnvironmentLinkStub(channel)
        self._metadata = ((EE_SECRET_KEY, secret),)

    def wait_until_reachable(self, timeout: float) -> None:
        """Waits for the Data Service to accept connections; raises BackendUnavailableError after `timeout`."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=check_timeout(timeout))
        except grpc.FutureTimeoutError:
            raise BackendUnavailableError(f"the Data Service did not accept a connection within {timeout} s",
                                          connect_failed=True) from None

    def attach(self, outgoing):
        """Opens the stream: sends the EnvironmentMessages `outgoing` yields, returns the incoming iterator.

        Iterating it raises the matching dataClay error if the stream fails."""
        return _Incoming(self._stub.Attach(outgoing, metadata=self._metadata))


class _Incoming:
    """DataServiceMessages from the stream; a failed stream raises a dataClay error."""

    def __init__(self, call):
        self._call = call

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._call)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def cancel(self) -> None:
        """Ends the stream from this side."""
        self._call.cancel()
