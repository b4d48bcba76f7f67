"""What the metrics tests share: ports for a cluster's metrics endpoints, and the shipped Grafana
dashboard's queries."""
from __future__ import annotations

import json
import pathlib
import random
import socket

DASHBOARD = pathlib.Path(__file__).resolve().parents[2] / "docs" / "grafana" / "dataclay-cluster.json"


def consecutive_free_ports(n: int) -> int:
    """A port p such that p .. p+n-1 are free now (the launcher gives backend i the port p+i+1),
    below the kernel's ephemeral range, so that no server binding port 0 and no outgoing connection
    takes one of them before the servers bind them; chosen at random, as two test workers may ask."""
    low = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for _ in range(200):
        first = random.randrange(10000, low - n)
        try:
            for port in range(first, first + n):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
    raise RuntimeError(f"no {n} consecutive free ports below {low}")


# the PromQL functions and keywords the dashboard uses (anything else in a query is a metric or a label)
PROMQL_WORDS = {"sum", "rate", "increase", "histogram_quantile", "by", "without", "label_values"}


def dashboard_queries() -> list[str]:
    """Every PromQL query of the dashboard: its panels' and its template variables'."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    queries += [v["definition"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    return queries
