package io.dataclay.server.tracing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tracing is off, the no-op OpenTelemetry, unless an OTLP endpoint is set. */
class TracingTest {
  @Test
  void without_an_endpoint_tracing_is_the_noop() {
    // run
    Tracing tracing = Tracing.fromEnvironment(Map.of("OTEL_SERVICE_NAME", "x", "OTEL_TRACES_SAMPLER", "always_on"),
        "pmclay-test");
    // verify
    assertFalse(tracing.enabled());
    assertSame(OpenTelemetry.noop(), tracing.openTelemetry());
    assertFalse(tracing.tracer().spanBuilder("s").startSpan().getSpanContext().isValid());
    assertFalse(Tracing.enabledBy(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", " ")));
  }

  @Test
  void an_endpoint_turns_the_sdk_on_with_the_servers_service_name() {
    // run
    Tracing tracing = Tracing.fromEnvironment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
        "pmclay-test");
    try {
      // verify: an SDK, named for the server, no metrics or logs exported
      assertTrue(tracing.enabled());
      OpenTelemetrySdk sdk = (OpenTelemetrySdk) tracing.openTelemetry();
      assertTrue(sdk.getSdkTracerProvider().toString().contains("service.name=\"pmclay-test\""),
          sdk.getSdkTracerProvider().toString());
      assertFalse(sdk.getSdkMeterProvider().toString().contains("Otlp"), sdk.getSdkMeterProvider().toString());
      assertFalse(sdk.getSdkLoggerProvider().toString().contains("Otlp"), sdk.getSdkLoggerProvider().toString());
      assertTrue(tracing.tracer().spanBuilder("s").startSpan().getSpanContext().isValid());
    } finally {
      tracing.close();
    }
  }

  @Test
  void a_protocol_without_a_sender_here_is_a_configuration_error_that_names_it() {
    // run
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tracing.fromEnvironment(
        Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"), "pmclay-test", Map.of(
            "otel.exporter.otlp.protocol", "grpc")));
    // verify
    assertTrue(e.getMessage().contains("Grpc"), e.getMessage());
  }

  @Test
  void a_start_with_bad_settings_says_they_are_the_otel_ones_and_installs_nothing() {
    // run
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tracing.installFrom(
        () -> Tracing.fromEnvironment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"), "pmclay-test",
            Map.of("otel.exporter.otlp.protocol", "grpc"))));
    // verify
    assertTrue(e.getMessage().startsWith("bad tracing configuration (OTEL_*): "), e.getMessage());
    assertFalse(Tracing.current().enabled());
  }

  @Test
  void the_traces_endpoint_alone_turns_it_on() {
    assertTrue(Tracing.enabledBy(Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces")));
  }
}
