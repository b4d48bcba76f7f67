package io.dataclay.ds;

import io.dataclay.client.Channels;
import io.dataclay.common.ClusterSecret;
import io.dataclay.common.Ports;
import io.dataclay.ds.objects.QuotaStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.PemFile;
import io.dataclay.rpc.TlsSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Everything a Data Service reads from its environment, with the defaults; nothing else in the
 * Data Service reads environment variables. Invalid values fail here, naming the key.
 */
public final class DataServiceConfig {
  /** Logic Module host. Default 127.0.0.1. */
  public static final String HOST = "DATACLAY_HOST";
  /** Logic Module port. Default {@link Ports#LOGIC_MODULE}. */
  public static final String PORT = "DATACLAY_PORT";
  /**
   * File (mode 0600) holding the cluster secret this backend proves it knows to the Logic Module
   * (its identity: no user's password is needed). Required.
   */
  public static final String CLUSTER_SECRET_FILE = "DATACLAY_CLUSTER_SECRET_FILE";
  /** Name of this backend. Default: the host name. */
  public static final String BACKEND_NAME = "DATACLAY_BACKEND_NAME";
  /** Address advertised to clients. Default 127.0.0.1. */
  public static final String BACKEND_HOST = "DATACLAY_BACKEND_HOST";
  /**
   * Address to listen on. Default: DATACLAY_BACKEND_HOST, the address advertised; 0.0.0.0 (or ::)
   * listens on every interface, which only this setting can ask for.
   */
  public static final String BIND_HOST = "DATACLAY_BIND_HOST";
  /** PEM file of the cluster CA: set with the two below, every connection in and out uses TLS. Default: unset, plaintext. */
  public static final String TLS_CA = "DATACLAY_TLS_CA";
  /** PEM file of this Data Service's certificate, signed by the CA and naming DATACLAY_BACKEND_HOST. */
  public static final String TLS_CERT = "DATACLAY_TLS_CERT";
  /** PEM file (unencrypted PKCS#8) of that certificate's private key; never handed to the Python environment. */
  public static final String TLS_KEY = "DATACLAY_TLS_KEY";
  /** Port to bind; 0 binds any free port, and the port actually bound is registered. Default 0. */
  public static final String BACKEND_PORT = "DATACLAY_BACKEND_PORT";
  /** Local state of a cluster. Default ~/.dataclay. This user's alone (0700), as everything the Data Service keeps. */
  public static final String HOME = "DATACLAY_HOME";
  /**
   * This backend's directory (backend.id, models/python/, imports/). Default
   * $DATACLAY_HOME/backends/<name>. Made mode 0700; refused at start when another user owns it or
   * could reach it or anything in it.
   */
  public static final String BACKEND_DIR = "DATACLAY_BACKEND_DIR";
  /** Store engine: kv | heap | 2lm | postgres | memory. Default kv. */
  public static final String STORE = "DATACLAY_STORE";
  /**
   * Pool directory of the store. Default /dev/shm/dataclay-<OS user>/<backend name>. Made mode 0700;
   * refused at start when another user owns it or could reach it or a file in it, or could replace a
   * directory above it.
   */
  public static final String STORE_PATH = "DATACLAY_STORE_PATH";
  /** Pool size, e.g. 512M or 4G. Default 1G. */
  public static final String STORE_SIZE = "DATACLAY_STORE_SIZE";
  /**
   * postgres engine: JDBC URL of its database, e.g. jdbc:postgresql://127.0.0.1:5432/dataclay?user=postgres.
   * Required for that engine; messages show it with the password hidden.
   */
  public static final String STORE_URL = "DATACLAY_STORE_URL";
  /**
   * File holding the 256-bit key that encrypts stored field values (kv, heap, 2lm, postgres): 32
   * raw bytes, or 64 hex digits, or base64; readable by its owner only. A pool made with a key
   * opens only with it, one made without only without. Unset: values are stored unencrypted.
   */
  public static final String STORE_KEY_FILE = "DATACLAY_STORE_KEY_FILE";
  /** 2lm engine: DRAM for its object cache, e.g. 256M; dirty records up to this size wait in DRAM for a checkpoint. Default 256M. */
  public static final String TWO_LM_CACHE_SIZE = "DATACLAY_2LM_CACHE_SIZE";
  /** 2lm engine: milliseconds between checkpoints; a crash loses the writes of the last this many ms. Default 1000. */
  public static final String TWO_LM_CHECKPOINT_MS = "DATACLAY_2LM_CHECKPOINT_MS";
  /**
   * Interpreter of the Python execution environment, with pyclay installed (it also runs the
   * sandbox launcher of the Java environment); "none" runs no Python environment. Default python3.
   */
  public static final String PYTHON = "DATACLAY_PYTHON";
  /** Milliseconds between heartbeats to the Logic Module. Default 1000. */
  public static final String HEARTBEAT_MS = "DATACLAY_HEARTBEAT_MS";
  /**
   * Milliseconds a call to another server (the Logic Module, another backend) waits for one that
   * answers neither it nor a ping before it fails with BACKEND_UNAVAILABLE: a frozen or cut-off
   * replica then stops holding up its master's writes. 0: forever. Default 1200.
   */
  public static final String UNREACHABLE_MS = "DATACLAY_UNREACHABLE_MS";
  /**
   * Milliseconds a call waits for a (re)starting backend to install the registered models and for a
   * (re)starting execution environment before BACKEND_UNAVAILABLE, and a new environment process
   * has to send its hello. Default 10000.
   */
  public static final String EE_WAIT_MS = "DATACLAY_EE_WAIT_MS";
  /**
   * Largest request message, e.g. 768M: a bigger one is refused before it is read whole. Default
   * 768M, sized for the white paper's 512 MB texts.
   */
  public static final String MAX_MESSAGE_SIZE = "DATACLAY_MAX_MESSAGE_SIZE";
  /**
   * Largest single field value or method result, e.g. 256M (the default, or
   * DATACLAY_MAX_MESSAGE_SIZE when that is smaller): a bigger one is refused when written, so no
   * read can return one.
   */
  public static final String MAX_VALUE_SIZE = QuotaStore.MAX_VALUE_SIZE;
  /** Most objects one dataset may hold on this backend; 0: unlimited. Default 10000000. */
  public static final String QUOTA_OBJECTS = QuotaStore.QUOTA_OBJECTS;
  /**
   * Most bytes of field values one dataset may hold on this backend, e.g. 20G; 0 (the default):
   * unlimited, bounded only by the store's size. Costs a read of an object on each change of it.
   */
  public static final String QUOTA_BYTES = QuotaStore.QUOTA_BYTES;

  private final Map<String, String> env;
  private final String lmHost;
  private final int lmPort;
  private final ClusterSecret clusterSecret;
  private final String backendName;
  private final String backendHost;
  private final String bindHost;
  private final TlsSettings tls;
  private final int backendPort;
  private final Path home;
  private final Path backendDir;
  private final String storeEngine;
  private final Path storePath;
  private final String storeSize;
  private final String storeUrl;
  private final Path storeKeyFile;
  private final long twoLmCacheBytes;
  private final long twoLmCheckpointMs;
  private final String python;
  private final long heartbeatMs;
  private final long unreachableMs;
  private final long eeWaitMs;
  private final int maxMessageBytes;
  private final QuotaStore.Limits storageLimits;
  private final io.dataclay.ds.ee.EnvironmentSettings environments;

  private DataServiceConfig(Map<String, String> env) {
    this.env = Map.copyOf(env);
    lmHost = text(HOST, "127.0.0.1");
    lmPort = port(PORT, Ports.LOGIC_MODULE, false);
    String secretFile = text(CLUSTER_SECRET_FILE, null);
    clusterSecret = ClusterSecret.read(CLUSTER_SECRET_FILE, secretFile == null ? null : Path.of(secretFile));
    backendName = text(BACKEND_NAME, localHostName());
    if (backendName.contains("/") || backendName.equals("..") || backendName.equals(".")) {
      throw new InvalidArgumentException(BACKEND_NAME + " must be a plain name, not " + backendName);
    }
    backendHost = text(BACKEND_HOST, "127.0.0.1");
    bindHost = text(BIND_HOST, backendHost);
    tls = TlsSettings.forServer(pem(TLS_CA), pem(TLS_CERT), pem(TLS_KEY));
    backendPort = port(BACKEND_PORT, 0, true);
    home = Path.of(text(HOME, Path.of(System.getProperty("user.home"), ".dataclay").toString()));
    backendDir = Path.of(text(BACKEND_DIR, home.resolve("backends").resolve(backendName).toString()));
    storeEngine = text(STORE, "kv");
    String osUser = text("USER", System.getProperty("user.name"));
    storePath = Path.of(text(STORE_PATH, "/dev/shm/dataclay-" + osUser + "/" + backendName));
    storeSize = text(STORE_SIZE, "1G");
    storeUrl = text(STORE_URL, null);
    String keyFile = text(STORE_KEY_FILE, null);
    storeKeyFile = keyFile == null ? null : Path.of(keyFile).toAbsolutePath();
    twoLmCacheBytes = bytes(TWO_LM_CACHE_SIZE, text(TWO_LM_CACHE_SIZE, "256M"));
    twoLmCheckpointMs = positiveMillis(TWO_LM_CHECKPOINT_MS, StoreConfig.DEFAULT_CHECKPOINT_MILLIS);
    python = text(PYTHON, "python3");
    heartbeatMs = positiveMillis(HEARTBEAT_MS, 1000);
    unreachableMs = "0".equals(text(UNREACHABLE_MS, null)) ? 0
        : positiveMillis(UNREACHABLE_MS, Channels.DEFAULT_UNREACHABLE_MS);
    eeWaitMs = positiveMillis(EE_WAIT_MS, 10000);
    long message = bytes(MAX_MESSAGE_SIZE, text(MAX_MESSAGE_SIZE, "768M"));
    if (message < (1 << 20) || message > Integer.MAX_VALUE) {
      throw new InvalidArgumentException(MAX_MESSAGE_SIZE + " must be between 1M and 2047M, not "
          + text(MAX_MESSAGE_SIZE, ""));
    }
    maxMessageBytes = (int) message;
    long value = bytes(MAX_VALUE_SIZE, text(MAX_VALUE_SIZE, Long.toString(Math.min(256L << 20, message))));
    if (value < 1024 || value > message) {
      throw new InvalidArgumentException(MAX_VALUE_SIZE + " must be between 1K and " + MAX_MESSAGE_SIZE + " ("
          + message + " bytes), not " + text(MAX_VALUE_SIZE, ""));
    }
    String quotaBytes = text(QUOTA_BYTES, "0");
    storageLimits = new QuotaStore.Limits(count(QUOTA_OBJECTS, 10_000_000),
        "0".equals(quotaBytes) ? 0 : bytes(QUOTA_BYTES, quotaBytes), value);
    environments = io.dataclay.ds.ee.EnvironmentSettings.from(env);
  }

  /** The configuration in this process's environment. */
  public static DataServiceConfig fromEnvironment() {
    return from(System.getenv());
  }

  /** The configuration in {@code env} (tests pass their own map). */
  public static DataServiceConfig from(Map<String, String> env) {
    return new DataServiceConfig(env);
  }

  /** The whole environment the configuration was read from (the Java environment reads its keys there). */
  public Map<String, String> environment() {
    return env;
  }

  /**
   * What of this environment an execution-environment process inherits (through the sandbox
   * launcher, which passes on only what the confined process needs): an explicit list of harmless
   * keys (paths, locale) and the environment's own settings, never credentials, tokens or key
   * files. The Data Service adds DATACLAY_EE_BACKEND_ID.
   */
  public Map<String, String> environmentProcessSettings() {
    Map<String, String> out = new java.util.TreeMap<>();
    for (String key : EE_PASSES) {
      String v = env.get(key);
      if (v != null) {
        out.put(key, v);
      }
    }
    copy(out, "DATACLAY_PICKLE_ALLOW", "DATACLAY_EE_PICKLE_ALLOW");
    copy(out, io.dataclay.ds.ee.java.JavaEnvironmentConfig.ALLOW, "DATACLAY_EE_JAVA_ALLOW");
    copy(out, "DATACLAY_EE_UID_BASE", "DATACLAY_EE_UID_BASE");
    out.put("DATACLAY_EE_THREADS", Integer.toString(environments.threads()));
    return out;
  }

  private void copy(Map<String, String> out, String from, String to) {
    String v = env.get(from);
    if (v != null && !v.isBlank()) {
      out.put(to, v.trim());
    }
  }

  private static final java.util.List<String> EE_PASSES = java.util.List.of(
      "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHASHSEED",
      "PYTHONDONTWRITEBYTECODE");

  /** How model code runs: confinement and each account's share. */
  public io.dataclay.ds.ee.EnvironmentSettings environments() {
    return environments;
  }

  /** How long a call to a silent server waits before BACKEND_UNAVAILABLE (0: forever). */
  public long unreachableMs() {
    return unreachableMs;
  }

  /** Logic Module host. */
  public String lmHost() {
    return lmHost;
  }

  /** Logic Module port. */
  public int lmPort() {
    return lmPort;
  }

  /** The cluster secret this backend proves it knows. */
  public ClusterSecret clusterSecret() {
    return clusterSecret;
  }

  /** Backend name. */
  public String backendName() {
    return backendName;
  }

  /** Address advertised to clients. */
  public String backendHost() {
    return backendHost;
  }

  /** Address the server listens on (the advertised one unless DATACLAY_BIND_HOST says otherwise). */
  public String bindHost() {
    return bindHost;
  }

  /** How connections in and out are secured. */
  public TlsSettings tls() {
    return tls;
  }

  /** Port to bind (0: any free port). */
  public int backendPort() {
    return backendPort;
  }

  /** The cluster's home (DATACLAY_HOME). */
  public Path home() {
    return home;
  }

  /** This backend's directory. */
  public Path backendDir() {
    return backendDir;
  }

  /** Where deployed Python models are written. */
  public Path pythonModelsDir() {
    return backendDir.resolve("models").resolve("python");
  }

  /** Where execution-environment processes get their private directories (emptied at start). */
  public Path environmentsDir() {
    return backendDir.resolve("ee");
  }

  /** Store engine name. */
  public String storeEngine() {
    return storeEngine;
  }

  /** Pool directory. */
  public Path storePath() {
    return storePath;
  }

  /** Pool size as written (e.g. "1G"); the store parses it. */
  public String storeSize() {
    return storeSize;
  }

  /**
   * The store to open: engine, pool directory and size, this backend's name, what the 2lm and
   * postgres engines need, and the store key file (the engine reads and checks it when it opens).
   *
   * @throws InvalidArgumentException naming {@value #STORE_SIZE} when the size is malformed
   */
  public StoreConfig storeConfig() {
    return new StoreConfig(storeEngine, storePath, bytes(STORE_SIZE, storeSize), backendName, storeUrl,
        twoLmCacheBytes, twoLmCheckpointMs, storeKeyFile);
  }

  /**
   * The store of another backend of this node, for erasing it: the engine and database URL of
   * {@code env} ({@value #STORE}, {@value #STORE_URL}), with {@code backend}'s name and pool. Needs
   * no account and no key.
   */
  public static StoreConfig storeToErase(Map<String, String> env, String backend, Path pool) {
    String engine = env.getOrDefault(STORE, "");
    String url = env.get(STORE_URL);
    return new StoreConfig(engine.isBlank() ? "kv" : engine.trim(), pool, 1, backend,
        url == null || url.isBlank() ? null : url.trim(), StoreConfig.DEFAULT_CACHE_BYTES,
        StoreConfig.DEFAULT_CHECKPOINT_MILLIS, null);
  }

  /** The interpreter that runs the sandbox launcher (pyclay's), even when no Python environment runs. */
  public String launcherPython() {
    return "none".equals(python) ? "python3" : python;
  }

  /** Python interpreter, or null when no Python environment runs ({@code DATACLAY_PYTHON=none}). */
  public String python() {
    return "none".equals(python) ? null : python;
  }

  /** Heartbeat period in milliseconds. */
  public long heartbeatMs() {
    return heartbeatMs;
  }

  /** Largest request message, in bytes. */
  public int maxMessageBytes() {
    return maxMessageBytes;
  }

  /** Per-dataset quotas on this backend and the largest single value. */
  public QuotaStore.Limits storageLimits() {
    return storageLimits;
  }

  /** How long a call waits for a (re)starting execution environment, in milliseconds. */
  public long eeWaitMs() {
    return eeWaitMs;
  }

  private String text(String key, String fallback) {
    String v = env.get(key);
    return v == null || v.isBlank() ? fallback : v.trim();
  }

  private PemFile pem(String key) {
    String path = text(key, null);
    return path == null ? null : PemFile.read(key, path);
  }

  private int port(String key, int fallback, boolean zeroAllowed) {
    String v = text(key, null);
    if (v == null) {
      return fallback;
    }
    try {
      int p = Integer.parseInt(v);
      if (p >= (zeroAllowed ? 0 : 1) && p <= 65535) {
        return p;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidArgumentException(key + " must be a port number (" + (zeroAllowed ? 0 : 1) + "-65535), not " + v);
  }

  private long positiveMillis(String key, long fallback) {
    String v = text(key, null);
    if (v == null) {
      return fallback;
    }
    try {
      long ms = Long.parseLong(v);
      if (ms > 0) {
        return ms;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidArgumentException(key + " must be a positive number of milliseconds, not " + v);
  }

  private long count(String key, long fallback) {
    String v = text(key, null);
    if (v == null) {
      return fallback;
    }
    try {
      long n = Long.parseLong(v.trim());
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidArgumentException(key + " must be a whole number, 0 or more (0: unlimited), not " + v);
  }

  private static long bytes(String key, String text) {
    try {
      return StoreConfig.parseSize(text);
    } catch (InvalidArgumentException e) {
      throw new InvalidArgumentException(key + ": " + e.getMessage());
    }
  }

  private String localHostName() {
    String fromEnv = env.get("HOSTNAME");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return fromEnv.trim();
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }
}
