"""Client: dataClay 4's way to open and close this process's session. It reads the same configuration
as api.init() ($DATACLAY_HOME/client.properties, then DATACLAY_* variables), its arguments win over
both, and it is the same session: api.* and storage.api calls use it while it is started."""
from __future__ import annotations

import atexit

from dataclay.exceptions import DataClayException, InvalidArgumentError
from dataclay._internal.config import Config, session_settings
from dataclay._internal.runtime.backend_client import backend_clients
from dataclay._internal.runtime import listing
from dataclay._internal.runtime.client import ClientRuntime
from dataclay._internal.runtime.current import get_runtime, install_runtime, peek_runtime, remove_runtime


class Client:
    """A session with the cluster at host:port as `username`, whose new objects go to `dataset`; every
    argument left None comes from the configuration. start() opens it, stop() closes it, and
    `with Client(...) as client:` does both.

    dataClay 4's other arguments are taken too: there is no separate proxy here, so `proxy_host` and
    `proxy_port` are where the cluster is reached when `host` and `port` are not given; `local_backend`
    is accepted and, as in dataClay 4.3.1, changes nothing."""

    def __init__(self, host: str | None = None, port: int | None = None, username: str | None = None,
                 password: str | None = None, dataset: str | None = None, local_backend: str | None = None,
                 proxy_host: str | None = None, proxy_port: int | None = None):
        self._settings = session_settings(host if host is not None else proxy_host,
                                          port if port is not None else proxy_port, username, password, dataset)
        self._runtime: ClientRuntime | None = None

    @property
    def is_initialized(self) -> bool:
        """True between start() and stop()."""
        return self._runtime is not None and peek_runtime() is self._runtime

    def start(self) -> "Client":
        """Opens the session (a no-op if this client is started); InvalidArgumentError if this process already
        has another (api.init() or another Client): stop that one first."""
        if self.is_initialized:
            return self
        if peek_runtime() is not None:
            raise InvalidArgumentError("this process already has a dataClay session (api.init() or another "
                                       "Client): stop it (api.finish() or Client.stop()) before starting this one")
        try:
            runtime = ClientRuntime(Config.load().overridden(self._settings)).open()
        except DataClayException as e:  # its message says what to do: the library's frames would only bury it
            raise e.with_traceback(None) from None
        runtime.plain_flags = True  # a dataClay 4 program: obj.is_persistent is True or False
        if not install_runtime(runtime):
            runtime.close()
            raise InvalidArgumentError("another dataClay session was opened in this process meanwhile")
        self._runtime = runtime
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        """Closes the session and its channels (a no-op if it is not started)."""
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            atexit.unregister(self.stop)
            if remove_runtime(runtime):
                runtime.close()

    def __enter__(self) -> "Client":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def get_backends(self) -> dict:
        """Backend ID -> backend with name, host, port, languages and alive (fresh from the Logic Module),
        and dataClay 4's awaitable flush_all(), new_object_version() and consolidate_object_version()."""
        runtime = self._started("get_backends")
        return backend_clients(runtime.get_backends(), runtime)

    async def a_get_backends(self) -> dict:
        """Awaitable get_backends()."""
        runtime = self._started("a_get_backends")
        return backend_clients(await runtime.aio().get_backends(), runtime)

    def list_datasets(self, count_objects: bool = True, page_size: int = 0):
        """The datasets this session may see, as api.list_datasets() (an iterator, a page at a time)."""
        self._started("list_datasets")
        return listing.datasets(lambda: self._started("list_datasets").router.lm(), count_objects, page_size)

    def list_aliases(self, pattern: str = "*", dataset: str | None = None, page_size: int = 0):
        """The aliases matching a glob pattern, as api.list_aliases()."""
        self._started("list_aliases")
        return listing.aliases(lambda: self._started("list_aliases").router.lm(), pattern, dataset, page_size)

    def list_objects(self, cls_or_class_name=None, dataset: str | None = None, page_size: int = 0):
        """The objects of a class, as api.list_objects()."""
        self._started("list_objects")
        return listing.objects(lambda: self._started("list_objects").router.lm(), cls_or_class_name, dataset,
                               page_size)

    def a_list_datasets(self, count_objects: bool = True, page_size: int = 0):
        """list_datasets() as an asynchronous iterator: `async for d in client.a_list_datasets(): ...`."""
        self._started("a_list_datasets")
        return listing.a_datasets(lambda: self._started("a_list_datasets").aio().router.lm(), count_objects,
                                  page_size)

    def a_list_aliases(self, pattern: str = "*", dataset: str | None = None, page_size: int = 0):
        """list_aliases() as an asynchronous iterator (`async for`)."""
        self._started("a_list_aliases")
        return listing.a_aliases(lambda: self._started("a_list_aliases").aio().router.lm(), pattern, dataset,
                                 page_size)

    def a_list_objects(self, cls_or_class_name=None, dataset: str | None = None, page_size: int = 0):
        """list_objects() as an asynchronous iterator (`async for`)."""
        self._started("a_list_objects")
        return listing.a_objects(lambda: self._started("a_list_objects").aio().router.lm(), cls_or_class_name,
                                 dataset, page_size)

    def _started(self, operation: str) -> ClientRuntime:
        if not self.is_initialized:
            get_runtime()  # no session at all: says how to open one
            raise InvalidArgumentError(f"{operation}(): this Client is not started (another session is "
                                       f"open in this process): call start() first")
        return self._runtime
