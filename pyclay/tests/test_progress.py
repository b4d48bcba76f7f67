"""Progress on standard error (cli/common/progress.py, tqdm): a redrawn bar on a terminal, lines
every few seconds in a log when asked for, nothing otherwise."""
import io
import time

from dataclay._internal.cli.common.progress import Progress, bar, waiting


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_redraws_one_line_on_a_terminal_and_prints_lines_when_asked_elsewhere():
    terminal, log, quiet = _Terminal(), io.StringIO(), io.StringIO()
    for stream, enabled in ((terminal, None), (log, True), (quiet, None)):
        meter = Progress("import", total_bytes=2_000_000, total_objects=10, stream=stream, enabled=enabled)
        meter.add(1_000_000, 5)
        meter.add(1_000_000, 5)
        meter.done()
    assert terminal.getvalue().startswith("\rimport") and terminal.getvalue().endswith("\n")
    assert "100%" in terminal.getvalue() and "10/10 objects" in terminal.getvalue()
    assert "\r" not in log.getvalue() and log.getvalue().count("\n") >= 2 and "2.00M/2.00M" in log.getvalue()
    assert "B/s" in log.getvalue() and "10/10 objects" in log.getvalue()
    assert quiet.getvalue() == ""


def test_a_bar_counts_with_a_rate_and_time_left_on_a_terminal_and_says_nothing_in_a_pipe():
    terminal, pipe = _Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        with bar("waiting for backends", total=2, unit="backend", stream=stream) as shown:
            shown.update(1)
            shown.update(1)
    assert "waiting for backends" in terminal.getvalue() and "2/2" in terminal.getvalue()
    assert "backend/s" in terminal.getvalue() and "<" in terminal.getvalue()  # elapsed<remaining
    assert pipe.getvalue() == ""


def test_waiting_redraws_the_time_elapsed_while_a_long_call_runs():
    terminal, pipe = _Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        with waiting("collecting garbage", stream=stream):
            # until a redraw showed a second elapsed (on a loaded machine the thread may run late)
            deadline = time.monotonic() + 10
            while "collecting garbage: 00:01" not in terminal.getvalue() and time.monotonic() < deadline:
                time.sleep(0.05)
    assert "collecting garbage: 00:01" in terminal.getvalue(), terminal.getvalue()
    assert terminal.getvalue().count("\rcollecting garbage: ") >= 2  # the first draw, then redraws
    assert pipe.getvalue() == ""
