"""The dashboard's arithmetic and bookkeeping without a cluster: percentiles from histogram
differences, rates across restarts, browser-session expiry and the log-in throttle."""
from types import SimpleNamespace

import pytest

from dataclay._internal.cli.dashboard.call_history import CallHistory, Histogram, reading_of
from dataclay._internal.cli.dashboard.web_sessions import LoginThrottle, SessionTable

BOUNDS = (0.001, 0.002, 0.005, 0.01)


def latency(counts):
    return SimpleNamespace(bounds_seconds=list(BOUNDS), counts=list(counts), count=sum(counts), sum_seconds=0.0)


def test_quantiles_interpolate_inside_the_bucket_like_histogram_quantile():
    h = Histogram(BOUNDS, (0, 10, 0, 0, 0))                 # 10 calls in (1 ms, 2 ms]
    assert h.quantile(0.5) == pytest.approx(0.0015)
    assert h.quantile(0.99) == pytest.approx(0.001 + 0.001 * 0.99)
    assert Histogram(BOUNDS, (100, 0, 0, 0, 1)).quantile(0.5) == pytest.approx(0.001 * 50.5 / 100)
    assert Histogram(BOUNDS, (0, 0, 0, 0, 3)).quantile(0.5) == 0.01   # beyond the last bound: the last bound
    assert Histogram(BOUNDS, (0, 0, 0, 0, 0)).quantile(0.5) is None


def test_a_point_is_the_rate_and_percentiles_of_the_calls_between_two_samples_without_liveness_calls():
    history = CallHistory(keep=10)
    history.record("b", reading_of(100.0, {"CallMethod": 10, "Heartbeat": 50}, {"CallMethod": latency((10, 0, 0, 0, 0)),
                                                                              "Heartbeat": latency((50, 0, 0, 0, 0))}))
    history.record("b", reading_of(105.0, {"CallMethod": 60, "Heartbeat": 99}, {"CallMethod": latency((10, 0, 50, 0, 0)),
                                                                              "Heartbeat": latency((99, 0, 0, 0, 0))}))
    (point,) = history.series()["b"]
    assert point["rate"] == 10.0                            # 50 calls in 5 s; heartbeats left out
    assert point["p50_ms"] == pytest.approx(3.5)            # all 50 in (2 ms, 5 ms]: the middle
    assert history.series()["cluster"][0]["rate"] == 10.0


def test_a_restarted_server_starts_a_new_series_instead_of_a_negative_rate():
    history = CallHistory(keep=10)
    history.record("b", reading_of(1.0, {"CallMethod": 500}, {"CallMethod": latency((500, 0, 0, 0, 0))}))
    history.record("b", reading_of(2.0, {"CallMethod": 3}, {"CallMethod": latency((3, 0, 0, 0, 0))}))
    history.record("b", reading_of(3.0, {"CallMethod": 7}, {"CallMethod": latency((7, 0, 0, 0, 0))}))
    assert [p["rate"] for p in history.series()["b"]] == [4.0]


def test_history_keeps_the_newest_points_only():
    history = CallHistory(keep=3)
    for i in range(10):
        history.record("b", reading_of(float(i), {"X": i * 2}, {}))
    assert [p["at"] for p in history.series()["b"]] == [7.0, 8.0, 9.0]


def test_a_browser_session_ends_when_idle_or_when_its_logic_module_session_ends():
    clock, wall = [0.0], [1000.0]
    table = SessionTable(idle=60, clock=lambda: clock[0], wall=lambda: wall[0])
    idle = table.open("admin", "t1", expires_at_ms=10_000_000)
    clock[0] = 59
    assert table.find(idle)[0].token == "t1"                # a request keeps it alive
    clock[0] = 119
    assert table.find(idle)[0] is not None
    clock[0] = 180
    assert table.find(idle) == (None, "expired")
    assert table.find(idle) == (None, "unknown")            # forgotten once expired
    ending = table.open("admin", "t2", expires_at_ms=1_001_000)
    wall[0] = 1001.5
    assert table.find(ending) == (None, "expired")
    assert table.find("forged") == (None, "unknown") and table.find(None) == (None, "")


def test_expired_sessions_are_handed_back_for_closing_and_live_tokens_are_listed_freshest_first():
    clock = [0.0]
    table = SessionTable(idle=10, clock=lambda: clock[0], wall=lambda: 0.0)
    old = table.open("a", "old", 0)
    clock[0] = 5
    table.open("b", "new", 0)
    assert table.tokens() == ["new", "old"]
    clock[0] = 12
    assert [s.token for s in table.expired()] == ["old"]
    assert table.find(old) == (None, "expired")             # its browser is still told why
    assert table.find(old) == (None, "unknown")


def test_the_throttle_refuses_an_address_after_five_failures_in_a_minute_and_forgets_them():
    clock = [0.0]
    throttle = LoginThrottle(attempts=5, window=60, clock=lambda: clock[0])
    for _ in range(4):
        throttle.failed("10.0.0.1")
    assert throttle.wait("10.0.0.1") == 0
    throttle.failed("10.0.0.1")
    assert throttle.wait("10.0.0.1") == 60
    assert throttle.wait("10.0.0.2") == 0                   # other addresses are not held up
    clock[0] = 61
    assert throttle.wait("10.0.0.1") == 0
    throttle.failed("10.0.0.3")
    throttle.succeeded("10.0.0.3")
    assert throttle.wait("10.0.0.3") == 0
