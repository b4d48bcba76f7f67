"""The client runtime: one session with the Logic Module, opened by api.init() from the
configuration, and the caches that keep warm calls off the Logic Module."""
from __future__ import annotations

import logging

from dataclay.exceptions import DataClayException, InvalidArgumentError
from dataclay._internal.config import CLIENT_FILE, Config
from dataclay._internal.rpc import LogicModuleClient, channels
from dataclay._internal.runtime.base import Runtime
from dataclay._internal.runtime.router import BackendRouter
from dataclay._internal.serialization.policy import ClientClassPolicy

_log = logging.getLogger(__name__)
CLOSE_TIMEOUT = 2.0


class ClientRuntime(Runtime):
    """A client's runtime; `open()` starts its session, `close()` ends it and closes every channel."""

    def __init__(self, config: Config):
        if not (config.user and config.password):
            where = config.source or "the environment"
            if config.source is None and not (config.user or config.password):
                raise InvalidArgumentError(
                    f"no client configuration: {config.home / CLIENT_FILE} does not exist and DATACLAY_USER is not set. "
                    f"Start a local cluster with 'dataclay start' (it writes that file), point DATACLAY_HOME at "
                    f"the home of a running one, or set DATACLAY_HOST, DATACLAY_PORT, DATACLAY_USER and "
                    f"DATACLAY_PASSWORD (or pass them to Client(...))")
            raise InvalidArgumentError(
                f"DATACLAY_USER and DATACLAY_PASSWORD must be set ({where} has no "
                f"{'DATACLAY_USER' if not config.user else 'DATACLAY_PASSWORD'}): set them in the environment or "
                f"in client.properties, pass them to Client(username=..., password=...), or set dataClay 4's "
                f"DC_USERNAME and DC_PASSWORD (also read from a .env file in the working directory)")
        self.config = config
        channels.configure(config.unreachable_ms)
        self._lm = LogicModuleClient(config.lm_address, tls=config.tls)
        self.session = None
        policy = ClientClassPolicy(config.pickle_allow, list_models=lambda: self._lm.list_models("python"))
        super().__init__(BackendRouter(self._lm, lambda: self._lm.token, config.tls), policy)

    def open(self) -> "ClientRuntime":
        """Opens the session and loads the backend list; the runtime is then ready."""
        try:
            self.session = self._lm.new_session(self.config.user, self.config.password, self.config.dataset)
            self._lm.token = self.session.token
            self.router.backends(refresh=True)
        except BaseException:
            self._lm.close()
            raise
        return self

    def close(self) -> None:
        """Closes the session (best effort: a Logic Module that is down cannot be told) and the channels."""
        try:
            if self._lm.token is not None:
                self._lm.close_session(timeout=CLOSE_TIMEOUT)
        except DataClayException as e:
            _log.debug("could not close the session: %s", e)
        finally:
            self._lm.token = None
            self.close_aio()
            self.router.close()
            self._lm.close()
