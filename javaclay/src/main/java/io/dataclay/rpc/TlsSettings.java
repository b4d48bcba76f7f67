package io.dataclay.rpc;

import io.dataclay.exceptions.InvalidArgumentException;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * How one process's gRPC connections are secured: plaintext, TLS trusting the cluster CA (a
 * client), or TLS with the process's own certificate and key as well (a server, which also
 * presents that certificate when it calls another server: mutual TLS). Built once from the
 * configured PEM files; channels ({@code io.dataclay.client.Channels}) and servers
 * ({@code io.dataclay.server.ServerTransport}) take their credentials from here.
 *
 * @param ca the cluster CA file (null in plaintext)
 * @param cert this process's own certificate (null for user clients and in plaintext)
 * @param key the private key of {@code cert} (null when it is)
 */
public record TlsSettings(PemFile ca, PemFile cert, PemFile key) {
  private static final TlsSettings PLAINTEXT = new TlsSettings(null, null, null);

  /**
   * The settings of the files configured (any may be null): none is plaintext, a CA alone a client,
   * all three a server.
   *
   * @throws InvalidArgumentException naming the settings when a certificate comes without its key,
   *     a key without its certificate, either without a CA, or a file does not hold what it should
   */
  public TlsSettings {
    if ((cert == null) != (key == null)) {
      PemFile given = cert == null ? key : cert;
      throw new InvalidArgumentException(given + " is set without " + (cert == null ? "a certificate" : "its key")
          + ": a certificate and its private key go together");
    }
    if (cert != null && ca == null) {
      throw new InvalidArgumentException(cert + " is set without a CA: the CA file verifies the certificates "
          + "of the other servers and of callers that present one");
    }
    if (ca != null) {
      ca.certificates();
    }
    if (cert != null) {
      cert.certificates();
      key.checkPrivateKey();
    }
  }

  /** No TLS: every connection in plaintext. */
  public static TlsSettings plaintext() {
    return PLAINTEXT;
  }

  /** The settings of the files configured, checked as the constructor does (any may be null). */
  public static TlsSettings of(PemFile ca, PemFile cert, PemFile key) {
    return ca == null && cert == null && key == null ? PLAINTEXT : new TlsSettings(ca, cert, key);
  }

  /**
   * The settings of a server: the three files, or none of them (plaintext).
   *
   * @throws InvalidArgumentException as {@link #of}, and when the CA comes without the server's own
   *     certificate and key
   */
  public static TlsSettings forServer(PemFile ca, PemFile cert, PemFile key) {
    TlsSettings settings = of(ca, cert, key);
    if (settings.enabled() && !settings.presentsCertificate()) {
      throw new InvalidArgumentException(ca + " is set without a certificate and key: a server serves TLS with a "
          + "certificate of its own, signed by that CA");
    }
    return settings;
  }

  /** Whether connections use TLS. */
  public boolean enabled() {
    return ca != null;
  }

  /** Whether this process presents a certificate of its own (servers do; user clients do not). */
  public boolean presentsCertificate() {
    return cert != null;
  }

  /** The certificates of the cluster CA (empty in plaintext). */
  public List<X509Certificate> caCertificates() {
    return ca == null ? List.of() : ca.certificates();
  }

  /** Credentials for a channel: the CA as the only trust anchor, plus this process's certificate when it has one. */
  public ChannelCredentials channelCredentials() {
    if (ca == null) {
      return InsecureChannelCredentials.create();
    }
    try {
      TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(ca.stream());
      if (cert != null) {
        b.keyManager(cert.stream(), key.stream());
      }
      return b.build();
    } catch (IOException | IllegalArgumentException e) {
      throw new InvalidArgumentException(describeFailure(e));
    }
  }

  /**
   * Credentials for a server: its certificate and key; a caller's certificate is optional (user
   * clients have none) and, when presented, must be signed by the CA or the handshake fails.
   *
   * @throws IllegalStateException when this process has no certificate of its own
   */
  public ServerCredentials serverCredentials() {
    if (ca == null) {
      return InsecureServerCredentials.create();
    }
    if (cert == null) {
      throw new IllegalStateException("a TLS server needs its own certificate and key, not only " + ca);
    }
    try {
      return TlsServerCredentials.newBuilder()
          .keyManager(cert.stream(), key.stream())
          .trustManager(ca.stream())
          .clientAuth(TlsServerCredentials.ClientAuth.OPTIONAL)
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (IllegalArgumentException e) {
      throw new InvalidArgumentException(describeFailure(e));
    }
  }

  /** What the settings are, by the CA's and certificate's paths (nothing of the key), for logs. */
  @Override
  public String toString() {
    if (ca == null) {
      return "plaintext";
    }
    return "TLS (" + ca + (cert == null ? "" : ", " + cert) + ")";
  }

  private String describeFailure(Exception e) {
    return "cannot use " + (cert == null ? ca.toString() : cert + " with its key (" + key.setting() + ")")
        + ": " + e.getMessage();
  }
}
