"""dataClay 4's `dataclay.config`, for its programs and models: `get_runtime()` is the runtime of
this process's session (a client's, or inside a backend the execution environment's), and
`settings` the client settings it was started with (`settings.dataclay_host`, `dataclay_port`,
`username`, `dataset`). Configuration itself is read by dataclay._internal.config (README,
"Configuration")."""
from __future__ import annotations

from dataclay._internal.config import Config
from dataclay._internal.runtime.current import get_runtime

__all__ = ["get_runtime", "settings"]


class _Settings:
    """The client settings under dataClay 4's names, read when asked (never the password)."""

    @property
    def dataclay_host(self) -> str:
        return Config.load().host

    @property
    def dataclay_port(self) -> int:
        return Config.load().port

    @property
    def username(self) -> str | None:
        return Config.load().user

    @property
    def dataset(self) -> str:
        return Config.load().dataset


settings = _Settings()
