package io.dataclay.server.metrics;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.TlsSettings;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * The three settings of a server's metrics endpoint, the same for the Logic Module and the Data
 * Service (each lists them in its own settings table from the constants here).
 *
 * @param port the port, 0 for any free one; null when no metrics are served
 * @param host the address to serve on
 * @param token the bearer token scrapers present; null for none
 */
public record MetricsSettings(Integer port, String host, byte[] token) {
  public static final String PORT = "DATACLAY_METRICS_PORT";
  public static final String PORT_MEANING = "Port of the Prometheus metrics endpoint (/metrics); unset: no metrics"
      + " are served; 0: any free port (logged).";
  public static final String HOST = "DATACLAY_METRICS_HOST";
  public static final String HOST_DEFAULT = "127.0.0.1";
  public static final String HOST_MEANING = "Address the metrics endpoint listens on. Beyond loopback it needs the"
      + " cluster's TLS (it serves HTTPS with the server's certificate) and DATACLAY_METRICS_TOKEN_FILE.";
  public static final String TOKEN_FILE = "DATACLAY_METRICS_TOKEN_FILE";
  public static final String TOKEN_FILE_MEANING = "File (mode 0600) holding the bearer token every scrape must send"
      + " (32+ printable characters; Prometheus: authorization.credentials_file); unset: none, loopback only.";

  /**
   * The settings in {@code value} (key -> its text, null when unset or empty).
   *
   * @throws InvalidArgumentException naming the setting that is wrong
   */
  public static MetricsSettings from(Function<String, String> value) {
    String port = value.apply(PORT);
    String host = value.apply(HOST);
    String tokenFile = value.apply(TOKEN_FILE);
    Integer number = null;
    if (port != null) {
      number = port.chars().allMatch(Character::isDigit) && port.length() <= 5 ? Integer.parseInt(port) : -1;
      if (number < 0 || number > 65535) {
        throw new InvalidArgumentException(PORT + " must be a port number from 0 to 65535 (0: any free port), or unset"
            + " to serve no metrics; not '" + port + "'");
      }
    }
    return new MetricsSettings(number, host == null ? HOST_DEFAULT : host,
        tokenFile == null ? null : MetricsEndpoint.readToken(TOKEN_FILE, Path.of(tokenFile)));
  }

  /** Whether metrics are served. */
  public boolean enabled() {
    return port != null;
  }

  /**
   * Serves {@code registry} as these settings say, with {@code tls}'s certificate.
   *
   * @throws IllegalStateException when metrics are off
   * @throws InvalidArgumentException when the host needs TLS or a token that is not configured
   * @throws IOException when the port cannot be bound
   */
  public MetricsEndpoint start(PrometheusRegistry registry, TlsSettings tls) throws IOException {
    if (port == null) {
      throw new IllegalStateException(PORT + " is not set");
    }
    try {
      return MetricsEndpoint.start(registry, host, port, tls, token, HOST, TOKEN_FILE);
    } catch (IOException e) {
      throw new IOException("cannot serve metrics on " + host + ":" + port + " (" + PORT + ", " + HOST + "): "
          + e.getMessage(), e);
    }
  }

  /**
   * Checks, when metrics are on, that they may be served where configured (a server checks this
   * with the rest of its configuration, before it starts anything).
   *
   * @throws InvalidArgumentException naming the settings when the host does not resolve, or is not
   *     loopback and TLS or a token is missing
   */
  public MetricsSettings checkedWith(TlsSettings tls) {
    if (port != null) {
      MetricsEndpoint.checkedAddress(host, tls, token, HOST, TOKEN_FILE);
    }
    return this;
  }

  /** The settings without the token's value. */
  @Override
  public String toString() {
    return "metrics " + (port == null ? "off" : host + ":" + port + (token == null ? "" : " with a token"));
  }
}
