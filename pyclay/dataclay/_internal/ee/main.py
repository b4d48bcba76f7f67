"""Starts an execution environment: reads its configuration, connects to its Data Service's Unix
socket (DATACLAY_EE_SOCKET) and serves the link; state is loaded over gRPC (DATACLAY_EE_DS_ADDRESS).
Exits when the link ends, when the Data Service is gone, or when the parent process disappears
(no orphans); exit code 3 asks the Data Service to restart it now."""
from __future__ import annotations

import logging
import os
import sys
import threading
import time

from dataclay.exceptions import DataClayException
from dataclay._internal.config import Config
from dataclay._internal.ee.executor import Executor
from dataclay._internal.ee.link import EXIT_LINK_FAILED, LinkSession
from dataclay._internal.ee.models import ModelWatcher
from dataclay._internal.ee.runtime import EnvironmentRuntime
from dataclay._internal.rpc import DataServiceClient, DataServiceLink, LinkClosedError, LogicModuleClient, channels
from dataclay._internal.runtime.current import install_runtime

_log = logging.getLogger("dataclay.ee")

EXIT_BAD_CONFIGURATION = 2
PARENT_POLL_SECONDS = 0.5


def main() -> int:
    """Runs the execution environment; returns its exit code."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s python-ee[%(process)d] %(levelname)s %(name)s: %(message)s")
    # the secret that attaches it to its Data Service comes on standard input, never in the environment
    secret = sys.stdin.readline().strip()
    try:
        config = Config.load(read_client_file=False)
        missing = [key for key, value in (("DATACLAY_EE_SOCKET", config.ee_socket),
                                          ("DATACLAY_EE_DS_ADDRESS", config.ee_ds_address),
                                          ("the secret on standard input", secret),
                                          ("DATACLAY_BACKEND_ID", config.backend_id)) if not value]
        if missing:
            _log.error("missing configuration: %s", ", ".join(missing))
            return EXIT_BAD_CONFIGURATION
    except DataClayException as e:
        _log.error("bad configuration: %s", e)
        return EXIT_BAD_CONFIGURATION
    channels.configure(config.unreachable_ms)
    if config.ee_models_dir is not None:
        sys.path.insert(0, str(config.ee_models_dir))
    watch_parent(os.getppid())
    try:
        link = DataServiceLink.connect(config.ee_socket)
    except LinkClosedError as e:
        _log.error("%s", e)
        return EXIT_LINK_FAILED
    store = DataServiceClient(config.ee_ds_address, tls=config.tls, server_name=config.ee_ds_tls_name)
    runtime = EnvironmentRuntime(config, store, LogicModuleClient(config.lm_address, tls=config.tls))
    install_runtime(runtime)
    _log.info("attached to the Data Service at %s for backend %s (loading from %s, models in %s, %d threads)",
              config.ee_socket, config.backend_id, config.ee_ds_address, config.ee_models_dir, config.ee_threads)
    session = LinkSession(link, Executor(runtime), ModelWatcher(config.ee_models_dir), runtime.evict,
                          config.ee_threads, secret)
    code = session.run()
    _log.info("exiting with code %d", code)
    return code


def watch_parent(parent: int) -> None:
    """Exits this process at once when its parent (the Data Service) is gone."""
    def watch():
        while True:
            time.sleep(PARENT_POLL_SECONDS)
            if os.getppid() != parent:
                _log.error("the Data Service (pid %d) is gone: exiting", parent)
                exit_now(EXIT_LINK_FAILED)

    threading.Thread(target=watch, name="dataclay-parent-watch", daemon=True).start()


def exit_now(code: int) -> None:
    """Leaves now: calls still running in user code must not keep an orphan alive."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
