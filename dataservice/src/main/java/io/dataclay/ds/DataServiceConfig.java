package io.dataclay.ds;

import io.dataclay.client.Channels;
import io.dataclay.common.ClusterSecret;
import io.dataclay.common.Ports;
import io.dataclay.ds.objects.QuotaStore;
import io.dataclay.ds.ee.java.JavaEnvironmentConfig;
import io.dataclay.ds.store.Setting;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.StoreEngines;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.PemFile;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.metrics.MetricsSettings;
import io.dataclay.server.tracing.Tracing;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Everything a Data Service reads from its environment, with the defaults; nothing else in the
 * Data Service reads environment variables. Invalid values fail here, naming the key.
 */
public final class DataServiceConfig {
  /** Key: Logic Module host. */
  public static final String HOST = "DATACLAY_HOST";
  /** Key: Logic Module port (default {@link Ports#LOGIC_MODULE}). */
  public static final String PORT = "DATACLAY_PORT";
  /** Key: the cluster secret's file. */
  public static final String CLUSTER_SECRET_FILE = "DATACLAY_CLUSTER_SECRET_FILE";
  /** Key: name of this backend. */
  public static final String BACKEND_NAME = "DATACLAY_BACKEND_NAME";
  /** Key: address advertised to clients. */
  public static final String BACKEND_HOST = "DATACLAY_BACKEND_HOST";
  /** Key: address to listen on. */
  public static final String BIND_HOST = "DATACLAY_BIND_HOST";
  /** Key: PEM file of the cluster CA. */
  public static final String TLS_CA = "DATACLAY_TLS_CA";
  /** Key: PEM file of this Data Service's certificate. */
  public static final String TLS_CERT = "DATACLAY_TLS_CERT";
  /** Key: PEM file of that certificate's private key. */
  public static final String TLS_KEY = "DATACLAY_TLS_KEY";
  /** Key: port to bind. */
  public static final String BACKEND_PORT = "DATACLAY_BACKEND_PORT";
  /** Key: port of the call port ("off": none). */
  public static final String CALL_PORT = "DATACLAY_CALL_PORT";
  /** Key: local state of a cluster. */
  public static final String HOME = "DATACLAY_HOME";
  /** Key: this backend's directory. */
  public static final String BACKEND_DIR = "DATACLAY_BACKEND_DIR";
  /** Key: store engine. */
  public static final String STORE = "DATACLAY_STORE";
  /** Key: pool directory of the store. */
  public static final String STORE_PATH = "DATACLAY_STORE_PATH";
  /** Key: pool size. */
  public static final String STORE_SIZE = "DATACLAY_STORE_SIZE";
  /** Key: postgres engine's JDBC URL. */
  public static final String STORE_URL = StoreConfig.DATABASE_URL.key();
  /** Key: file of the key that encrypts stored field values. */
  public static final String STORE_KEY_FILE = "DATACLAY_STORE_KEY_FILE";
  /** Key: 2lm engine's DRAM cache size. */
  public static final String TWO_LM_CACHE_SIZE = StoreConfig.CACHE_SIZE.key();
  /** Key: 2lm engine's checkpoint period. */
  public static final String TWO_LM_CHECKPOINT_MS = StoreConfig.CHECKPOINT_MS.key();
  /** Key: interpreter of the Python execution environment. */
  public static final String PYTHON = "DATACLAY_PYTHON";
  /** Key: heartbeat period. */
  public static final String HEARTBEAT_MS = "DATACLAY_HEARTBEAT_MS";
  /** Key: how long a call waits for a silent server. */
  public static final String UNREACHABLE_MS = "DATACLAY_UNREACHABLE_MS";
  /** Key: how long a call waits for a (re)starting backend or environment. */
  public static final String EE_WAIT_MS = "DATACLAY_EE_WAIT_MS";
  /** Key: largest request message. */
  public static final String MAX_MESSAGE_SIZE = "DATACLAY_MAX_MESSAGE_SIZE";
  /** Key: largest single field value or method result. */
  public static final String MAX_VALUE_SIZE = QuotaStore.MAX_VALUE_SIZE;
  /** Key: most objects per dataset on this backend. */
  public static final String QUOTA_OBJECTS = QuotaStore.QUOTA_OBJECTS;
  /** Key: most bytes of field values per dataset on this backend. */
  public static final String QUOTA_BYTES = QuotaStore.QUOTA_BYTES;
  /** Key: more globals clients and backends may unpickle (passed to the Python environment). */
  public static final String PICKLE_ALLOW = "DATACLAY_PICKLE_ALLOW";
  /** Key: first uid/gid of environment processes when the backend runs as root (passed to them). */
  public static final String EE_UID_BASE = "DATACLAY_EE_UID_BASE";

  /**
   * Every key this class reads, in the order to show them, with its default and meaning; the
   * reading code takes defaults from here and {@code dataservice.jar settings} prints it. The
   * engine-specific keys come from the store engines' registry; the execution environments' keys
   * are in {@link io.dataclay.ds.ee.EnvironmentSettings}.
   */
  public static final List<Setting> SETTINGS = table();

  private static final Map<String, String> DEFAULTS = SETTINGS.stream()
      .collect(Collectors.toUnmodifiableMap(Setting::key, Setting::defaultValue));

  private static List<Setting> table() {
    List<Setting> t = new ArrayList<>();
    t.add(new Setting(HOST, "127.0.0.1", "Logic Module host."));
    t.add(new Setting(PORT, Integer.toString(Ports.LOGIC_MODULE), "Logic Module port."));
    t.add(new Setting(CLUSTER_SECRET_FILE, "", "File (mode 0600) holding the cluster secret this backend proves it"
        + " knows to the Logic Module (its identity: no user's password is needed); required."));
    t.add(new Setting(BACKEND_NAME, "", "Name of this backend; default: the host name."));
    t.add(new Setting(BACKEND_HOST, "127.0.0.1", "Address advertised to clients."));
    t.add(new Setting(BIND_HOST, "", "Address to listen on; default: DATACLAY_BACKEND_HOST, the address advertised;"
        + " 0.0.0.0 (or ::) listens on every interface, which only this setting can ask for."));
    t.add(new Setting(MetricsSettings.PORT, "", MetricsSettings.PORT_MEANING));
    t.add(new Setting(MetricsSettings.HOST, MetricsSettings.HOST_DEFAULT, MetricsSettings.HOST_MEANING));
    t.add(new Setting(MetricsSettings.TOKEN_FILE, "", MetricsSettings.TOKEN_FILE_MEANING));
    t.add(new Setting(TLS_CA, "", "PEM file of the cluster CA: set with the two below, every connection in and out"
        + " uses TLS; unset: plaintext."));
    t.add(new Setting(TLS_CERT, "", "PEM file of this Data Service's certificate, signed by the CA and naming"
        + " DATACLAY_BACKEND_HOST."));
    t.add(new Setting(TLS_KEY, "", "PEM file (unencrypted PKCS#8) of that certificate's private key; never handed to"
        + " the Python environment."));
    t.add(new Setting(BACKEND_PORT, "0", "Port to bind; 0 binds any free port, and the port actually bound is"
        + " registered."));
    t.add(new Setting(CALL_PORT, "0", "Port of the call port, where clients make method calls and field reads and"
        + " writes as frames instead of gRPC calls (same address and TLS as the gRPC port); 0 binds any free port, off"
        + " serves none (clients then use gRPC). Not served while tracing is on, so that every call is traced."));
    t.add(new Setting(HOME, "~/.dataclay", "Local state of a cluster. This user's alone (0700), as"
        + " everything the Data Service keeps."));
    t.add(new Setting(BACKEND_DIR, "", "This backend's directory (backend.id, models/python/, imports/); default"
        + " $DATACLAY_HOME/backends/<name>. Made mode 0700; refused at start when another user owns it or could reach"
        + " it or anything in it."));
    t.add(new Setting(STORE, "kv", "Store engine, one of those `dataservice.jar engines` lists."));
    t.add(new Setting(STORE_PATH, "", "Pool directory of the store; default /dev/shm/dataclay-<OS user>/<backend"
        + " name>. Made mode 0700; refused at start when another user owns it or could reach it or a file in it, or"
        + " could replace a directory above it."));
    t.add(new Setting(STORE_SIZE, "1G", "Pool size, e.g. 512M or 4G; an existing pool keeps its size."));
    t.add(new Setting(STORE_KEY_FILE, "", "File holding the 256-bit key that encrypts stored field values: 32 raw"
        + " bytes, or 64 hex digits, or base64; readable by its owner only. A pool made with a key opens only with it,"
        + " one made without only without. Unset: values are stored unencrypted."));
    for (StoreEngine engine : StoreEngines.ALL) {
      for (Setting s : engine.settings()) {
        if (t.stream().noneMatch(known -> known.key().equals(s.key()))) {
          t.add(s);
        }
      }
    }
    t.add(new Setting(PYTHON, "python3", "Interpreter of the Python execution environment, with pyclay installed (it"
        + " also runs the sandbox launcher of the Java environment); \"none\" runs no Python environment."));
    t.add(new Setting(HEARTBEAT_MS, "1000", "Milliseconds between heartbeats to the Logic Module."));
    t.add(new Setting(UNREACHABLE_MS, Long.toString(Channels.DEFAULT_UNREACHABLE_MS), "Milliseconds a call to"
        + " another server (the Logic Module, another backend) waits for one that answers neither it nor a ping"
        + " before it fails with BACKEND_UNAVAILABLE: a frozen or cut-off replica then stops holding up its master's"
        + " writes. 0: forever."));
    t.add(new Setting(EE_WAIT_MS, "10000", "Milliseconds a call waits for a (re)starting backend to install the"
        + " registered models and for a (re)starting execution environment before BACKEND_UNAVAILABLE, and a new"
        + " environment process has to send its hello."));
    t.add(new Setting(MAX_MESSAGE_SIZE, "768M", "Largest request message, between 1M and 2047M: a bigger one is"
        + " refused before it is read whole; the default is sized for the white paper's 512 MB texts."));
    t.add(new Setting(MAX_VALUE_SIZE, "256M", "Largest single field value or method result, between 1K and"
        + " DATACLAY_MAX_MESSAGE_SIZE (which is the default when it is smaller than 256M): a bigger one is refused"
        + " when written, so no read can return one."));
    t.add(new Setting(QUOTA_OBJECTS, "10000000", "Most objects one dataset may hold on this backend; 0: unlimited."));
    t.add(new Setting(QUOTA_BYTES, "0", "Most bytes of field values one dataset may hold on this backend, e.g. 20G;"
        + " 0: unlimited, bounded only by the store's size. Costs a read of an object on each change of it."));
    t.add(new Setting(PICKLE_ALLOW, "", "More exact module.name globals the clients and the backends may unpickle,"
        + " comma-separated; passed to the Python environment."));
    t.add(new Setting(JavaEnvironmentConfig.ALLOW, "", "Comma-separated class names or package.* that Java"
        + " values may also contain, besides model classes and the safe JDK types."));
    t.add(new Setting(EE_UID_BASE, "1900000000", "A backend run as root: environment processes run as uid/gid"
        + " base + slot; passed to them, which apply the default."));
    t.addAll(io.dataclay.ds.ee.EnvironmentSettings.TABLE);
    return List.copyOf(t);
  }

  /** The service name of the Data Service's traces unless OTEL_SERVICE_NAME gives another. */
  public static final String TRACING_SERVICE_NAME = "pmclay-dataservice";

  private final Map<String, String> env;
  private final String lmHost;
  private final int lmPort;
  private final ClusterSecret clusterSecret;
  private final String backendName;
  private final String backendHost;
  private final String bindHost;
  private final TlsSettings tls;
  private final int backendPort;
  private final int callPort;
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
  private final MetricsSettings metrics;

  private DataServiceConfig(Map<String, String> env) {
    this.env = Map.copyOf(env);
    lmHost = value(HOST);
    lmPort = port(PORT, false);
    String secretFile = value(CLUSTER_SECRET_FILE);
    clusterSecret = ClusterSecret.read(CLUSTER_SECRET_FILE, secretFile == null ? null : Path.of(secretFile));
    backendName = text(BACKEND_NAME, localHostName());
    if (backendName.contains("/") || backendName.equals("..") || backendName.equals(".")) {
      throw new InvalidArgumentException(BACKEND_NAME + " must be a plain name, not " + backendName);
    }
    backendHost = value(BACKEND_HOST);
    bindHost = text(BIND_HOST, backendHost);
    tls = TlsSettings.forServer(pem(TLS_CA), pem(TLS_CERT), pem(TLS_KEY));
    backendPort = port(BACKEND_PORT, true);
    callPort = "off".equals(value(CALL_PORT)) ? -1 : port(CALL_PORT, true);
    home = Path.of(text(HOME, Path.of(System.getProperty("user.home"), ".dataclay").toString()));
    backendDir = Path.of(text(BACKEND_DIR, home.resolve("backends").resolve(backendName).toString()));
    storeEngine = value(STORE);
    String osUser = text("USER", System.getProperty("user.name"));
    storePath = Path.of(text(STORE_PATH, "/dev/shm/dataclay-" + osUser + "/" + backendName));
    storeSize = value(STORE_SIZE);
    storeUrl = value(STORE_URL);
    String keyFile = value(STORE_KEY_FILE);
    storeKeyFile = keyFile == null ? null : Path.of(keyFile).toAbsolutePath();
    twoLmCacheBytes = bytes(TWO_LM_CACHE_SIZE, value(TWO_LM_CACHE_SIZE));
    twoLmCheckpointMs = positiveMillis(TWO_LM_CHECKPOINT_MS);
    python = value(PYTHON);
    heartbeatMs = positiveMillis(HEARTBEAT_MS);
    unreachableMs = "0".equals(value(UNREACHABLE_MS)) ? 0 : positiveMillis(UNREACHABLE_MS);
    eeWaitMs = positiveMillis(EE_WAIT_MS);
    long message = bytes(MAX_MESSAGE_SIZE, value(MAX_MESSAGE_SIZE));
    if (message < (1 << 20) || message > Integer.MAX_VALUE) {
      throw new InvalidArgumentException(MAX_MESSAGE_SIZE + " must be between 1M and 2047M, not "
          + text(MAX_MESSAGE_SIZE, ""));
    }
    maxMessageBytes = (int) message;
    long value = bytes(MAX_VALUE_SIZE,
        text(MAX_VALUE_SIZE, Long.toString(Math.min(bytes(MAX_VALUE_SIZE, DEFAULTS.get(MAX_VALUE_SIZE)), message))));
    if (value < 1024 || value > message) {
      throw new InvalidArgumentException(MAX_VALUE_SIZE + " must be between 1K and " + MAX_MESSAGE_SIZE + " ("
          + message + " bytes), not " + text(MAX_VALUE_SIZE, ""));
    }
    String quotaBytes = value(QUOTA_BYTES);
    storageLimits = new QuotaStore.Limits(count(QUOTA_OBJECTS),
        "0".equals(quotaBytes) ? 0 : bytes(QUOTA_BYTES, quotaBytes), value);
    environments = io.dataclay.ds.ee.EnvironmentSettings.from(env);
    metrics = MetricsSettings.from(this::value).checkedWith(tls);
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
    copy(out, PICKLE_ALLOW, "DATACLAY_EE_PICKLE_ALLOW");
    copy(out, io.dataclay.ds.ee.java.JavaEnvironmentConfig.ALLOW, "DATACLAY_EE_JAVA_ALLOW");
    copy(out, EE_UID_BASE, EE_UID_BASE);
    out.put("DATACLAY_EE_THREADS", Integer.toString(environments.threads()));
    out.put(io.dataclay.ds.ee.EnvironmentSettings.RESIDENT_MB, Integer.toString(environments.residentMb()));
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

  /**
   * The Data Service's tracing: off unless the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; then configured by the standard OTEL_* variables,
   * which OpenTelemetry documents (they are not DATACLAY_* settings, so not in the table). No
   * OTEL_* key reaches an execution environment ({@link #environmentProcessSettings()}).
   *
   * @throws IllegalArgumentException saying what is wrong when an OTEL_* value is
   */
  public Tracing tracing() {
    return Tracing.fromEnvironment(env, TRACING_SERVICE_NAME);
  }

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

  /** Where and how Prometheus metrics are served, if at all. */
  public MetricsSettings metrics() {
    return metrics;
  }

  /** Port to bind (0: any free port). */
  public int backendPort() {
    return backendPort;
  }

  /** The call port to bind (0: any free port; -1: none). */
  public int callPort() {
    return callPort;
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
    return new StoreConfig(engine.isBlank() ? DEFAULTS.get(STORE) : engine.trim(), pool, 1, backend,
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

  // The value of key, or its default in the table; null when neither is set.
  private String value(String key) {
    String fallback = DEFAULTS.get(key);
    if (fallback == null) {
      throw new IllegalStateException(key + " is not in the configuration table");
    }
    return text(key, fallback.isEmpty() ? null : fallback);
  }

  private String text(String key, String fallback) {
    if (key.startsWith("DATACLAY_") && !DEFAULTS.containsKey(key)) {
      throw new IllegalStateException(key + " is read but is not in the configuration table");
    }
    String v = env.get(key);
    return v == null || v.isBlank() ? fallback : v.trim();
  }

  private PemFile pem(String key) {
    String path = text(key, null);
    return path == null ? null : PemFile.read(key, path);
  }

  private int port(String key, boolean zeroAllowed) {
    String v = value(key);
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

  private long positiveMillis(String key) {
    String v = value(key);
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

  private long count(String key) {
    String v = value(key);
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
