"""What `dataclay status` prints about each backend's store."""
from dataclay._internal.cli.local.status_report import BackendLine, StatusReport, format_status


def test_status_says_per_backend_whether_values_are_encrypted():
    report = StatusReport(lm_address="127.0.0.1:1", lm_alive=True, lm_version="x", backends=[
        BackendLine(name="backend-1", backend_id="a", address="h:1", alive=True, engine="kv", objects=1,
                    encrypted=True),
        BackendLine(name="backend-2", backend_id="b", address="h:2", alive=True, engine="heap", objects=1)])

    text = format_status(report)

    assert "store kv: 1 objects, 0 collected, pool -, encrypted at rest" in text
    assert "store heap: 1 objects, 0 collected, pool -, not encrypted" in text
