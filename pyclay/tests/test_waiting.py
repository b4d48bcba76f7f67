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
