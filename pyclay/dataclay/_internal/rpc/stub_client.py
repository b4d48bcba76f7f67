"""StubClient: what the Logic Module's and the Data Services' stub wrappers share: a channel, the
session token every call carries, and one way to make a unary call and map its failure. The
asyncio twins (rpc/aio.py) change only how the channel is opened and how a call is made."""
from __future__ import annotations

from dataclay._internal.rpc.stub_calls import unary
from dataclay._internal.rpc.channels import ConnectionTarget, session_metadata
from dataclay._internal.rpc.tls import ClusterCa


class StubClient:
    """A client of the server at `address` (on `channel` if given, which it then does not own);
    `token` (settable) is the session it acts in. `tls` is the cluster CA (None: plaintext) and
    `server_name` the name the server's certificate must carry (default: the host of `address`)."""

    STUB = None
    """The generated stub class (set by each subclass)."""
    SERVER = ""
    """What the server is, for messages ("the Logic Module"; set by each subclass)."""

    def __init__(self, address: str, token: str | None = None, *, channel=None, tls: ClusterCa | None = None,
                 server_name: str | None = None):
        self.address = address
        self._target = ConnectionTarget(address, tls, server_name, self.SERVER)
        self._owns_channel = channel is None
        self._channel = self._open_channel() if channel is None else channel
        self._stub = self.STUB(self._channel)
        self.token = token

    def _open_channel(self):
        return self._target.open()

    @property
    def token(self) -> str | None:
        """The session token sent with every call (None: no session)."""
        return self._token

    @token.setter
    def token(self, value: str | None) -> None:
        self._metadata = session_metadata(value)
        self._token = value

    @property
    def target(self) -> ConnectionTarget:
        """Where this client connects (address, cluster CA, expected server name)."""
        return self._target

    @property
    def channel(self):
        """The underlying channel (shared by with_token siblings)."""
        return self._channel

    def with_token(self, token: str | None):
        """A client sharing this one's channel and stub but acting in another session; its close() does nothing."""
        sibling = object.__new__(type(self))
        sibling.__dict__.update(self.__dict__)
        sibling._owns_channel = False
        sibling.token = token
        return sibling

    def _call(self, method, request, extract=None, timeout=None, metadata=None):
        """`method(request)` in this client's session (or with `metadata`), its response passed through
        `extract` when given; a failed status raises the matching dataClay exception."""
        response = unary(method, request, self._metadata if metadata is None else metadata, timeout, self._target)
        return response if extract is None else extract(response)

    def close(self) -> None:
        """Closes the channel (if this client opened it)."""
        if self._owns_channel:
            self._channel.close()
