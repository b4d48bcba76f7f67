package io.dataclay.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsSettingsTest {
  @TempDir
  Path dir;

  @Test
  void a_missing_file_is_named_with_its_setting() {
    String missing = dir.resolve("ca.pem").toString();
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> PemFile.read("DATACLAY_TLS_CA", missing));
    assertEquals("DATACLAY_TLS_CA=" + missing + ": no such file", e.getMessage());
  }

  @Test
  void a_ca_file_without_a_certificate_is_refused() throws IOException {
    Path notPem = Files.writeString(dir.resolve("ca.pem"), "hello\n");
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> TlsSettings.of(PemFile.read("DATACLAY_TLS_CA", notPem.toString()), null, null));
    assertTrue(e.getMessage().startsWith("DATACLAY_TLS_CA=" + notPem + ": not a PEM certificate"), e.getMessage());
  }

  @Test
  void a_certificate_without_its_key_is_refused() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> TlsSettings.of(
        TlsFixtures.pem("DATACLAY_TLS_CA", "ca.pem"), TlsFixtures.pem("DATACLAY_TLS_CERT", "server.pem"), null));
    assertTrue(e.getMessage().contains("without its key"), e.getMessage());
  }

  @Test
  void a_server_needs_its_own_certificate_besides_the_ca() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> TlsSettings.forServer(TlsFixtures.pem("DATACLAY_TLS_CA", "ca.pem"), null, null));
    assertTrue(e.getMessage().contains("without a certificate and key"), e.getMessage());
  }

  @Test
  void a_certificate_in_place_of_the_key_is_refused_without_quoting_it() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> TlsSettings.forServer(
        TlsFixtures.pem("DATACLAY_TLS_CA", "ca.pem"), TlsFixtures.pem("DATACLAY_TLS_CERT", "server.pem"),
        TlsFixtures.pem("DATACLAY_TLS_KEY", "server.pem")));
    assertTrue(e.getMessage().startsWith("DATACLAY_TLS_KEY=") && e.getMessage().contains("not a PKCS#8"),
        e.getMessage());
    assertFalse(e.getMessage().contains("BEGIN CERTIFICATE-----\n"), e.getMessage());
  }

  @Test
  void no_files_mean_plaintext_and_the_description_never_names_the_key() {
    assertFalse(TlsSettings.of(null, null, null).enabled());
    String described = TlsFixtures.server("server").toString();
    assertTrue(described.contains("server.pem") && !described.contains("server.key"), described);
  }
}
