"""What the metrics tests share: ports for a cluster's metrics endpoints, and the shipped Grafana
dashboard's queries."""
from __future__ import annotations

import json
import pathlib
import socket

DASHBOARD = pathlib.Path(__file__).resolve().parents[2] / "docs" / "grafana" / "dataclay-cluster.json"


def consecutive_free_ports(n: int) -> int:
    """A port p such that p .. p+n-1 are free now (the launcher gives backend i the port p+i+1)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + n > 65535:
            continue
        try:
            for port in range(first, first + n):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
    raise RuntimeError(f"no {n} consecutive free ports")


# the PromQL functions and keywords the dashboard uses (anything else in a query is a metric or a label)
PROMQL_WORDS = {"sum", "rate", "increase", "histogram_quantile", "by", "without", "label_values"}


def dashboard_queries() -> list[str]:
    """Every PromQL query of the dashboard: its panels' and its template variables'."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    queries += [v["definition"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    return queries
