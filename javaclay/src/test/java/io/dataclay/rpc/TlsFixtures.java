package io.dataclay.rpc;

import java.net.URISyntaxException;
import java.nio.file.Path;

/**
 * The test certificates in src/test/resources/tls (made by pyclay's certificates module, see
 * README there): a cluster CA, a server and a peer certificate it signed, an expired one it
 * signed, and another CA with a certificate of its own ("stranger"). All name 127.0.0.1 and localhost.
 */
final class TlsFixtures {
  private TlsFixtures() {}

  /** The path of fixture {@code name}. */
  static Path file(String name) {
    try {
      return Path.of(TlsFixtures.class.getResource("/tls/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Server settings: the cluster CA and the pair {@code name}.pem / {@code name}.key. */
  static TlsSettings server(String name) {
    return TlsSettings.forServer(pem("DATACLAY_TLS_CA", "ca.pem"), pem("DATACLAY_TLS_CERT", name + ".pem"),
        pem("DATACLAY_TLS_KEY", name + ".key"));
  }

  /** Client settings trusting the CA in {@code caFile}. */
  static TlsSettings client(String caFile) {
    return TlsSettings.of(pem("DATACLAY_TLS_CA", caFile), null, null);
  }

  /** Fixture {@code name}, read as setting {@code setting} names it. */
  static PemFile pem(String setting, String name) {
    return PemFile.read(setting, file(name).toString());
  }
}
