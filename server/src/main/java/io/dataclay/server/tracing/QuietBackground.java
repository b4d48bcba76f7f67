package io.dataclay.server.tracing;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;
import java.util.List;
import java.util.Set;

/**
 * The configured sampler, except that the cluster's own periodic calls (a backend's heartbeat,
 * liveness pings) start no trace of their own: made every second or so by every backend, they
 * would fill the tracing backend with traces of nothing. Inside a traced call they are kept.
 */
final class QuietBackground implements Sampler {
  /** The RPCs, as the gRPC instrumentation names their spans, that start no trace. */
  static final Set<String> PERIODIC = Set.of("dataclay.v1.LogicModule/Heartbeat", "dataclay.v1.Liveness/Ping");

  private final Sampler delegate;

  QuietBackground(Sampler delegate) {
    this.delegate = delegate;
  }

  @Override
  public SamplingResult shouldSample(Context parentContext, String traceId, String name, SpanKind spanKind,
      Attributes attributes, List<LinkData> parentLinks) {
    if (!Span.fromContext(parentContext).getSpanContext().isValid() && PERIODIC.contains(name)) {
      return SamplingResult.drop();
    }
    return delegate.shouldSample(parentContext, traceId, name, spanKind, attributes, parentLinks);
  }

  @Override
  public String getDescription() {
    return "QuietBackground{" + delegate.getDescription() + "}";
  }
}
