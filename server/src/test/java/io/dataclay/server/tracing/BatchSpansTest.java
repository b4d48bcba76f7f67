package io.dataclay.server.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A batch's span is a child of the first traced call it serves and links the others. */
class BatchSpansTest {
  private final InMemoryTracing tracing = new InMemoryTracing();

  private Span call(String name) {
    Span s = tracing.tracer().spanBuilder(name).startSpan();
    s.end();
    return s;
  }

  @Test
  void a_batch_is_the_child_of_the_first_calls_context_and_links_the_others() {
    // setup: three calls, and one that is not traced
    Span first = call("first");
    Span second = call("second");
    Span third = call("third");
    List<Context> calls = List.of(Context.root(), Context.root().with(first), Context.root().with(second),
        Context.root().with(third));
    // run
    BatchSpans.start(tracing.tracer(), "ds.register_objects", calls).end();
    // verify
    SpanData batch = tracing.named("ds.register_objects");
    assertEquals(first.getSpanContext().getTraceId(), batch.getTraceId());
    assertEquals(first.getSpanContext().getSpanId(), batch.getParentSpanId());
    assertEquals(List.of(second.getSpanContext(), third.getSpanContext()),
        batch.getLinks().stream().map(LinkData::getSpanContext).toList());
  }

  @Test
  void a_batch_of_untraced_calls_opens_no_trace() {
    // run
    Span batch = BatchSpans.start(tracing.tracer(), "ds.register_objects", List.of(Context.root(), Context.root()));
    batch.end();
    // verify
    assertFalse(batch.getSpanContext().isValid());
    assertEquals(List.of(), tracing.spans().stream().filter(s -> s.getName().startsWith("ds.")).toList());
    assertEquals(SpanContext.getInvalid(), batch.getSpanContext());
  }
}
