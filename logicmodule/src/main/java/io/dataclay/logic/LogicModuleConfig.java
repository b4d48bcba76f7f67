package io.dataclay.logic;

import com.google.gson.GsonBuilder;
import io.dataclay.client.Channels;
import io.dataclay.common.ClusterSecret;
import io.dataclay.common.Ports;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.logic.accounts.SessionLimits;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.MetadataSync;
import io.dataclay.rpc.PemFile;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.metrics.MetricsSettings;
import io.dataclay.server.tracing.Tracing;
import java.nio.file.Path;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.ArrayList;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Every setting of the Logic Module, read once from a map of DATACLAY_* keys. This is the only
 * class of the Logic Module that looks at the environment.
 */
public final class LogicModuleConfig {
  /**
   * Every key the Logic Module reads: its name, its default as it would be written in the
   * environment (empty: none, or one derived as the meaning says) and its meaning. The constructor
   * takes keys and defaults from here; {@code logicmodule.jar settings --json} prints this table.
   */
  public enum Setting {
    PORT("DATACLAY_PORT", Integer.toString(Ports.LOGIC_MODULE), "TCP port the Logic Module listens on (0: any free port)."),
    HOST("DATACLAY_HOST", "127.0.0.1",
        "Address clients and backends reach the Logic Module at (its certificate names it)."),
    BIND_HOST("DATACLAY_BIND_HOST", "",
        "Address to listen on; empty: DATACLAY_HOST. 0.0.0.0 (or ::) listens on every interface, which only"
            + " this setting can ask for."),
    METRICS_PORT(MetricsSettings.PORT, "", MetricsSettings.PORT_MEANING),
    METRICS_HOST(MetricsSettings.HOST, MetricsSettings.HOST_DEFAULT, MetricsSettings.HOST_MEANING),
    METRICS_TOKEN_FILE(MetricsSettings.TOKEN_FILE, "", MetricsSettings.TOKEN_FILE_MEANING),
    TLS_CA("DATACLAY_TLS_CA", "",
        "PEM file of the cluster CA: set with DATACLAY_TLS_CERT and DATACLAY_TLS_KEY, every connection in and"
            + " out uses TLS; empty: plaintext."),
    TLS_CERT("DATACLAY_TLS_CERT", "", "PEM file of the Logic Module's certificate, signed by the CA and naming"
        + " DATACLAY_HOST."),
    TLS_KEY("DATACLAY_TLS_KEY", "", "PEM file (unencrypted PKCS#8) of that certificate's private key."),
    HOME("DATACLAY_HOME", "~/.dataclay",
        "Directory of a local cluster's state; the embedded database lives in its lm/ subdirectory. Both must be"
            + " this user's alone (mode 0700): another owner or a looser mode is refused at start."),
    METADATA_URL("DATACLAY_METADATA_URL", "",
        "JDBC URL of the metadata database (jdbc:sqlite: or jdbc:postgresql:); empty: embedded SQLite at"
            + " $DATACLAY_HOME/lm/metadata.db."),
    USER("DATACLAY_USER", "",
        "Initial administrator, created at start when no account of that name exists (never overwritten)."),
    PASSWORD("DATACLAY_PASSWORD", "",
        "Password of the initial administrator. When DATACLAY_USER is set and this is not, the first line of"
            + " standard input is read instead (how `dataclay start` passes it: never in an environment or on a"
            + " command line)."),
    CLUSTER_SECRET_FILE("DATACLAY_CLUSTER_SECRET_FILE", "",
        "File (mode 0600) holding the cluster secret backends prove they know. Required."),
    MAX_MESSAGE_SIZE("DATACLAY_MAX_MESSAGE_SIZE", "768M",
        "Largest request (and answer) message, e.g. 768M: a bigger one is refused before it is read whole."
            + " Sized by default for the white paper's 512 MB texts."),
    MODEL_MAX_BYTES("DATACLAY_MODEL_MAX_BYTES", String.valueOf(16L << 20),
        "Largest model (sum of its files' bytes) an account may register."),
    MIN_PASSWORD_LENGTH("DATACLAY_MIN_PASSWORD_LENGTH", String.valueOf(Checks.MIN_PASSWORD),
        "Shortest password a new account may have; a deployment may lower it (dataClay 4's examples use"
            + " six-character passwords), which makes guessing them easier."),
    SESSION_TTL_HOURS("DATACLAY_SESSION_TTL_HOURS", "168", "Lifetime of a session from NewSession, in hours."),
    BACKEND_TIMEOUT_MS("DATACLAY_BACKEND_TIMEOUT_MS", "5000",
        "A backend is alive if it heartbeated within this many milliseconds."),
    PROMOTE_AFTER_MS("DATACLAY_PROMOTE_AFTER_MS", "6000",
        "Failover: after a backend has sent no heartbeat for this many milliseconds, one replica of each of its"
            + " replicated objects is promoted to master, so writes go on; 0 never promotes. At least 2000 and"
            + " more than DATACLAY_BACKEND_TIMEOUT_MS (whose value plus 1000 is the default when that is more)."),
    UNREACHABLE_MS("DATACLAY_UNREACHABLE_MS", String.valueOf(Channels.DEFAULT_UNREACHABLE_MS),
        "Milliseconds a call to a backend waits for one that answers neither it nor a ping before it fails"
            + " with BACKEND_UNAVAILABLE; 0: forever."),
    METADATA_SYNC("DATACLAY_METADATA_SYNC", "normal",
        "SQLite durability knob: normal (WAL; a commit survives kill -9 of the process but the last commits"
            + " may be lost on power loss or OS crash) or full (fsync per commit; survives both, slower)."),
    GC_INTERVAL("DATACLAY_GC_INTERVAL", "600",
        "Seconds between garbage collections (0: only when an administrator calls CollectGarbage)."),
    MAX_SESSIONS_PER_ACCOUNT("DATACLAY_MAX_SESSIONS_PER_ACCOUNT", String.valueOf(SessionLimits.DEFAULT.maxOpen()),
        "Most sessions one account may hold open at once (closed and expired ones do not count)."),
    SESSIONS_PER_SECOND("DATACLAY_SESSIONS_PER_SECOND", String.valueOf((long) SessionLimits.DEFAULT.perSecond()),
        "New sessions one account may open a second, on average; bursts of ten times as many pass.");

    private final String key;
    private final String defaultValue;
    private final String meaning;

    Setting(String key, String defaultValue, String meaning) {
      this.key = key;
      this.defaultValue = defaultValue;
      this.meaning = meaning;
    }

    /** The environment variable, e.g. DATACLAY_PORT. */
    public String key() {
      return key;
    }

    /** The default as written in the environment; empty when there is none or it is derived. */
    public String defaultValue() {
      return defaultValue;
    }

    /** What the setting does, in a sentence or two. */
    public String meaning() {
      return meaning;
    }

    /**
     * The table as JSON: {@code [{"key": "DATACLAY_...", "default": "...", "meaning": "..."}, ...]}
     * in declaration order (what {@code logicmodule.jar settings --json} prints).
     */
    public static String json() {
      List<Map<String, String>> rows = new ArrayList<>();
      for (Setting s : values()) {
        Map<String, String> row = new LinkedHashMap<>();
        row.put("key", s.key);
        row.put("default", s.defaultValue);
        row.put("meaning", s.meaning);
        rows.add(row);
      }
      return new GsonBuilder().disableHtmlEscaping().create().toJson(rows);
    }
  }

  /** Key of {@link Setting#BIND_HOST}, named in LogicModuleServer's errors. */
  public static final String BIND_HOST = Setting.BIND_HOST.key();
  /** Default of {@link Setting#MAX_MESSAGE_SIZE} in bytes: 768 MiB. */
  public static final int DEFAULT_MAX_MESSAGE_BYTES =
      (int) parseSize(Setting.MAX_MESSAGE_SIZE.key(), Setting.MAX_MESSAGE_SIZE.defaultValue());

  private final int port;
  private final String host;
  private final String bindHost;
  private final TlsSettings tls;
  private final Path home;
  private final String metadataUrl;
  private final boolean metadataInHome;
  private final String adminUser;
  private final String adminPassword;
  private final Duration sessionTtl;
  private final long backendTimeoutMs;
  private final long promoteAfterMs;
  private final long unreachableMs;
  private final MetadataSync metadataSync;
  private final Duration gcInterval;
  private final SessionLimits sessionLimits;
  private final ClusterSecret clusterSecret;
  private final long maxModelBytes;
  private final int minPasswordLength;
  private final int maxMessageBytes;
  private final MetricsSettings metrics;
  private final Map<String, String> tracingKeys;

  /** The service name of the Logic Module's traces unless OTEL_SERVICE_NAME gives another. */
  public static final String TRACING_SERVICE_NAME = "pmclay-logicmodule";

  /**
   * Reads the settings from {@code env}; absent keys take their defaults.
   *
   * @throws IllegalArgumentException naming the key whose value is malformed
   */
  public LogicModuleConfig(Map<String, String> env) {
    this(env, () -> null);
  }

  /**
   * Reads the settings from {@code env}; absent keys take their defaults. {@code stdinPassword}
   * supplies the administrator's password when {@link #USER} is set and {@link #PASSWORD} is not.
   *
   * @throws IllegalArgumentException naming the key whose value is malformed
   */
  public LogicModuleConfig(Map<String, String> env, Supplier<String> stdinPassword) {
    this.port = (int) number(env, Setting.PORT, 0, 65535);
    this.host = hostOf(env, Setting.HOST.key(), Setting.HOST.defaultValue());
    this.bindHost = hostOf(env, Setting.BIND_HOST.key(), host);
    try {
      this.tls = TlsSettings.forServer(pem(env, Setting.TLS_CA), pem(env, Setting.TLS_CERT), pem(env, Setting.TLS_KEY));
    } catch (InvalidArgumentException e) {
      throw new IllegalArgumentException(e.getMessage());
    }
    try {
      this.metrics = MetricsSettings.from(key -> blankToNull(env.get(key))).checkedWith(tls);
    } catch (InvalidArgumentException e) {
      throw new IllegalArgumentException(e.getMessage());
    }
    this.tracingKeys = otelKeys(env);
    this.home = homeOf(env);
    this.metadataUrl = metadataUrlOf(env, home);
    this.metadataInHome = get(env, Setting.METADATA_URL) == null;
    this.adminUser = get(env, Setting.USER);
    String password = get(env, Setting.PASSWORD);
    if (adminUser != null && password == null) {
      password = blankToNull(stdinPassword.get());
    }
    this.adminPassword = password;
    if (adminUser != null && adminPassword == null) {
      throw new IllegalArgumentException(Setting.PASSWORD.key() + " (or a first line on standard input) must give the"
          + " password when " + Setting.USER.key() + " is set");
    }
    String secretFile = get(env, Setting.CLUSTER_SECRET_FILE);
    try {
      this.clusterSecret = ClusterSecret.read(Setting.CLUSTER_SECRET_FILE.key(),
          secretFile == null ? null : Paths.get(secretFile));
    } catch (InvalidArgumentException e) {
      throw new IllegalArgumentException(e.getMessage());
    }
    this.maxModelBytes = number(env, Setting.MODEL_MAX_BYTES, 1, Integer.MAX_VALUE);
    this.minPasswordLength = (int) number(env, Setting.MIN_PASSWORD_LENGTH, 1, 1024);
    this.maxMessageBytes = (int) size(env, Setting.MAX_MESSAGE_SIZE, 1 << 20, Integer.MAX_VALUE);
    this.sessionTtl = Duration.ofHours(number(env, Setting.SESSION_TTL_HOURS, 1, 24L * 365 * 100));
    this.backendTimeoutMs = number(env, Setting.BACKEND_TIMEOUT_MS, 1, Long.MAX_VALUE / 2);
    // the default waits at least a second longer than a backend may be silent and still count as alive
    this.promoteAfterMs = number(env, Setting.PROMOTE_AFTER_MS,
        Math.max(Long.parseLong(Setting.PROMOTE_AFTER_MS.defaultValue()), backendTimeoutMs + 1000), 0,
        Long.MAX_VALUE / 2);
    if (promoteAfterMs != 0 && (promoteAfterMs < 2000 || promoteAfterMs <= backendTimeoutMs)) {
      throw new IllegalArgumentException(Setting.PROMOTE_AFTER_MS.key() + " must be 0 (never promote) or at least 2000"
          + " and more than " + Setting.BACKEND_TIMEOUT_MS.key() + " (" + backendTimeoutMs + "), not " + promoteAfterMs);
    }
    this.unreachableMs = number(env, Setting.UNREACHABLE_MS, 0, Integer.MAX_VALUE);
    this.metadataSync = syncOf(env.get(Setting.METADATA_SYNC.key()));
    this.gcInterval = Duration.ofSeconds(number(env, Setting.GC_INTERVAL, 0, 365L * 24 * 3600));
    long perSecond = number(env, Setting.SESSIONS_PER_SECOND, 1, 1_000_000);
    this.sessionLimits = new SessionLimits(number(env, Setting.MAX_SESSIONS_PER_ACCOUNT, 1, 100_000_000), perSecond,
        perSecond * 10);
  }

  /** The settings of this process's environment (and standard input for the administrator's password). */
  public static LogicModuleConfig fromEnvironment() {
    return new LogicModuleConfig(System.getenv(), LogicModuleConfig::firstLineOfStdin);
  }

  private static String firstLineOfStdin() {
    try {
      return new java.io.BufferedReader(new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8))
          .readLine();
    } catch (java.io.IOException e) {
      return null;
    }
  }

  /** How long a silent backend is waited for before promoting its replicas (0: never). */
  public long promoteAfterMs() {
    return promoteAfterMs;
  }

  /** How long a call to a silent backend waits before BACKEND_UNAVAILABLE (0: forever). */
  public long unreachableMs() {
    return unreachableMs;
  }

  /** The secret backends prove they know. */
  public ClusterSecret clusterSecret() {
    return clusterSecret;
  }

  /** Largest request or answer message, in bytes. */
  public int maxMessageBytes() {
    return maxMessageBytes;
  }

  /** The shortest password a new account may have. */
  public int minPasswordLength() {
    return minPasswordLength;
  }

  /** Largest model an account may register, in bytes. */
  public long maxModelBytes() {
    return maxModelBytes;
  }

  /** Port to listen on; 0 means any free port. */
  public int port() {
    return port;
  }

  /** The address clients reach the Logic Module at. */
  public String host() {
    return host;
  }

  /** The address to listen on (DATACLAY_HOST unless DATACLAY_BIND_HOST says otherwise). */
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

  /**
   * The Logic Module's tracing: off unless the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; then configured by the standard OTEL_* variables,
   * which OpenTelemetry documents (they are not DATACLAY_* settings, so not in {@link Setting}).
   *
   * @throws IllegalArgumentException saying what is wrong when an OTEL_* value is
   */
  public Tracing tracing() {
    return Tracing.fromEnvironment(tracingKeys, TRACING_SERVICE_NAME);
  }

  private static Map<String, String> otelKeys(Map<String, String> env) {
    Map<String, String> out = new LinkedHashMap<>();
    env.forEach((k, v) -> {
      if (k.startsWith("OTEL_")) {
        out.put(k, v);
      }
    });
    return Map.copyOf(out);
  }

  /** The cluster's state directory. */
  public Path home() {
    return home;
  }

  /** JDBC URL of the metadata database (jdbc:sqlite:... or jdbc:postgresql://...). */
  public String metadataUrl() {
    return metadataUrl;
  }

  /** Whether the metadata is the embedded database under {@link #home()} (DATACLAY_METADATA_URL unset). */
  public boolean metadataInHome() {
    return metadataInHome;
  }

  /** Name of the initial administrator, or null when none is configured. */
  public String adminUser() {
    return adminUser;
  }

  /** Password of the initial administrator, or null when none is configured. */
  public String adminPassword() {
    return adminPassword;
  }

  /** How long a new session lasts. */
  public Duration sessionTtl() {
    return sessionTtl;
  }

  /** Heartbeat window within which a backend counts as alive. */
  public long backendTimeoutMs() {
    return backendTimeoutMs;
  }

  /** SQLite commit durability (ignored for PostgreSQL, whose server settings decide). */
  public MetadataSync metadataSync() {
    return metadataSync;
  }

  /** Per-account limits on open sessions and on new sessions a second. */
  public SessionLimits sessionLimits() {
    return sessionLimits;
  }

  /** Time between periodic garbage collections; zero when they are disabled. */
  public Duration gcInterval() {
    return gcInterval;
  }

  private static Path homeOf(Map<String, String> env) {
    String raw = blankToNull(env.getOrDefault(Setting.HOME.key(), Setting.HOME.defaultValue()));
    String userHome = System.getProperty("user.home");
    if (raw == null) {
      return Paths.get(userHome, ".dataclay");
    }
    if (raw.equals("~") || raw.startsWith("~/")) {
      return Paths.get(userHome, raw.substring(1));
    }
    return Paths.get(raw);
  }

  private static String metadataUrlOf(Map<String, String> env, Path home) {
    String raw = get(env, Setting.METADATA_URL);
    if (raw == null) {
      return "jdbc:sqlite:" + home.resolve("lm").resolve("metadata.db").toAbsolutePath();
    }
    if (!raw.startsWith("jdbc:sqlite:") && !raw.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException(Setting.METADATA_URL.key() + " must be a jdbc:sqlite: or jdbc:postgresql: URL, got '"
          + raw.split("\\?", 2)[0] + "'");
    }
    return raw;
  }

  private static MetadataSync syncOf(String raw) {
    String value = blankToNull(raw);
    if (value == null) {
      value = Setting.METADATA_SYNC.defaultValue();
    }
    switch (value.toLowerCase(Locale.ROOT)) {
      case "normal": return MetadataSync.NORMAL;
      case "full": return MetadataSync.FULL;
      default:
        throw new IllegalArgumentException(Setting.METADATA_SYNC.key() + " must be 'normal' or 'full', got '" + value + "'");
    }
  }

  private static long number(Map<String, String> env, Setting setting, long min, long max) {
    return number(env, setting, Long.parseLong(setting.defaultValue()), min, max);
  }

  private static long number(Map<String, String> env, Setting setting, long fallback, long min, long max) {
    String key = setting.key();
    String raw = blankToNull(env.get(key));
    if (raw == null) {
      return fallback;
    }
    long value;
    try {
      value = Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be an integer, got '" + raw + "'");
    }
    if (value < min || value > max) {
      throw new IllegalArgumentException(key + " must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }

  // a size such as 768M, 2G or 1048576 (bytes), between min and max
  private static long size(Map<String, String> env, Setting setting, long min, long max) {
    String raw = blankToNull(env.get(setting.key()));
    long value = parseSize(setting.key(), raw == null ? setting.defaultValue() : raw);
    if (value < min || value > max) {
      throw new IllegalArgumentException(setting.key() + " must be between " + min + " and " + max + " bytes, got '"
          + raw + "'");
    }
    return value;
  }

  private static long parseSize(String key, String raw) {
    String t = raw.trim().toUpperCase(Locale.ROOT);
    long unit = 1;
    if (t.endsWith("K") || t.endsWith("M") || t.endsWith("G")) {
      unit = t.endsWith("K") ? 1L << 10 : t.endsWith("M") ? 1L << 20 : 1L << 30;
      t = t.substring(0, t.length() - 1);
    }
    try {
      return Math.multiplyExact(Long.parseLong(t), unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(key + " must be a size such as 768M or 1G, got '" + raw + "'");
    }
  }

  private static String hostOf(Map<String, String> env, String key, String fallback) {
    String raw = blankToNull(env.get(key));
    if (raw == null) {
      return fallback;
    }
    String value = raw.trim();
    if (value.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException(key + " must be a host name or address, got '" + raw + "'");
    }
    return value;
  }

  private static PemFile pem(Map<String, String> env, Setting setting) {
    String path = get(env, setting);
    return path == null ? null : PemFile.read(setting.key(), path.trim());
  }

  // the value of a setting without a default, or null when it is unset or blank
  private static String get(Map<String, String> env, Setting setting) {
    return blankToNull(env.get(setting.key()));
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }
}
