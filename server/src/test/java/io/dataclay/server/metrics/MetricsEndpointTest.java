package io.dataclay.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.TlsFixtures;
import io.dataclay.rpc.TlsSettings;
import io.grpc.netty.shaded.io.netty.handler.ssl.JdkSslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The metrics endpoint: loopback by default, a bearer token when configured, HTTPS and a token beyond loopback. */
@Timeout(30)
class MetricsEndpointTest {
  private static final byte[] TOKEN = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private final ServerMetrics metrics = new ServerMetrics();

  private MetricsEndpoint start(String host, TlsSettings tls, byte[] token) throws IOException {
    return MetricsEndpoint.start(metrics.registry(), host, 0, tls, token, "DATACLAY_METRICS_HOST",
        "DATACLAY_METRICS_TOKEN_FILE");
  }

  private static HttpResponse<String> get(HttpClient client, String url, String authorization)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void on_loopback_without_a_token_it_serves_the_registry_in_prometheus_text() throws Exception {
    try (MetricsEndpoint endpoint = start("127.0.0.1", TlsSettings.plaintext(), null)) {
      HttpResponse<String> r = get(HttpClient.newHttpClient(), "http://127.0.0.1:" + endpoint.port() + "/metrics", null);
      assertEquals(200, r.statusCode());
      assertTrue(r.body().contains("# TYPE jvm_memory_used_bytes gauge"), r.body());
    }
  }

  @Test
  void with_a_token_every_path_refuses_a_request_without_it_or_with_another() throws Exception {
    try (MetricsEndpoint endpoint = start("127.0.0.1", TlsSettings.plaintext(), TOKEN)) {
      HttpClient client = HttpClient.newHttpClient();
      String base = "http://127.0.0.1:" + endpoint.port();
      for (String path : new String[] {"/metrics", "/", "/-/healthy"}) {
        assertEquals(401, get(client, base + path, null).statusCode(), path);
        assertEquals(401, get(client, base + path, "Bearer 0123456789abcdef0123456789abcdeX").statusCode(), path);
        assertEquals(401, get(client, base + path, "Basic MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=").statusCode(),
            path);
      }
      assertEquals(200, get(client, base + "/metrics", "Bearer " + new String(TOKEN, StandardCharsets.US_ASCII))
          .statusCode());
    }
  }

  @Test
  void beyond_loopback_it_refuses_to_start_without_tls_and_a_token_and_says_what_to_set() {
    InvalidArgumentException neither = assertThrows(InvalidArgumentException.class,
        () -> start("0.0.0.0", TlsSettings.plaintext(), null));
    assertTrue(neither.getMessage().contains("DATACLAY_TLS_CERT")
        && neither.getMessage().contains("DATACLAY_METRICS_TOKEN_FILE"), neither.getMessage());
    InvalidArgumentException noToken = assertThrows(InvalidArgumentException.class,
        () -> start("0.0.0.0", TlsFixtures.server("server"), null));
    assertTrue(noToken.getMessage().contains("DATACLAY_METRICS_TOKEN_FILE")
        && !noToken.getMessage().contains("DATACLAY_TLS_CERT"), noToken.getMessage());
    InvalidArgumentException noTls = assertThrows(InvalidArgumentException.class,
        () -> start("0.0.0.0", TlsSettings.plaintext(), TOKEN));
    assertTrue(noTls.getMessage().contains("DATACLAY_TLS_CERT")
        && !noTls.getMessage().contains("DATACLAY_METRICS_TOKEN_FILE"), noTls.getMessage());
  }

  @Test
  void with_the_clusters_tls_it_serves_https_with_the_servers_certificate_and_no_plain_http() throws Exception {
    try (MetricsEndpoint endpoint = start("127.0.0.1", TlsFixtures.server("server"), TOKEN)) {
      SSLContext trustingCa = ((JdkSslContext) SslContextBuilder.forClient()
          .trustManager(TlsFixtures.file("ca.pem").toFile()).sslProvider(SslProvider.JDK).build()).context();
      HttpClient client = HttpClient.newBuilder().sslContext(trustingCa).build();
      assertEquals(200, get(client, "https://127.0.0.1:" + endpoint.port() + "/metrics",
          "Bearer " + new String(TOKEN, StandardCharsets.US_ASCII)).statusCode());
      assertThrows(IOException.class, () -> get(HttpClient.newHttpClient(), "http://127.0.0.1:" + endpoint.port()
          + "/metrics", "Bearer " + new String(TOKEN, StandardCharsets.US_ASCII)));
    }
  }

  @Test
  void a_token_file_others_can_read_or_a_short_token_is_refused(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("token");
    Files.writeString(file, new String(TOKEN, StandardCharsets.US_ASCII) + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
    assertTrue(assertThrows(InvalidArgumentException.class, () -> MetricsEndpoint.readToken("K", file))
        .getMessage().contains("chmod 600"));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    assertEquals(new String(TOKEN, StandardCharsets.US_ASCII),
        new String(MetricsEndpoint.readToken("K", file), StandardCharsets.US_ASCII));
    Files.writeString(file, "short");
    assertTrue(assertThrows(InvalidArgumentException.class, () -> MetricsEndpoint.readToken("K", file))
        .getMessage().contains("at least 32"));
  }

  @Test
  void a_port_that_is_not_one_is_refused_by_name_and_unset_means_off() {
    assertTrue(assertThrows(InvalidArgumentException.class,
        () -> MetricsSettings.from(k -> k.equals(MetricsSettings.PORT) ? "90000" : null))
        .getMessage().startsWith("DATACLAY_METRICS_PORT must be a port number"));
    assertEquals(false, MetricsSettings.from(k -> null).enabled());
    assertEquals("127.0.0.1", MetricsSettings.from(k -> null).host());
  }
}
