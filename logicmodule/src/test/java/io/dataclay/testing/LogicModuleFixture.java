package io.dataclay.testing;

import io.dataclay.common.ClusterSecret;
import io.dataclay.common.Language;
import io.dataclay.logic.backends.BackendCalls;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.MetadataSync;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.logic.metadata.SessionRecord;
import io.dataclay.logic.outgoing.GrpcBackendCalls;
import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.rpc.TlsSettings;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real Logic Module service on a metadata database, with a test clock, an administrator
 * ("admin") logged in, and helpers to add users, sessions and backends. Every fixture account
 * has the password {@link #PASSWORD}. PBKDF2 costs ~0.15 s per hash here, so the arrange steps
 * reuse one hash made by the real code and open sessions by storing them (the way NewSession
 * does); tests of log-in itself call the service. Close it to close the database.
 */
public final class LogicModuleFixture implements AutoCloseable {
  /** Session lifetime of the fixture's service. */
  public static final Duration SESSION_TTL = Duration.ofHours(1);
  /** Liveness window of the fixture's service. */
  public static final long BACKEND_TIMEOUT_MS = 5_000;
  /** The password of every fixture account. */
  public static final String PASSWORD = "fixture-password";
  /** The fixture cluster's secret (backends prove it to open their sessions). */
  public static final ClusterSecret SECRET = ClusterSecret.of("fixture-cluster-secret-0123456789abcdef");
  /** Largest model the fixture's service accepts. */
  public static final long MAX_MODEL_BYTES = 1 << 20;

  private static final AtomicReference<AccountRecord> HASHED_PASSWORD = new AtomicReference<>();
  private static final SecureRandom RANDOM = new SecureRandom();

  /** The service's time; advance it to expire sessions or silence backends. */
  public final TestClock clock;
  /** The metadata database, for arranging and inspecting rows directly. */
  public final MetadataStore store;
  /** What the service calls backends with: the real deployer unless the test gave its own. */
  public final BackendCalls deployer;
  /** The Logic Module logic under test. */
  public final LogicModuleService service;
  /** A session token of the administrator "admin". */
  public final String adminToken;
  /** A session token of a backend (the cluster's own role, not a user). */
  public final String backendToken;
  /** The backend ID {@link #backendToken} speaks for. */
  public final String backendId = UUID.randomUUID().toString();
  /** The peer address every call of the fixture comes from (set it to test per-peer throttling). */
  public final AtomicReference<String> peer = new AtomicReference<>("10.0.0.1");

  /** A fixture on the database at {@code url}, with a fresh clock. */
  public LogicModuleFixture(String url) {
    this(url, new TestClock());
  }

  /** A fixture on the database at {@code url} (existing rows are kept), reading time from {@code clock}. */
  public LogicModuleFixture(String url, TestClock clock) {
    this(url, clock, new GrpcBackendCalls(TlsSettings.plaintext()), 0);
  }

  /**
   * A fixture calling backends through {@code calls} and promoting replicas of backends silent for
   * {@code promoteAfterMs} (0: never).
   */
  public LogicModuleFixture(String url, TestClock clock, BackendCalls calls, long promoteAfterMs) {
    this.clock = clock;
    this.store = MetadataStore.open(url, MetadataSync.NORMAL);
    // registered (not alive: it never heartbeats) so that its session may make every backend call
    store.backends().upsert(new BackendRecord(backendId, "fixture-backend", "127.0.0.1", 1, List.of(Language.PYTHON),
        "kv"));
    this.deployer = calls;
    this.service = new LogicModuleService(store, deployer, new LogicModuleService.Settings(SESSION_TTL,
        BACKEND_TIMEOUT_MS, SECRET, MAX_MODEL_BYTES, () -> true, promoteAfterMs), clock, peer::get);
    if (HASHED_PASSWORD.get() == null) {
      service.bootstrapAdministrator("admin", PASSWORD);
      HASHED_PASSWORD.compareAndSet(null, store.accounts().find("admin").orElseThrow());
    }
    store.accounts().create(account("admin", true));
    this.adminToken = session("admin", "admin");
    this.backendToken = backendSession(backendId);
  }

  /** Opens the session of backend {@code id} the way a Data Service does, and returns its token. */
  public String backendSession(String id) {
    byte[] bits = new byte[12];
    RANDOM.nextBytes(bits);
    String nonce = Base64.getUrlEncoder().encodeToString(bits);
    long now = clock.millis();
    return service.newBackendSession(id, now, nonce, SECRET.proof(id, now, nonce)).token();
  }

  /** A read-write, unlimited contract on {@code dataset} for {@code beneficiary} (the owner is the caller). */
  public static ContractRecord contract(String dataset, String beneficiary) {
    return new ContractRecord(dataset, "", beneficiary, false, 0, 0);
  }

  /** Creates a non-administrator account (its own dataset included) and returns a session token for it. */
  public String user(String name) {
    store.accounts().create(account(name, false));
    return session(name, name);
  }

  /** Creates a non-administrator account an administrator allowed to register models; returns a session token. */
  public String modeler(String name) {
    String token = user(name);
    store.accounts().setModelRegistration(name, true);
    return token;
  }

  /** Opens a session of an existing account on {@code dataset} and returns its token. */
  public String session(String username, String dataset) {
    byte[] bits = new byte[32];
    RANDOM.nextBytes(bits);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bits);
    store.sessions().insert(new SessionRecord(sha256(token), username, dataset,
        clock.millis() + SESSION_TTL.toMillis(), false, false, null));
    return token;
  }

  /** Registers a Python backend at 127.0.0.1:{@code port} (with a session of its own) and returns its ID. */
  public String backend(int port) {
    String id = UUID.randomUUID().toString();
    service.registerBackend(backendSession(id), new BackendRecord(id, "backend-" + port, "127.0.0.1", port,
        List.of(Language.PYTHON), "kv"));
    return id;
  }

  /**
   * Registers {@code objects} as one group (RegisterObjects) with session {@code token}; an empty
   * alias is none. Throws the group's refusal.
   */
  public void register(String token, List<ObjectRecord> objects, String alias, String aliasObjectId) {
    boolean named = alias != null && !alias.isEmpty();
    String target = aliasObjectId == null || aliasObjectId.isEmpty() ? null : aliasObjectId;
    service.registerObjects(token, List.of(new ObjectGroup(objects, named ? alias : null, named && target == null
        ? "" : target))).get(0).ifPresent(refused -> {
          throw refused;
        });
  }

  @Override
  public void close() {
    deployer.close();
    store.close();
  }

  private static AccountRecord account(String name, boolean admin) {
    AccountRecord h = HASHED_PASSWORD.get();
    return new AccountRecord(name, h.passwordHash(), h.passwordSalt(), h.passwordIterations(), admin);
  }

  private static String sha256(String token) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
