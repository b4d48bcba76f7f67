"""dataClay 4's `dataclay.event_loop` and `dataclay.config`, which its models and programs import, and what an
AlienDataClayObject forwards."""
import asyncio
import threading

import pytest

from dataclay import event_loop


async def _double(x):
    await asyncio.sleep(0)
    return 2 * x, threading.current_thread().name


async def _fail():
    raise ValueError("from the coroutine")


def test_run_dc_coroutine_runs_an_async_function_from_synchronous_code_on_dataclays_loop():
    value, thread = event_loop.run_dc_coroutine(_double, 21)
    assert value == 42 and thread == "dataclay-event-loop"
    with pytest.raises(ValueError, match="from the coroutine"):
        event_loop.run_dc_coroutine(_fail)
    assert event_loop.get_dc_event_loop() is event_loop.get_dc_event_loop()


def test_run_dc_coroutine_on_the_loop_itself_is_refused_instead_of_waiting_for_ever():
    async def nested():
        return event_loop.run_dc_coroutine(_double, 1)
    with pytest.raises(RuntimeError, match="await _double"):
        event_loop.run_dc_coroutine(nested)


def test_blocking_functions_run_in_threads_from_a_coroutine():
    async def main():
        return await event_loop.dc_to_thread_cpu(sum, [1, 2, 3]), await event_loop.dc_to_thread_io(
            lambda: threading.current_thread().name)
    total, name = asyncio.run(main())
    assert total == 6 and name.startswith("dataclay-io")


def test_dataclay_config_gives_the_runtime_and_the_client_settings(monkeypatch, tmp_path):
    from dataclay.config import get_runtime, settings
    from dataclay.exceptions import NotAuthenticatedError
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATACLAY_HOME", str(tmp_path))
    monkeypatch.setenv("DC_HOST", "10.1.2.3")
    monkeypatch.setenv("DC_USERNAME", "dora")
    monkeypatch.delenv("DATACLAY_HOST", raising=False)
    monkeypatch.delenv("DATACLAY_USER", raising=False)
    assert (settings.dataclay_host, settings.username) == ("10.1.2.3", "dora")
    with pytest.raises(NotAuthenticatedError, match="no dataClay session"):
        get_runtime()


def test_an_alien_object_forwards_only_attribute_names_and_its_operators_to_what_it_wraps():
    # setup: what a backend runs for a client's AlienDataClayObject call, here on a volatile one
    from dataclay import AlienDataClayObject
    from dataclay.exceptions import InvalidArgumentError
    wrapped = AlienDataClayObject({"a": 1})
    # verify: names a client sends are attribute names, never dunders beyond the item operators
    assert wrapped._dc_alien_call("get", "a") == 1 and wrapped._dc_alien_call("__getitem__", "a") == 1
    for name in ("__class__", "__reduce_ex__", "__init__", "_dc_alien_call", "a b", 3):
        with pytest.raises(AttributeError):
            wrapped._dc_alien_call(name)
        with pytest.raises(AttributeError):
            wrapped._dc_alien_get(name)
        with pytest.raises(AttributeError):
            wrapped._dc_alien_set(name, 1)
    with pytest.raises(InvalidArgumentError, match="not an operator"):
        wrapped._dc_alien_apply("exec", "print(1)")
    with pytest.raises(InvalidArgumentError, match="DataClayObject already"):
        AlienDataClayObject(AlienDataClayObject([]))
