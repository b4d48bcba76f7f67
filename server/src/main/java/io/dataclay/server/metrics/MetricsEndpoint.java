package io.dataclay.server.metrics;

import com.sun.net.httpserver.Authenticator;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import com.sun.net.httpserver.HttpsConfigurator;
import io.dataclay.common.OwnerOnlyFile;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.TlsSettings;
import io.grpc.netty.shaded.io.netty.handler.ssl.JdkSslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;

/**
 * Serves a registry in Prometheus' formats over HTTP, with Prometheus' own exporter, at
 * {@code /metrics}. Off unless a port is configured. On a loopback address it may be plain HTTP
 * (only this machine's users reach it); on any other address it needs the cluster's TLS (the
 * server's certificate, HTTPS) and a bearer token, which Prometheus sends from a file
 * ({@code authorization: {credentials_file: ...}} in its scrape configuration): a request without
 * it gets 401. When a token is configured it is required on loopback too; when TLS is configured
 * HTTPS is served on loopback too.
 */
public final class MetricsEndpoint implements AutoCloseable {
  static {
    // The JDK's HTTP server reads these once, when its first server starts: a connection that has
    // not sent its whole request (or finished its TLS handshake) within 5 s is closed, so that two
    // idle ones cannot hold both threads (client_java's own default is 60 s). Set only when unset.
    if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
      System.setProperty("sun.net.httpserver.maxReqTime", "5");
    }
    if (System.getProperty("sun.net.httpserver.maxRspTime") == null) {
      System.setProperty("sun.net.httpserver.maxRspTime", "10");
    }
  }

  /** Fewest characters a token may have. */
  public static final int MIN_TOKEN_LENGTH = 32;

  private final HTTPServer server;
  private final ExecutorService threads;

  private MetricsEndpoint(HTTPServer server, ExecutorService threads) {
    this.server = server;
    this.threads = threads;
  }

  /**
   * Serves {@code registry} on {@code host:port} (port 0: any free port).
   *
   * @param token the bearer token every request must present; null for none (loopback only)
   * @param hostSetting the setting naming the host, for messages
   * @param tokenSetting the setting naming the token file, for messages
   * @throws InvalidArgumentException naming the settings when the host does not resolve, or is not
   *     loopback and TLS or a token is missing
   * @throws IOException when the port cannot be bound
   */
  public static MetricsEndpoint start(PrometheusRegistry registry, String host, int port, TlsSettings tls,
      byte[] token, String hostSetting, String tokenSetting) throws IOException {
    InetAddress address = checkedAddress(host, tls, token, hostSetting, tokenSetting);
    // two threads: a scrape is a read of counters, and more would only let a flood take more CPU
    ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "metrics-http");
      t.setDaemon(true);
      return t;
    });
    HTTPServer.Builder builder = HTTPServer.builder()
        .inetAddress(address)
        .port(port)
        .registry(registry)
        .executorService(threads);
    if (tls.presentsCertificate()) {
      builder.httpsConfigurator(new HttpsConfigurator(sslContext(tls)));
    }
    if (token != null) {
      builder.authenticator(new BearerToken(token));
    }
    try {
      return new MetricsEndpoint(builder.buildAndStart(), threads);
    } catch (IOException | RuntimeException e) {
      threads.shutdownNow();
      throw e;
    }
  }

  /**
   * The address {@code host} names, when metrics may be served there as configured.
   *
   * @throws InvalidArgumentException naming the settings when the host does not resolve, or is not
   *     loopback and TLS or a token is missing
   */
  public static InetAddress checkedAddress(String host, TlsSettings tls, byte[] token, String hostSetting,
      String tokenSetting) {
    InetAddress address;
    try {
      address = InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new InvalidArgumentException("cannot serve metrics on " + host + " (" + hostSetting + "): the host name "
          + "does not resolve to an address of this machine");
    }
    if (!address.isLoopbackAddress() && (!tls.presentsCertificate() || token == null)) {
      throw new InvalidArgumentException(hostSetting + "=" + host + " serves metrics beyond this machine, which needs "
          + (tls.presentsCertificate() ? "" : "the cluster's TLS (DATACLAY_TLS_CA, DATACLAY_TLS_CERT, DATACLAY_TLS_KEY)"
          + (token == null ? " and " : ""))
          + (token == null ? "a bearer token (" + tokenSetting + ")" : "")
          + "; or leave " + hostSetting + " at 127.0.0.1 and let a local agent scrape it");
    }
    return address;
  }

  /**
   * The bearer token in {@code file} (setting {@code key}): its text without surrounding white space.
   *
   * @throws InvalidArgumentException naming the file when it is missing, others may read or write
   *     it, or it holds fewer than 32 characters
   */
  public static byte[] readToken(String key, Path file) {
    String token = OwnerOnlyFile.read(key, file).strip();
    if (token.length() < MIN_TOKEN_LENGTH || token.chars().anyMatch(c -> c <= ' ' || c > '~')) {
      throw new InvalidArgumentException(key + ": " + file + " must hold one token of at least " + MIN_TOKEN_LENGTH
          + " printable characters, no spaces (for instance: openssl rand -hex 32)");
    }
    return token.getBytes(StandardCharsets.US_ASCII);
  }

  /** The port bound. */
  public int port() {
    return server.getPort();
  }

  @Override
  public void close() {
    server.close();
    threads.shutdownNow();
  }

  private static SSLContext sslContext(TlsSettings tls) {
    try {
      var context = SslContextBuilder.forServer(tls.cert().stream(), tls.key().stream())
          .sslProvider(SslProvider.JDK)
          .build();
      return ((JdkSslContext) context).context();
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot serve metrics over TLS with " + tls.cert() + " and " + tls.key()
          + ": " + e.getMessage());
    }
  }

  /** Lets through requests whose Authorization header is "Bearer " and the token, compared in constant time. */
  private static final class BearerToken extends Authenticator {
    private final byte[] expected;

    BearerToken(byte[] token) {
      this.expected = ("Bearer " + new String(token, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Result authenticate(HttpExchange exchange) {
      String given = exchange.getRequestHeaders().getFirst("Authorization");
      if (given != null && MessageDigest.isEqual(expected, given.getBytes(StandardCharsets.UTF_8))) {
        return new Success(new HttpPrincipal("scraper", "metrics"));
      }
      exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"dataclay metrics\"");
      return new Failure(401);
    }
  }
}
