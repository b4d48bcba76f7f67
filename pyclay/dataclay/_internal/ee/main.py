"""Starts an execution environment: confines this process (before anything else runs or is read),
takes its standard input and output as the link to its Data Service, and serves the link. Exits
when the link ends; exit code 3 asks the Data Service to restart it now (changed model code)."""
from __future__ import annotations

import logging
import os
import sys
import tempfile


def main() -> int:
    """Runs the execution environment; returns its exit code."""
    # the Data Service leads each line with the time, the account and this process's pid
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("dataclay.ee")
    # First: nothing the Data Service sends (model code, object state) is read before this process is
    # confined as its launcher said (see dataclay._internal.sandbox).
    from dataclay._internal.sandbox import confine_from_environment
    try:
        confinement = confine_from_environment()
    except Exception as e:  # a process that cannot be confined must not run model code
        log.error("cannot confine this execution environment: %s", e)
        return 2
    from dataclay.exceptions import DataClayException
    from dataclay._internal.config import EnvironmentConfig
    from dataclay._internal.ee.executor import Executor
    from dataclay._internal.ee.link_session import LinkSession
    from dataclay._internal.ee.models import ModelWatcher
    from dataclay._internal.ee.relay import AioLinkChannel, LinkChannel
    from dataclay._internal.ee.runtime import EnvironmentRuntime
    from dataclay._internal.rpc import DataServiceLink, channels
    from dataclay._internal.runtime.current import install_runtime
    try:
        config = EnvironmentConfig.load()
    except DataClayException as e:
        log.error("bad configuration: %s", e)
        return 2
    link = DataServiceLink.from_standard_streams()
    from dataclay._internal.ee import output
    output.capture()
    models = os.path.join(tempfile.gettempdir(), "dataclay-models")
    watcher = ModelWatcher(models)
    sys.path.insert(0, str(watcher.models_dir))
    session = LinkSession(link, None, watcher, None, config.threads)
    channels.relay_through(lambda address, aio: (AioLinkChannel if aio else LinkChannel)(session, address))
    runtime = EnvironmentRuntime(config, session, watcher.models_dir)
    install_runtime(runtime)
    session.attach(Executor(runtime), runtime.evict)
    log.info("serving backend %s (%d threads, confined: %s)", config.backend_id, config.threads, confinement)
    code = session.run(confinement)
    log.info("exiting with code %d", code)
    return code


def exit_now(code: int) -> None:
    """Leaves now: calls still running in user code must not keep the process alive."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
