"""The deadline helper both test suites use (tests/harness/waiting.py): it returns the first truthy
value, treats the exceptions it is told to ignore as "not yet", and fails naming what it awaited."""
import pytest

from harness.waiting import wait_until


def test_wait_until_returns_the_first_truthy_value_and_treats_ignored_errors_as_not_yet():
    # setup: a predicate that fails, then answers falsy, then a value
    answers = iter([LookupError("between two processes"), 0, 42])

    def predicate():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    # run
    got = wait_until(predicate, 5, "the answer", interval=0.001, ignoring=(LookupError,))

    # verify
    assert got == 42


def test_wait_until_fails_naming_what_it_awaited_and_the_last_value_seen():
    # run / verify: a predicate that never holds
    with pytest.raises(AssertionError, match=r"waiting for the flag file; last seen: \[\]"):
        wait_until(lambda: [], 0.05, "the flag file", interval=0.01)


def test_wait_until_adds_the_details_it_is_given_to_its_failure():
    # run / verify: the details are asked for once, when it gives up
    asked = []
    with pytest.raises(AssertionError, match=r"waiting for the log line; last seen: False\nlast lines: x, y"):
        wait_until(lambda: False, 0.05, "the log line", interval=0.01,
                   details=lambda: asked.append(1) or "last lines: x, y")
    assert asked == [1]


def test_an_exception_it_does_not_ignore_ends_the_wait_at_once():
    # setup: a predicate that finds the process it waits for dead
    calls = []

    def predicate():
        calls.append(1)
        raise RuntimeError("the server exited with 1")

    # run / verify
    with pytest.raises(RuntimeError, match="exited with 1"):
        wait_until(predicate, 30, "the server", interval=0.01, ignoring=(LookupError,))
    assert calls == [1]
