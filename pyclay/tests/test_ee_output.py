"""What model code prints and logs in an execution environment: one labelled line per printed line,
control characters escaped, a log record kept on one line."""
import io
import logging

from dataclay._internal.ee.call_context import CallContext, enter_call, leave_call
from dataclay._internal.ee.output import MAX_LINE, CallFormatter, CallOutput

OID = "5f0e3b6c-0000-4000-8000-000000000001"


def _in_call(action):
    enter_call(CallContext(7, "alice", "alice", frozenset({"alice"}), f"people.model.Person.birthday on {OID}"))
    try:
        action()
    finally:
        leave_call()


def test_printed_lines_carry_the_call_and_the_stream():
    sink = io.StringIO()
    out = CallOutput("stdout", sink)
    _in_call(lambda: print("turning", 43, file=out))
    print("between calls", file=out)
    assert sink.getvalue().splitlines() == [
        f"call people.model.Person.birthday on {OID}: stdout: turning 43", "stdout: between calls"]


def test_a_newline_in_printed_text_starts_a_labelled_line_and_control_characters_are_escaped():
    sink = io.StringIO()
    out = CallOutput("stderr", sink)
    forged = "ok\n2026-01-01 00:00:00 python-ee bob (pid 1): INFO dataclay.ee: forged\r\x1b[2J\u2028"
    _in_call(lambda: print(forged, file=out))
    lines = sink.getvalue().splitlines()
    assert len(lines) == 2
    assert all(line.startswith(f"call people.model.Person.birthday on {OID}: stderr: ") for line in lines)
    assert lines[1].endswith("forged\\x0d\\x1b[2J\\u2028")


def test_bytes_written_to_the_binary_side_become_labelled_lines_too():
    sink = io.StringIO()
    out = CallOutput("stdout", sink)
    _in_call(lambda: (out.buffer.write("caf\u00e9 \x1b\n".encode()), out.buffer.flush()))
    assert sink.getvalue() == f"call people.model.Person.birthday on {OID}: stdout: caf\u00e9 \\x1b\n"


def test_an_unfinished_line_waits_for_its_end_or_a_flush_and_a_long_one_is_cut():
    sink = io.StringIO()
    out = CallOutput("stdout", sink)
    out.write("progress ")
    assert sink.getvalue() == ""
    out.write("50%")
    out.flush()
    assert sink.getvalue() == "stdout: progress 50%\n"
    out.write("x" * (MAX_LINE * 2 + 5))
    out.write("\n")
    pieces = sink.getvalue().splitlines()[1:]
    assert [len(p) - len("stdout: ") for p in pieces] == [MAX_LINE, MAX_LINE, 5]


def test_a_log_record_stays_one_line_with_the_call_and_its_traceback_escaped():
    sink = io.StringIO()
    handler = logging.StreamHandler(sink)
    handler.setFormatter(CallFormatter())
    log = logging.getLogger("tests.model")
    log.addHandler(handler)
    log.propagate = False
    try:
        def fail():
            try:
                raise ValueError("bad\nvalue")
            except ValueError:
                log.exception("it failed:\nsee below")
        _in_call(fail)
    finally:
        log.removeHandler(handler)
    lines = sink.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"call people.model.Person.birthday on {OID}: ERROR tests.model: it failed:\\x0asee")
    assert "Traceback (most recent call last):\\x0a" in lines[0] and "ValueError: bad\\x0avalue" in lines[0]
