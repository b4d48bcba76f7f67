"""OpenTelemetry traces across the client, the Data Services, the execution environment and the
Logic Module, exported over OTLP/HTTP to a local receiver as to any collector: one trace follows a
method call from the client through the backend into the environment (whose steps the backend
records for it) and to the object's replica; another follows make_persistent to the Logic Module's
registration. The client's gRPC metrics (gRFC A66) go to the same receiver. Off by default:
without an endpoint nothing is sent."""
import json
import textwrap

import pytest

from harness.otlp import OtlpReceiver

pytestmark = pytest.mark.timeout(300)

SERVER, CLIENT = 2, 3   # OTLP span kinds


def traced_env(receiver: OtlpReceiver) -> dict:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}


def ancestors(span, by_id: dict) -> list:
    out = []
    while span.parent_id and span.parent_id in by_id:
        span = by_id[span.parent_id]
        out.append(span)
    return out


def one(spans, what: str, **match):
    found = [s for s in spans if all((getattr(s, k)(v) if callable(getattr(s, k, None)) else getattr(s, k) == v)
                                     for k, v in match.items())]
    assert len(found) == 1, (what, [(s.service, s.name) for s in spans])
    return found[0]


def named(spans, suffix: str, service: str, kind: int) -> list:
    return [s for s in spans if s.name.endswith(suffix) and s.service == service and s.kind == kind]


def test_one_trace_follows_a_call_from_the_client_into_the_environment_and_to_the_replica(make_cluster):
    with OtlpReceiver() as receiver:
        cluster = make_cluster(backends=2, extra_env=traced_env(receiver))
        # setup: an object on the first backend with a replica on the second
        made = json.loads(cluster.run_client(textwrap.dedent("""
            import json
            from dataclay import api
            api.init()
            from people.model import Person
            backends = sorted(api.get_backends())
            p = Person("traced", 30)
            p.make_persistent(backend_id=backends[0])
            p.new_replica(backend_id=backends[1])
            print(json.dumps({"id": str(p.getID())}))
        """)).stdout.strip().splitlines()[-1])
        # run: one method call, in a client process of its own
        cluster.run_client(textwrap.dedent(f"""
            from dataclay import api
            api.init()
            from people.model import Person
            Person.get_by_id({made["id"]!r}).birthday()
        """))

        def complete(spans):
            calls = named(spans, "DataService/CallMethod", "pmclay-client", CLIENT)
            if len(calls) != 1:
                return False
            trace = [s for s in spans if s.trace_id == calls[0].trace_id]
            return (any(s.name.startswith("ee.method") for s in trace)
                    and any(s.kind == SERVER and s.service == "pmclay-dataservice" and "CallMethod" not in s.name
                            for s in trace))

        spans = receiver.wait_for(complete)
    # check: the client's call span is the root of one trace ...
    (call,) = named(spans, "DataService/CallMethod", "pmclay-client", CLIENT)
    trace = [s for s in spans if s.trace_id == call.trace_id]
    by_id = {s.span_id: s for s in trace}
    # ... whose Data Service server span is its child, with the current RPC conventions' attributes
    (server,) = [s for s in named(trace, "DataService/CallMethod", "pmclay-dataservice", SERVER)
                 if s.parent_id == call.span_id]
    assert server.attributes.get("rpc.system.name") == "grpc"
    assert server.attributes.get("rpc.method") == "dataclay.v1.DataService/CallMethod"
    assert server.attributes.get("rpc.response.status_code") == "OK"
    # (the Python client's gRPC instrumentation knows only the older ones)
    assert call.attributes.get("rpc.system") == "grpc" and call.attributes.get("rpc.method") == "CallMethod"
    # ... the environment's steps, recorded by the Data Service from the environment's timings, under it
    execute = one(trace, "ee.execute", name="ee.execute people.model.Person.birthday")
    method = one(trace, "ee.method", name="ee.method people.model.Person.birthday")
    assert method.parent_id == execute.span_id and server in ancestors(execute, by_id)
    assert execute.start <= method.start <= method.end <= execute.end
    assert server.start <= execute.start and execute.end <= server.end
    # ... and the replica's update, served by the other backend, in the same trace
    replica_updates = [s for s in trace if s.kind == SERVER and s.service == "pmclay-dataservice"
                       and s is not server and "CallMethod" not in s.name]
    assert replica_updates and all(server in ancestors(s, by_id) or s.links for s in replica_updates)
    # no span names an account, object or value
    assert not any(made["id"] in json.dumps(s.attributes) for s in trace)
    # the client's own gRPC metrics, under gRFC A66's names (gRPC's OpenTelemetry plugin), exported as it ended
    # (gRPC Python's plugin records no grpc.client.call.duration; with no retry policy an attempt is the call)
    client_metrics = {(name, point.get("grpc.method"), point.get("grpc.status")) for service, name, point
                      in receiver.metrics if service == "pmclay-client"}
    method = "dataclay.v1.DataService/CallMethod"
    assert ("grpc.client.attempt.started", method, None) in client_metrics, sorted(client_metrics)
    assert ("grpc.client.attempt.duration", method, "OK") in client_metrics, sorted(client_metrics)


def test_make_persistent_is_traced_to_the_logic_modules_registration(make_cluster):
    with OtlpReceiver() as receiver:
        cluster = make_cluster(backends=1, extra_env=traced_env(receiver))
        cluster.run_client(textwrap.dedent("""
            from dataclay import api
            api.init()
            from people.model import Person
            Person("registered", 3).make_persistent(alias="registered-person")
        """))

        def registered(spans):
            for client in named(spans, "DataService/MakePersistent", "pmclay-client", CLIENT):
                if named([s for s in spans if s.trace_id == client.trace_id], "LogicModule/RegisterObjects",
                         "pmclay-logicmodule", SERVER):
                    return True
            return False

        spans = receiver.wait_for(registered)
    (client,) = named(spans, "DataService/MakePersistent", "pmclay-client", CLIENT)
    trace = [s for s in spans if s.trace_id == client.trace_id]
    (registration,) = named(trace, "LogicModule/RegisterObjects", "pmclay-logicmodule", SERVER)
    assert {s.service for s in trace} >= {"pmclay-client", "pmclay-dataservice", "pmclay-logicmodule"}
    assert registration.start >= client.start


def test_without_an_endpoint_nothing_is_traced(make_cluster):
    with OtlpReceiver() as receiver:
        cluster = make_cluster(backends=1)       # the receiver listens, but nobody is told of it
        cluster.run_client("from dataclay import api\napi.init()\nfrom people.model import Person\n"
                           "p = Person('untraced', 1)\np.make_persistent()\np.birthday()")
        assert receiver.spans == [] and receiver.metrics == []
        imported = cluster.run_client("import sys\nfrom dataclay import api\napi.init()\n"
                                      "print(any(m.startswith(('opentelemetry', 'grpc_observability')) "
                                      "for m in sys.modules))")
        assert imported.stdout.strip().splitlines()[-1] == "False"
