"""Who the fuzzer speaks as: no session, bogus tokens, an ordinary user with no data contract,
an administrator, and a backend (a session opened with the cluster secret, its ID then registered,
as a Data Service does). Each sends from a loopback address of its own (see peers.py) and can be
renewed when a fuzzed CloseSession closed its session."""
from __future__ import annotations

import hashlib
import hmac
import itertools
import pathlib
import random
import time
import uuid

import grpc

from dataclay._internal.proto import common_pb2, logicmodule_pb2 as lm_pb2, logicmodule_pb2_grpc

NAMES = ("none", "bogus", "user", "admin", "backend")
USER, USER_PASSWORD = "fuzz-user", "fuzz-user-password-1"
LOGIN, LOGIN_PASSWORD = "fuzz-login", "fuzz-login-password-1"   # the account NewSession seeds name


class Identity:
    """One caller: `name`, the token it sends (None: no session), the address it sends from."""

    def __init__(self, name: str, source_ip: str, opener=None):
        self.name = name
        self.source_ip = source_ip
        self._opener = opener
        self.session: lm_pb2.SessionInfo | None = opener() if opener else None
        self.renewals = 0

    def token(self) -> str | None:
        """The token of the next call."""
        return self.session.token if self.session else None

    def renew(self) -> None:
        """Opens a fresh session (a fuzzed CloseSession closed the current one)."""
        if self._opener:
            self.session = self._opener()
            self.renewals += 1


class BogusIdentity(Identity):
    """Tokens nobody holds, in turn: random ones shaped like real tokens, a closed session's, an
    oversized one and one of the right length made of dashes."""

    def __init__(self, source_ip: str, closed_token: str, seed: int):
        super().__init__("bogus", source_ip)
        rng = random.Random(seed)
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        shaped = lambda: "".join(rng.choice(alphabet) for _ in range(43))  # noqa: E731
        # the oversized one closes the connection (HTTP/2 header limit): one call in eight
        self._kinds = itertools.cycle([
            shaped, lambda: closed_token, shaped, lambda: "-" * 43,
            shaped, lambda: closed_token, lambda: "A" * 16384, lambda: "",
        ])

    def token(self) -> str | None:
        return next(self._kinds)()


class SessionOpener:
    """Opens sessions on the Logic Module from 127.0.0.1 (never throttled: it never fails)."""

    def __init__(self, lm_address: str, home: pathlib.Path):
        self._channel = grpc.insecure_channel(lm_address)
        self._stub = logicmodule_pb2_grpc.LogicModuleStub(self._channel)
        self._secret = (home / "cluster.secret").read_text().strip().encode()

    def user(self, username: str, password: str) -> lm_pb2.SessionInfo:
        """A user session (token included)."""
        return self._stub.NewSession(lm_pb2.NewSessionRequest(username=username, password=password), timeout=60)

    def backend(self, backend_id: str) -> lm_pb2.SessionInfo:
        """A backend session for `backend_id`, proved with the cluster secret as a Data Service does."""
        now, nonce = int(time.time() * 1000), uuid.uuid4().hex
        proof = hmac.new(self._secret, f"dataclay-backend-session\n{backend_id}\n{now}\n{nonce}".encode(),
                         hashlib.sha256).digest()
        return self._stub.NewBackendSession(lm_pb2.NewBackendSessionRequest(
            backend_id=backend_id, issued_at_ms=now, nonce=nonce, proof=proof), timeout=60)

    def registered_backend(self, backend_id: str) -> lm_pb2.SessionInfo:
        """A backend session for `backend_id`, registered as a backend at 127.0.0.1:1 (nothing listens there):
        the Logic Module serves a backend session nothing but RegisterBackend until its ID is registered."""
        session = self.backend(backend_id)
        self._stub.RegisterBackend(common_pb2.BackendInfo(
            id=backend_id, name="fuzz-backend", host="127.0.0.1", port=1, languages=[common_pb2.PYTHON],
            store_engine="kv"), metadata=(("dataclay-session", session.token),), timeout=60)
        return session

    def close(self, token: str) -> None:
        """Closes a session."""
        self._stub.CloseSession(common_pb2.Empty(), metadata=(("dataclay-session", token),), timeout=60)

    def shutdown(self) -> None:
        """Closes the channel."""
        self._channel.close()


def open_identities(opener: SessionOpener, admin: tuple[str, str], seed: int) -> dict[str, Identity]:
    """Every identity of NAMES; identity i sends from 127.0.0.<2 + i>."""
    closed = opener.user(USER, USER_PASSWORD).token
    opener.close(closed)
    ip = {name: f"127.0.0.{2 + i}" for i, name in enumerate(NAMES)}
    fuzz_backend_id = str(uuid.UUID(int=random.Random(seed).getrandbits(128), version=4))
    backend = Identity("backend", ip["backend"], lambda: opener.registered_backend(fuzz_backend_id))
    backend.backend_id = fuzz_backend_id
    return {
        "none": Identity("none", ip["none"]),
        "bogus": BogusIdentity(ip["bogus"], closed, seed),
        "user": Identity("user", ip["user"], lambda: opener.user(USER, USER_PASSWORD)),
        "admin": Identity("admin", ip["admin"], lambda: opener.user(*admin)),
        "backend": backend,
    }
