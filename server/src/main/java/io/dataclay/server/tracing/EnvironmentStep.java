package io.dataclay.server.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Data Service's span for one call it hands to an execution environment ("ee.call
 * Class.method"), opened only when the call's trace is sampled, and the spans the environment
 * reports for its own steps recorded as its children. The environment runs tenant code: what it
 * reports is bounded (at most {@link #MAX_SPANS} spans, {@link #MAX_ATTRIBUTES} attributes each,
 * names and values cut to {@link #MAX_TEXT} characters), its times are clamped into this span's, a
 * parent that is not an earlier step makes the step a child of this span, and a step that cannot
 * be recorded is dropped: nothing it sends can fail the call.
 */
public final class EnvironmentStep {
  /** The most steps recorded for one call; the rest are dropped. */
  public static final int MAX_SPANS = 32;
  /** The most attributes recorded for one step; the rest are dropped. */
  public static final int MAX_ATTRIBUTES = 16;
  /** The longest name, attribute key or value, or error message kept; longer ones are cut. */
  public static final int MAX_TEXT = 256;

  private static final EnvironmentStep UNTRACED = new EnvironmentStep(null, null, null, 0, "");
  private static final AttributeKey<String> CLASS = AttributeKey.stringKey("dataclay.class");
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("dataclay.method");

  private final Tracer tracer;
  private final Clock clock;
  private final Span span;
  private final long startNanos;
  private final String traceparent;
  private final AtomicBoolean ended = new AtomicBoolean();

  private EnvironmentStep(Tracer tracer, Clock clock, Span span, long startNanos, String traceparent) {
    this.tracer = tracer;
    this.clock = clock;
    this.span = span;
    this.startNanos = startNanos;
    this.traceparent = traceparent;
  }

  /**
   * Opens the span of the call of {@code method} on a {@code className} object when the span
   * current in {@code parent} is sampled; else a step that records nothing and has no traceparent.
   */
  public static EnvironmentStep start(Tracer tracer, Clock clock, Context parent, String className, String method) {
    if (!Span.fromContext(parent).getSpanContext().isSampled()) {
      return UNTRACED;
    }
    long start = nanos(clock.instant());
    Span span = tracer.spanBuilder("ee.call " + cut(className) + "." + cut(method))
        .setParent(parent)
        .setSpanKind(SpanKind.INTERNAL)
        .setStartTimestamp(start, TimeUnit.NANOSECONDS)
        .setAttribute(CLASS, cut(className))
        .setAttribute(METHOD, cut(method))
        .startSpan();
    if (!span.getSpanContext().isSampled()) {
      span.end();
      return UNTRACED;
    }
    Map<String, String> carrier = new HashMap<>();
    W3CTraceContextPropagator.getInstance().inject(parent.with(span), carrier, Map::put);
    return new EnvironmentStep(tracer, clock, span, start, carrier.getOrDefault("traceparent", ""));
  }

  /** An untraced step: nothing recorded, no traceparent (for calls that are not traced). */
  public static EnvironmentStep untraced() {
    return UNTRACED;
  }

  /**
   * The context of work done for this step (the environment's nested calls): {@code call} with this
   * step's span, or {@code call} itself when untraced.
   */
  public Context context(Context call) {
    return span == null ? call : call.with(span);
  }

  /** The W3C traceparent to send with the call (ExecuteRequest.traceparent); empty when untraced. */
  public String traceparent() {
    return traceparent;
  }

  /**
   * Records the environment's {@code steps} as children (checked as the class says) and ends this
   * span now, as failed when {@code error} is not null. Nothing when untraced or already ended;
   * never throws.
   */
  public void end(List<StepSpan> steps, Throwable error) {
    if (span == null || !ended.compareAndSet(false, true)) {
      return;
    }
    long end = Math.max(startNanos, nanos(clock.instant()));
    try {
      List<Span> recorded = new ArrayList<>();
      for (int i = 0; i < Math.min(steps.size(), MAX_SPANS); i++) {
        recorded.add(record(steps.get(i), recorded, end));
      }
    } catch (RuntimeException malformed) {
      // whatever the environment sent, the call's own span is still ended
    }
    if (error != null) {
      span.setStatus(StatusCode.ERROR, cut(error.getClass().getSimpleName()));
    }
    span.end(end, TimeUnit.NANOSECONDS);
  }

  /** Ends this span now with no steps (the call did not reach the environment, or failed on the way). */
  public void end(Throwable error) {
    end(List.of(), error);
  }

  // One step as a child of this span or of an earlier step; null (its children then attach to
  // this span) when it cannot be recorded.
  private Span record(StepSpan step, List<Span> earlier, long end) {
    if (step == null) {
      return null;
    }
    try {
      int parentIndex = step.parent();
      Span parent = parentIndex >= 1 && parentIndex <= earlier.size() && earlier.get(parentIndex - 1) != null
          ? earlier.get(parentIndex - 1) : span;
      long start = clamp(step.startUnixNano(), startNanos, end);
      long stop = clamp(step.endUnixNano(), start, end);
      String name = step.name() == null || step.name().isBlank() ? "ee.step" : cut(step.name());
      SpanBuilder builder = tracer.spanBuilder(name)
          .setParent(Context.root().with(parent))
          .setSpanKind(SpanKind.INTERNAL)
          .setStartTimestamp(start, TimeUnit.NANOSECONDS);
      if (step.attributes() != null) {
        step.attributes().entrySet().stream()
            .filter(e -> e.getKey() != null && !e.getKey().isBlank() && e.getValue() != null)
            .limit(MAX_ATTRIBUTES)
            .forEach(e -> builder.setAttribute(cut(e.getKey()), cut(e.getValue())));
      }
      Span child = builder.startSpan();
      if (step.error() != null && !step.error().isEmpty()) {
        child.setStatus(StatusCode.ERROR, cut(step.error()));
      }
      child.end(stop, TimeUnit.NANOSECONDS);
      return child;
    } catch (RuntimeException malformed) {
      return null;
    }
  }

  private static long clamp(long value, long low, long high) {
    return Math.max(low, Math.min(high, value));
  }

  private static long nanos(Instant t) {
    return TimeUnit.SECONDS.toNanos(t.getEpochSecond()) + t.getNano();
  }

  private static String cut(String s) {
    return s.length() <= MAX_TEXT ? s : s.substring(0, MAX_TEXT);
  }
}
