package io.dataclay.rpc;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The test certificates in src/test/resources/tls (made by pyclay's certificates module, see
 * README there): a cluster CA, a server and a peer certificate it signed, an expired one it
 * signed, and another CA with a certificate of its own ("stranger"). All name 127.0.0.1 and localhost.
 * Public for the server module's tests, which take it from this module's test-jar.
 */
public final class TlsFixtures {
  private TlsFixtures() {}

  /**
   * The path of fixture {@code name}; copied out to a temporary file when this class is read from a
   * jar (the test-jar another module's tests use once it has been packaged).
   */
  public static Path file(String name) {
    URL url = TlsFixtures.class.getResource("/tls/" + name);
    try {
      if ("file".equals(url.getProtocol())) {
        return Path.of(url.toURI());
      }
      Path copy = Files.createTempFile("tls-", "-" + name);
      copy.toFile().deleteOnExit();
      try (InputStream in = url.openStream()) {
        Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
      }
      return copy;
    } catch (URISyntaxException | IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Server settings: the cluster CA and the pair {@code name}.pem / {@code name}.key. */
  public static TlsSettings server(String name) {
    return TlsSettings.forServer(pem("DATACLAY_TLS_CA", "ca.pem"), pem("DATACLAY_TLS_CERT", name + ".pem"),
        pem("DATACLAY_TLS_KEY", name + ".key"));
  }

  /** Client settings trusting the CA in {@code caFile}. */
  public static TlsSettings client(String caFile) {
    return TlsSettings.of(pem("DATACLAY_TLS_CA", caFile), null, null);
  }

  /** Fixture {@code name}, read as setting {@code setting} names it. */
  public static PemFile pem(String setting, String name) {
    return PemFile.read(setting, file(name).toString());
  }
}
