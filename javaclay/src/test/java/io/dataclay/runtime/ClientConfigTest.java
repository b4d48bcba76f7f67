package io.dataclay.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClientConfigTest {
  @TempDir Path home;

  @Test
  void theClientFileOfDataclayHomeIsReadAndTheEnvironmentWins() throws Exception {
    // setup
    Files.writeString(home.resolve("client.properties"),
        "# written by dataclay start\nDATACLAY_HOST=10.0.0.7\nDATACLAY_PORT=12000\nDATACLAY_USER=admin\nDATACLAY_PASSWORD=s3cret\n");
    // run
    ClientConfig c = ClientConfig.load(null, Map.of("DATACLAY_HOME", home.toString(), "DATACLAY_PORT", "13000",
        "DATACLAY_DATASET", "shared", "DATACLAY_JAVA_ALLOW", "com.example.*"));
    // verify
    assertEquals("10.0.0.7", c.host());
    assertEquals(13000, c.port());
    assertEquals("admin", c.user());
    assertEquals("s3cret", c.password());
    assertEquals("shared", c.dataset());
    assertTrue(c.extraClasses().allows("com.example.Point"));
  }

  @Test
  void defaultsApplyWhenOnlyCredentialsAreGiven() {
    // run
    ClientConfig c = ClientConfig.load(null, Map.of("DATACLAY_HOME", home.toString(), "DATACLAY_USER", "u",
        "DATACLAY_PASSWORD", "p"));
    // verify
    assertEquals("127.0.0.1", c.host());
    assertEquals(11034, c.port());
    assertEquals("", c.dataset());
  }

  @Test
  void badSettingsFailNamingTheKeyOrLine() throws Exception {
    // setup
    Path file = home.resolve("bad.properties");
    Files.writeString(file, "DATACLAY_USER=u\nthis is not a setting\n");
    // run
    InvalidArgumentException badLine = assertThrows(InvalidArgumentException.class,
        () -> ClientConfig.load(file, Map.of()));
    InvalidArgumentException badPort = assertThrows(InvalidArgumentException.class,
        () -> ClientConfig.load(null, Map.of("DATACLAY_HOME", home.toString(), "DATACLAY_USER", "u",
            "DATACLAY_PASSWORD", "p", "DATACLAY_PORT", "70000")));
    InvalidArgumentException noUser = assertThrows(InvalidArgumentException.class,
        () -> ClientConfig.load(null, Map.of("DATACLAY_HOME", home.toString())));
    InvalidArgumentException missingFile = assertThrows(InvalidArgumentException.class,
        () -> ClientConfig.load(home.resolve("nope"), Map.of()));
    // verify
    assertTrue(badLine.getMessage().contains("bad.properties:2"), badLine.getMessage());
    assertTrue(badPort.getMessage().contains("DATACLAY_PORT"), badPort.getMessage());
    assertTrue(noUser.getMessage().contains("DATACLAY_USER"), noUser.getMessage());
    assertTrue(missingFile.getMessage().contains("nope"), missingFile.getMessage());
  }

  @Test
  void theCaOfTheClientFileTurnsTlsOn() throws Exception {
    // setup
    Path ca = Path.of(getClass().getResource("/tls/ca.pem").toURI());
    Files.writeString(home.resolve("client.properties"), "DATACLAY_USER=u\nDATACLAY_PASSWORD=p\nDATACLAY_TLS_CA=" + ca + "\n");
    // run
    ClientConfig c = ClientConfig.load(null, Map.of("DATACLAY_HOME", home.toString()));
    // verify
    assertTrue(c.tls().enabled());
    assertEquals(ca, c.tls().ca().path());
    assertFalse(ClientConfig.load(null, Map.of("DATACLAY_USER", "u", "DATACLAY_PASSWORD", "p",
        "DATACLAY_HOME", home.resolve("elsewhere").toString())).tls().enabled());
  }

  @Test
  void aMissingCaFileFailsAtLoadNamingTheKeyAndPath() throws Exception {
    // setup
    Files.writeString(home.resolve("client.properties"), "DATACLAY_USER=u\nDATACLAY_PASSWORD=p\n");
    String missing = home.resolve("tls/ca.pem").toString();
    // run
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> ClientConfig.load(null, Map.of("DATACLAY_HOME", home.toString(), "DATACLAY_TLS_CA", missing)));
    // verify
    assertTrue(e.getMessage().startsWith("DATACLAY_TLS_CA=" + missing + ": no such file"), e.getMessage());
  }
}
