package io.dataclay.server.tracing;

import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;

/** A tracer whose ended spans are kept in memory, for the tests. */
final class InMemoryTracing {
  private final InMemorySpanExporter exported = InMemorySpanExporter.create();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build();

  /** The tracer. */
  Tracer tracer() {
    return provider.get("test");
  }

  /** The spans ended so far, in the order they ended. */
  List<SpanData> spans() {
    return exported.getFinishedSpanItems();
  }

  /** The ended span named {@code name}. */
  SpanData named(String name) {
    return spans().stream().filter(s -> s.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no span " + name + " in " + spans()));
  }
}
