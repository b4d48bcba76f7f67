package io.dataclay.server.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.List;

/**
 * Spans for work done in one go for several calls on another thread (a group commit, a batch of
 * changes): the span belongs to the trace of the first traced call it serves, as its child, and
 * links the spans of the other traced calls (at most {@link #MAX_LINKS}). Made current while the
 * batch is sent, it is the parent of the outgoing call's client span, so the receiving server's
 * span joins that trace too.
 */
public final class BatchSpans {
  /** The most calls a batch's span links besides its parent. */
  public static final int MAX_LINKS = 64;

  private BatchSpans() {}

  /**
   * Starts the span {@code name} for a batch serving the calls whose contexts (captured when they
   * enqueued their work) are {@code calls}: a child of the first whose span is sampled (else of the
   * first with a span), linking the others' spans. When none of them is traced, the invalid span
   * (nothing recorded, making it current changes nothing): untraced work opens no trace of its own.
   */
  public static Span start(Tracer tracer, String name, List<Context> calls) {
    Context parent = null;
    for (Context c : calls) {
      SpanContext s = Span.fromContext(c).getSpanContext();
      if (s.isValid() && (parent == null || s.isSampled() && !Span.fromContext(parent).getSpanContext().isSampled())) {
        parent = c;
      }
    }
    if (parent == null) {
      return Span.getInvalid();
    }
    SpanContext first = Span.fromContext(parent).getSpanContext();
    SpanBuilder builder = tracer.spanBuilder(name).setParent(parent).setSpanKind(SpanKind.INTERNAL)
        .setAttribute("dataclay.batch.calls", calls.size());
    int links = 0;
    for (Context c : calls) {
      SpanContext s = Span.fromContext(c).getSpanContext();
      if (s.isValid() && !s.equals(first) && links < MAX_LINKS) {
        builder.addLink(s);
        links++;
      }
    }
    return builder.startSpan();
  }
}
