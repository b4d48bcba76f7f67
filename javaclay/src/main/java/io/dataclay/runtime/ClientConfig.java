package io.dataclay.runtime;

import io.dataclay.client.Channels;
import io.dataclay.common.Ports;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.PemFile;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.serialization.AllowList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every setting of the Java client, read like pyclay reads them: a KEY=VALUE file ('#' comments;
 * by default $DATACLAY_HOME/client.properties, DATACLAY_HOME defaulting to ~/.dataclay), then
 * the DATACLAY_* environment variables that are set, which win. The only code that reads them.
 *
 * @param host DATACLAY_HOST: Logic Module host (127.0.0.1)
 * @param port DATACLAY_PORT: Logic Module port ({@link Ports#LOGIC_MODULE})
 * @param user DATACLAY_USER: the account of the session
 * @param password DATACLAY_PASSWORD: its password
 * @param dataset DATACLAY_DATASET: dataset of the session's new objects (empty: the user's own)
 * @param extraClasses DATACLAY_JAVA_ALLOW: classes values may contain besides models and safe JDK types
 * @param tls DATACLAY_TLS_CA: the cluster's CA certificate (PEM); set, every connection uses TLS
 *     and trusts only that CA; unset, plaintext
 * @param unreachableMs DATACLAY_UNREACHABLE_MS: how long a call waits for a server that answers
 *     neither the call nor a ping before it fails with BACKEND_UNAVAILABLE (0: forever; 1200)
 */
public record ClientConfig(String host, int port, String user, String password, String dataset, AllowList extraClasses,
    TlsSettings tls, long unreachableMs) {
  private static final List<String> KEYS = List.of("DATACLAY_HOME", "DATACLAY_HOST", "DATACLAY_PORT", "DATACLAY_USER",
      "DATACLAY_PASSWORD", "DATACLAY_DATASET", "DATACLAY_JAVA_ALLOW", "DATACLAY_TLS_CA", "DATACLAY_UNREACHABLE_MS");

  /** Settings with the default unreachable time. */
  public ClientConfig(String host, int port, String user, String password, String dataset, AllowList extraClasses,
      TlsSettings tls) {
    this(host, port, user, password, dataset, extraClasses, tls, Channels.DEFAULT_UNREACHABLE_MS);
  }

  /** The settings from {@code configFile} (null: $DATACLAY_HOME/client.properties if it exists) and {@code env}. */
  public static ClientConfig load(Path configFile, Map<String, String> env) {
    Map<String, String> fromEnv = new HashMap<>();
    for (String k : KEYS) {
      String v = env.get(k);
      if (v != null && !v.isEmpty()) {
        fromEnv.put(k, v);
      }
    }
    Path file = configFile;
    if (file == null) {
      String home = fromEnv.getOrDefault("DATACLAY_HOME", System.getProperty("user.home") + "/.dataclay");
      Path candidate = Path.of(home.replaceFirst("^~", System.getProperty("user.home"))).resolve("client.properties");
      file = Files.isRegularFile(candidate) ? candidate : null;
    } else if (!Files.isRegularFile(file)) {
      throw new InvalidArgumentException("configuration file " + file + " does not exist");
    }
    Map<String, String> values = file == null ? new HashMap<>() : read(file);
    values.putAll(fromEnv);
    String where = file == null ? "(from the environment)" : "(from " + file + " or the environment)";
    String user = values.get("DATACLAY_USER");
    String password = values.get("DATACLAY_PASSWORD");
    if (user == null || password == null) {
      throw new InvalidArgumentException("DATACLAY_USER and DATACLAY_PASSWORD must be set " + where);
    }
    return new ClientConfig(values.getOrDefault("DATACLAY_HOST", "127.0.0.1"),
        port(values.getOrDefault("DATACLAY_PORT", Integer.toString(Ports.LOGIC_MODULE)), where), user, password,
        values.getOrDefault("DATACLAY_DATASET", ""),
        AllowList.parse(values.get("DATACLAY_JAVA_ALLOW"), "DATACLAY_JAVA_ALLOW"), tls(values.get("DATACLAY_TLS_CA"), where),
        millis(values.get("DATACLAY_UNREACHABLE_MS"), where));
  }

  private static long millis(String text, String where) {
    if (text == null || text.isBlank()) {
      return Channels.DEFAULT_UNREACHABLE_MS;
    }
    try {
      long ms = Long.parseLong(text.strip());
      if (ms >= 0) {
        return ms;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidArgumentException("DATACLAY_UNREACHABLE_MS must be a number of milliseconds (0: wait forever), not '"
        + text + "' " + where);
  }

  /** Plaintext without a CA; else TLS trusting the CA file, which must be readable now. */
  private static TlsSettings tls(String caPath, String where) {
    if (caPath == null || caPath.isBlank()) {
      return TlsSettings.plaintext();
    }
    try {
      return TlsSettings.of(PemFile.read("DATACLAY_TLS_CA", caPath.strip()), null, null);
    } catch (InvalidArgumentException e) {
      throw new InvalidArgumentException(e.getMessage() + " " + where);
    }
  }

  static Map<String, String> read(Path file) {
    Map<String, String> out = new HashMap<>();
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot read configuration file " + file + ": " + e.getMessage());
    }
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int eq = line.indexOf('=');
      if (eq <= 0) {
        throw new InvalidArgumentException(file + ":" + (i + 1) + ": expected KEY=VALUE, found '" + line + "'");
      }
      out.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
    }
    return out;
  }

  private static int port(String text, String where) {
    try {
      int p = Integer.parseInt(text);
      if (p > 0 && p < 65536) {
        return p;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidArgumentException("DATACLAY_PORT must be a port number (1-65535), not '" + text + "' " + where);
  }
}
