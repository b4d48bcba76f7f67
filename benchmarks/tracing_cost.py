#!/usr/bin/env python
"""What observability costs a warm method call, all in one run on one one-backend `kv` cluster
started with metrics on (DATACLAY_METRICS_PORT) and tracing on (OTEL_EXPORTER_OTLP_ENDPOINT, to a
receiver in this process that counts what it gets, as a collector would take it), in blocks:
- "untraced":    nobody scrapes, and the client samples no trace. The servers' sampler is
                 parentbased_always_off, so they trace only what the client traces: their spans
                 are made, unrecorded. This is the baseline.
- "scraped":     as untraced, with a process scraping both servers' /metrics every second;
- "traced 1 %":  the client samples 1 % of its calls (traceidratio 0.01), and the servers follow;
- "traced 100 %": every call is traced: client span, Data Service span, the environment's steps,
                 exported over OTLP/HTTP.
The client's sampler is switched between blocks (one TracerProvider, set up by this program as an
application would, which pmclay then uses), the scraper stopped and resumed, and the blocks' order
rotates round by round. Per round and block: p50 and p99 of an active method that changes state and
of one that reads it, and the ratio to "untraced". Two clusters started alike differ by up to 50 %
in p50 on this 2-CPU machine, so one cluster is measured against itself. What the metrics'
per-call counting costs alone is benchmarks/java/InterceptorCost.java's figure, and so is what a
server's tracing interceptor costs alone, sampled or not, against none (no endpoint set)."""
import argparse
import os
import signal
import subprocess
import sys
import time

from _cluster import REPO, Side, models_importable, p50_p99
from _timing import timed
from metrics_cost import SCRAPER, free_pair

sys.path.insert(0, str(REPO / "tests"))
from harness.otlp import OtlpReceiver  # noqa: E402

BLOCKS = ("untraced", "scraped", "traced 1 %", "traced 100 %")
RATES = {"untraced": 0.0, "scraped": 0.0, "traced 1 %": 0.01, "traced 100 %": 1.0}


class SwitchedSampler:
    """The client's sampler, switched between blocks: a trace-ID ratio (0: none)."""

    def __init__(self):
        from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
        self.current = ALWAYS_OFF

    def set(self, rate: float) -> None:
        from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, TraceIdRatioBased
        self.current = ALWAYS_OFF if rate == 0 else ALWAYS_ON if rate == 1 else TraceIdRatioBased(rate)

    def should_sample(self, *args, **kwargs):
        return self.current.should_sample(*args, **kwargs)

    def get_description(self) -> str:
        return f"switched({self.current.get_description()})"


def client_tracing(endpoint: str) -> tuple:
    """This process's TracerProvider (as an application sets one up) with the switched sampler,
    exporting to `endpoint` in batches as pmclay's own would."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    sampler = SwitchedSampler()
    provider = TracerProvider(sampler=sampler, resource=Resource.create({"service.name": "pmclay-client"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)
    return provider, sampler


def report(name: str, samples: list[float], base_p50: float | None) -> float:
    p50, p99 = p50_p99(samples)
    ratio = f"  x{p50 / base_p50:.3f} of untraced" if base_p50 else ""
    print(f"    {name:<44} p50 {p50 * 1e6:7.1f} us   p99 {p99 * 1e6:7.1f} us{ratio}", flush=True)
    return p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20000, help="samples per figure")
    parser.add_argument("--warmup", type=int, default=5000, help="unmeasured calls before each figure")
    parser.add_argument("--rounds", type=int, default=4, help="rounds; the first runs on just-started servers")
    args = parser.parse_args()
    models_importable()
    port = free_pair()
    with OtlpReceiver(keep=False) as receiver:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint    # this client's pmclay: traced channels
        provider, sampler = client_tracing(receiver.endpoint)
        side = Side("observed", {"DATACLAY_METRICS_PORT": str(port), "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                                 "OTEL_TRACES_SAMPLER": "parentbased_always_off", "OTEL_BSP_SCHEDULE_DELAY": "300"})
        scraper = None
        try:
            side.start()
            scraper = subprocess.Popen([sys.executable, "-c", SCRAPER, str(side.cluster.home / "metrics.token"),
                                        "1", str(port), str(port + 1)])
            scraper.send_signal(signal.SIGSTOP)
            with side.active():
                for round_ in range(args.rounds):
                    order = BLOCKS[round_ % len(BLOCKS):] + BLOCKS[:round_ % len(BLOCKS)]
                    print(f"round {round_ + 1} of {args.rounds}{' (servers just started)' if round_ == 0 else ''}: "
                          f"{', '.join(order)}")
                    results = {}
                    for block in order:
                        sampler.set(RATES[block])
                        scraper.send_signal(signal.SIGCONT if block == "scraped" else signal.SIGSTOP)
                        spans_before = receiver.received
                        results[block] = {"increment": timed(side.counter.increment, args.n, args.warmup),
                                          "get": timed(side.counter.get, args.n, args.warmup)}
                        provider.force_flush()
                        time.sleep(1.0)      # the servers' batches (OTEL_BSP_SCHEDULE_DELAY 5 s by default) land
                        results[block]["spans"] = receiver.received - spans_before
                    scraper.send_signal(signal.SIGSTOP)
                    for what, label in (("increment", "changes state"), ("get", "reads state")):
                        base = report(f"untraced      {label}", results["untraced"][what], None)
                        for block in BLOCKS[1:]:
                            report(f"{block:<13} {label}", results[block][what], base)
                    calls = 2 * (args.n + args.warmup)
                    print("    spans received per call: " + ", ".join(
                        f"{block} {results[block]['spans'] / calls:.2f}" for block in BLOCKS), flush=True)
        finally:
            if scraper is not None:
                scraper.kill()
                scraper.wait()
            side.stop()
            provider.shutdown()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
