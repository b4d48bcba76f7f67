"""An administrator's session with the Logic Module that the client configuration names, for the
commands that act on a whole cluster (`dataclay export`, `dataclay import`)."""
from __future__ import annotations

from contextlib import contextmanager

from dataclay.exceptions import DataClayException, InvalidArgumentError, PermissionDeniedError
from dataclay._internal.config import Config
from dataclay._internal.rpc import LogicModuleClient


@contextmanager
def admin_session(config: Config, what: str):
    """A Logic Module client in a new session of the configured administrator, closed afterwards."""
    if not (config.user and config.password):
        raise InvalidArgumentError(f"{what} needs an administrator's credentials: set DATACLAY_USER and "
                                   f"DATACLAY_PASSWORD, or run where `dataclay start` wrote client.properties")
    client = LogicModuleClient(config.lm_address, tls=config.tls)
    try:
        session = client.new_session(config.user, config.password, "")
        client.token = session.token
        try:
            if not session.admin:
                raise PermissionDeniedError(f"{what} needs an administrator; {config.user} is not one")
            yield client
        finally:
            try:
                client.close_session(timeout=10)
            except DataClayException:
                pass  # it expires by itself
    finally:
        client.close()
