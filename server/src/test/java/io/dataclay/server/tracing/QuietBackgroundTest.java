package io.dataclay.server.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingDecision;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A heartbeat or ping starts no trace; inside a traced call, and any other call, the sampler decides. */
class QuietBackgroundTest {
  private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private final Sampler sampler = new QuietBackground(Sampler.parentBased(Sampler.alwaysOn()));

  private SamplingDecision decide(Context parent, String name) {
    return sampler.shouldSample(parent, TRACE, name, SpanKind.CLIENT, Attributes.empty(), List.of()).getDecision();
  }

  @Test
  void periodic_calls_start_no_trace_but_join_a_traced_call() {
    // setup
    Context traced = Context.root().with(Span.wrap(SpanContext.create(TRACE, "00f067aa0ba902b7",
        TraceFlags.getSampled(), TraceState.getDefault())));
    // run, verify
    assertEquals(SamplingDecision.DROP, decide(Context.root(), "dataclay.v1.LogicModule/Heartbeat"));
    assertEquals(SamplingDecision.DROP, decide(Context.root(), "dataclay.v1.Liveness/Ping"));
    assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(traced, "dataclay.v1.Liveness/Ping"));
    assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(Context.root(), "dataclay.v1.DataService/CallMethod"));
  }
}
