package io.dataclay.server.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The Data Service's span for an environment step carries the traceparent it sends, and records
 * the steps the environment reports as its children with their times, checked: bounded, clamped
 * into its own span, bad parents attached to it, never failing.
 */
class EnvironmentStepTest {
  private static final long T0 = 1_700_000_000_000_000_000L; // ns since the epoch
  private final InMemoryTracing tracing = new InMemoryTracing();
  private final AtomicLong now = new AtomicLong(T0);
  /** A clock at {@code now}, moved by the tests. */
  private final Clock clock = new Clock() {
    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      long n = now.get();
      return Instant.ofEpochSecond(n / 1_000_000_000L, n % 1_000_000_000L);
    }
  };

  private Context call(boolean sampled) {
    SpanContext remote = SpanContext.createFromRemoteParent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7",
        sampled ? TraceFlags.getSampled() : TraceFlags.getDefault(), TraceState.getDefault());
    return Context.root().with(Span.wrap(remote));
  }

  @Test
  void the_environments_steps_become_children_with_their_own_times() {
    // setup
    EnvironmentStep step = EnvironmentStep.start(tracing.tracer(), clock, call(true), "people.Person", "birthday");
    now.set(T0 + 1000);
    List<StepSpan> steps = List.of(
        new StepSpan("ee.execute", T0 + 100, T0 + 900, Map.of("k", "v"), "", 0),
        new StepSpan("ee.method people.Person.birthday", T0 + 200, T0 + 800, Map.of(), "ValueError: no", 1));
    // run
    step.end(steps, null);
    // verify: the traceparent names the step's span; the steps hang under it with their times
    SpanData ds = tracing.named("ee.call people.Person.birthday");
    assertTrue(step.traceparent().startsWith("00-4bf92f3577b34da6a3ce929d0e0e4736-" + ds.getSpanId() + "-0"),
        step.traceparent());
    assertEquals("00f067aa0ba902b7", ds.getParentSpanId());
    assertEquals(T0, ds.getStartEpochNanos());
    assertEquals(T0 + 1000, ds.getEndEpochNanos());
    SpanData execute = tracing.named("ee.execute");
    assertEquals(ds.getSpanId(), execute.getParentSpanId());
    assertEquals(T0 + 100, execute.getStartEpochNanos());
    assertEquals(T0 + 900, execute.getEndEpochNanos());
    assertEquals("v", execute.getAttributes().asMap().entrySet().iterator().next().getValue());
    SpanData method = tracing.named("ee.method people.Person.birthday");
    assertEquals(execute.getSpanId(), method.getParentSpanId());
    assertEquals(StatusCode.ERROR, method.getStatus().getStatusCode());
    assertEquals("ValueError: no", method.getStatus().getDescription());
    assertEquals(StatusCode.UNSET, execute.getStatus().getStatusCode());
  }

  @Test
  void malformed_steps_are_clamped_bounded_or_attached_to_the_call_and_never_fail_it() {
    // setup
    EnvironmentStep step = EnvironmentStep.start(tracing.tracer(), clock, call(true), "C", "m");
    now.set(T0 + 1000);
    Map<String, String> many = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      many.put("key" + i, "x".repeat(10_000));
    }
    List<StepSpan> steps = new ArrayList<>();
    steps.add(new StepSpan("early", T0 - 5_000_000, Long.MAX_VALUE, many, "", 0)); // times out of range
    steps.add(new StepSpan("backwards", T0 + 700, T0 + 300, Map.of(), "", 0));    // ends before it starts
    steps.add(new StepSpan("self", T0 + 10, T0 + 20, Map.of(), "", 3));           // its own index
    steps.add(new StepSpan("forward", T0 + 10, T0 + 20, Map.of(), "", 9));        // a later step
    steps.add(new StepSpan("negative", T0 + 10, T0 + 20, Map.of(), "", -4));
    steps.add(null);
    steps.add(new StepSpan(null, 0, 0, null, null, 0));                              // nothing set
    while (steps.size() < 100) {
      steps.add(new StepSpan("flood", T0, T0, Map.of(), "", 0));
    }
    // run
    step.end(steps, new IllegalStateException("failed"));
    // verify: at most 32 steps, each inside the call's span, under it, attributes bounded
    SpanData ds = tracing.named("ee.call C.m");
    assertEquals(StatusCode.ERROR, ds.getStatus().getStatusCode());
    List<SpanData> children = tracing.spans().stream().filter(s -> s != ds).toList();
    assertEquals(EnvironmentStep.MAX_SPANS - 1, children.size()); // the null one is dropped
    for (SpanData c : children) {
      assertEquals(ds.getSpanId(), c.getParentSpanId(), c.getName());
      assertTrue(c.getStartEpochNanos() >= T0 && c.getEndEpochNanos() <= T0 + 1000, c.toString());
      assertTrue(c.getStartEpochNanos() <= c.getEndEpochNanos(), c.toString());
    }
    SpanData early = tracing.named("early");
    assertEquals(EnvironmentStep.MAX_ATTRIBUTES, early.getAttributes().size());
    early.getAttributes().forEach((k, v) -> assertTrue(v.toString().length() <= EnvironmentStep.MAX_TEXT));
    assertEquals(T0, early.getStartEpochNanos());
    assertEquals(T0 + 1000, early.getEndEpochNanos());
    SpanData backwards = tracing.named("backwards");
    assertEquals(T0 + 700, backwards.getStartEpochNanos());
    assertEquals(T0 + 700, backwards.getEndEpochNanos());
    tracing.named("ee.step"); // the nameless one gets a name
  }

  @Test
  void an_unsampled_call_opens_no_span_and_sends_no_traceparent() {
    // run
    EnvironmentStep step = EnvironmentStep.start(tracing.tracer(), clock, call(false), "C", "m");
    step.end(List.of(new StepSpan("ee.execute", T0, T0 + 1, Map.of(), "", 0)), null);
    EnvironmentStep none = EnvironmentStep.start(tracing.tracer(), clock, Context.root(), "C", "m");
    // verify
    assertEquals("", step.traceparent());
    assertEquals("", none.traceparent());
    assertEquals(List.of(), tracing.spans());
  }

  @Test
  void a_step_ends_once_whatever_ends_it_first() {
    // setup
    EnvironmentStep step = EnvironmentStep.start(tracing.tracer(), clock, call(true), "C", "m");
    // run: the result, then the future's completion
    step.end(List.of(new StepSpan("ee.execute", T0, T0, Map.of(), "", 0)), null);
    step.end(new IllegalStateException("late"));
    // verify
    assertEquals(2, tracing.spans().size());
    assertEquals(StatusCode.UNSET, tracing.named("ee.call C.m").getStatus().getStatusCode());
  }
}
