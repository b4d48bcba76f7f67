package io.dataclay.ds;

import io.dataclay.client.Channels;
import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.Language;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.lm.BackendSession;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.exceptions.AccountAlreadyExistsException;
import io.dataclay.proto.Model;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.testing.Eventually;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.dataclay.ds.store.TestPools;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Logic Module (in-process, SQLite in a temporary directory) with the test model
 * registered, and Data Services started on it one at a time (memory engine, a free port, a fresh
 * backend directory each). A Data Service's "python" is the stand-in of {@link EnvironmentPeers}:
 * each execution-environment process it starts (one per account, at the account's first call) is
 * an {@link EnvironmentPeer} a test plays. Java methods run in the Data Service's own process
 * (DATACLAY_JAVA_EE=in-process) and processes are not confined (DATACLAY_EE_CONFINEMENT=none: the
 * stand-in is no launcher) unless a test's overrides say otherwise.
 * It is a JUnit extension: a test class registers one (see {@link #forTheClass()} and the other
 * factories) and it starts and stops with the class or with each test, also when a test fails.
 */
public final class TestCluster
    implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback, AutoCloseable {
  /** The administrator account. */
  public static final String ADMIN = "admin";
  /** Its password. */
  public static final String ADMIN_PASSWORD = "admin-secret";

  private final Scope scope;
  private final boolean withDataService;
  private Path dir;
  private TestLogicModule lm;
  private LogicModuleClient adminLm;
  private String adminToken;
  private final List<AutoCloseable> clients = new ArrayList<>();
  private final ExecutorService calls = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "test-cluster-call");
    t.setDaemon(true);
    return t;
  });
  private final List<AutoCloseable> perDataService = new ArrayList<>();
  private int started;
  private Path backendDir;
  private EnvironmentPeers peers;
  private Path clusterSecretFile;
  private ObjectStore store;
  private DataServiceNode node;
  private BackendSession dsAdmin;

  /** How long one cluster lives, and so which field it is registered in. */
  private enum Scope { CLASS, TEST }

  private TestCluster(Scope scope, boolean withDataService) {
    this.scope = scope;
    this.withDataService = withDataService;
  }

  /**
   * One Logic Module for the whole test class (register it in a static {@code @RegisterExtension}
   * field); each test starts its own Data Service, which is stopped after the test.
   */
  public static TestCluster forTheClass() {
    return new TestCluster(Scope.CLASS, false);
  }

  /**
   * One Logic Module and one Data Service with default settings for the whole test class
   * (register it in a static {@code @RegisterExtension} field).
   */
  public static TestCluster forTheClassWithDataService() {
    return new TestCluster(Scope.CLASS, true);
  }

  /**
   * A fresh Logic Module for each test (register it in an instance {@code @RegisterExtension}
   * field); the test starts its Data Service, and everything is stopped after the test.
   */
  public static TestCluster forEachTest() {
    return new TestCluster(Scope.TEST, false);
  }

  /**
   * A fresh Logic Module and Data Service with default settings for each test (register it in an
   * instance {@code @RegisterExtension} field); everything is stopped after the test.
   */
  public static TestCluster forEachTestWithDataService() {
    return new TestCluster(Scope.TEST, true);
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    if (scope != Scope.CLASS) {
      throw new IllegalStateException("a cluster for each test is registered in an instance field");
    }
    start();
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    if (scope == Scope.TEST) {
      start();
    } else if (lm == null) {
      throw new IllegalStateException("a cluster for the class is registered in a static field");
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    if (scope == Scope.TEST) {
      close();
    } else if (!withDataService) {
      stopDataService();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    close();
  }

  /** Starts the Logic Module (in a new temporary directory) with the test model, and the Data Service if asked. */
  private void start() throws Exception {
    dir = Files.createTempDirectory("test-cluster");
    lm = TestLogicModule.start(dir.resolve("lm-home"), ADMIN, ADMIN_PASSWORD);
    String[] token = new String[1];
    adminLm = new LogicModuleClient(lm.channel(), () -> token[0]);
    token[0] = adminLm.newSession(ADMIN, ADMIN_PASSWORD, "").token();
    adminToken = token[0];
    clusterSecretFile = TestLogicModule.secretFile(dir);
    adminLm.registerModel(TestObjects.shapesModel("class Point:\n    x: str\n"));
    if (withDataService) {
      startDataService(Map.of());
    }
  }

  /** Starts a Data Service in a fresh backend directory with {@code overrides} on top of the test settings. */
  public TestCluster startDataService(Map<String, String> overrides) throws Exception {
    return startDataService(dir.resolve("backend-" + (started + 1)), overrides);
  }

  /** Stops the running Data Service and starts another on the same backend directory. */
  public TestCluster restartDataService(Map<String, String> overrides) throws Exception {
    Path same = backendDir;
    stopDataService();
    return startDataService(same, overrides);
  }

  private TestCluster startDataService(Path backend, Map<String, String> overrides) throws Exception {
    started++;
    backendDir = backend;
    peers = EnvironmentPeers.listen();
    Map<String, String> settings = new HashMap<>();
    settings.put("PATH", System.getenv("PATH"));
    settings.put("DATACLAY_CLUSTER_SECRET_FILE", clusterSecretFile.toString());
    settings.put("DATACLAY_PORT", Integer.toString(lm.port())); // where relayed calls to the Logic Module go
    settings.put("DATACLAY_BACKEND_NAME", "test-backend");
    settings.put("DATACLAY_BACKEND_DIR", backend.toString());
    settings.put("DATACLAY_STORE", "memory");
    settings.put("DATACLAY_PYTHON", peers.python().toString());
    settings.put("DATACLAY_JAVA_EE", "in-process");
    settings.put("DATACLAY_EE_CONFINEMENT", "none");
    settings.put("DATACLAY_EE_SPARES", "0");
    settings.put("DATACLAY_HEARTBEAT_MS", "200");
    settings.put("DATACLAY_EE_WAIT_MS", "3000");
    settings.putAll(overrides);
    DataServiceConfig config = DataServiceConfig.from(settings);
    store = ObjectStores.open(new StoreConfig(config.storeEngine(), config.storePath(), 64L << 20));
    dsAdmin = BackendSession.over(lm.channel(), config.clusterSecret(), BackendIdFile.readOrCreate(backend));
    node = DataServiceNode.start(config, store, DataServiceServer.listening(config.bindHost(), 0, config.tls()), dsAdmin);
    settle();
    return this;
  }

  /**
   * Waits for two more heartbeats: the first heartbeat's answer tells a new backend to forget the
   * sessions it cached (it cannot know what was closed before), and an answer after an access
   * change (a contract) tells it again; tests that count session validations start after those.
   */
  public void settle() throws InterruptedException {
    long heartbeats = lmCalls("Heartbeat");
    Eventually.within(Duration.ofSeconds(10), () -> lmCalls("Heartbeat") >= heartbeats + 2);
  }

  /** Stops the running Data Service, its environment processes and the peers playing them. */
  public void stopDataService() throws Exception {
    closeAll(perDataService);
    node = closed(node);
    store = closed(store);
    peers = closed(peers);
  }

  /** The running Data Service. */
  public DataServiceNode node() {
    return node;
  }

  /** Its backend directory. */
  public Path backendDir() {
    return backendDir;
  }

  /** The backend session it talks to the Logic Module (and other backends) with. */
  public BackendSession dataServiceAdmin() {
    return dsAdmin;
  }

  /** The token of the running Data Service's own backend session (what the cluster's servers call with). */
  public String backendToken() {
    return dsAdmin.token();
  }

  /** Its store. */
  public ObjectStore store() {
    return store;
  }

  /** Field {@code x} of object {@code id} as the running Data Service stores it (UTF-8). */
  public String storedX(UUID id) {
    return new String(store.get(id).orElseThrow().fields().get("x").value(), StandardCharsets.UTF_8);
  }

  /** The port it bound. */
  public int port() {
    return node.identity().port();
  }

  /** A Logic Module client with the administrator's session. */
  public LogicModuleClient adminLm() {
    return adminLm;
  }

  /** A channel to the Logic Module. */
  public Channel lmChannel() {
    return lm.channel();
  }

  /** The administrator's token. */
  public String adminToken() {
    return adminToken;
  }

  /** A session token of {@code user} (created as an ordinary account on first use). */
  public String session(String user) {
    try {
      adminLm.newAccount(user, password(user), false);
    } catch (AccountAlreadyExistsException exists) {
      // A second session of the same user.
    }
    try (LogicModuleClient anonymous = new LogicModuleClient(lm.channel(), () -> null)) {
      return anonymous.newSession(user, password(user), "").token();
    }
  }

  /** The password of test account {@code user}. */
  public static String password(String user) {
    return user + "-test-password";
  }

  /** A Logic Module client acting with {@code token}. */
  public LogicModuleClient lmAs(String token) {
    LogicModuleClient c = new LogicModuleClient(lm.channel(), () -> token);
    clients.add(c);
    return c;
  }

  /** A client of the running Data Service over a real channel, acting with {@code token}. */
  public DataServiceClient client(String token) {
    ManagedChannel channel = Channels.forAddress("127.0.0.1", port(), TlsSettings.plaintext());
    clients.add(() -> Channels.close(channel));
    return new DataServiceClient(channel, () -> token);
  }

  /** The Logic Module's count of calls to {@code rpc}. */
  public long lmCalls(String rpc) {
    return adminLm.getStats().getCallsMap().getOrDefault(rpc, 0L);
  }

  /** Registers another model (as the administrator). */
  public void registerModel(Model model) {
    adminLm.registerModel(model);
  }

  /** The execution-environment processes the running Data Service starts, as peers a test plays. */
  public EnvironmentPeers peers() {
    return peers;
  }

  /** The next process the running Data Service started, before its hello (within 10 s). */
  public EnvironmentPeer nextPeer() throws InterruptedException {
    return peers.next();
  }

  /** The next process the running Data Service started, once it said hello and got its models. */
  public EnvironmentPeer attach() throws Exception {
    EnvironmentPeer peer = nextPeer();
    peer.hello();
    return peer;
  }

  /** How many execution-environment processes the running (or last started) Data Service started. */
  public int spawned() {
    return peers == null ? 0 : peers.spawned();
  }

  /** The running Data Service's status of its {@code language} environment. */
  public EnvironmentStatus environment(Language language) {
    return node.report().environments().stream().filter(e -> e.language() == language).findFirst()
        .orElseThrow(() -> new AssertionError("no " + language + " environment"));
  }

  /** The status of the running Data Service's process serving {@code account} in {@code language}, or null. */
  public EnvironmentStatus.Process process(Language language, String account) {
    return environment(language).processes().stream().filter(p -> p.account().equals(account)).findFirst()
        .orElse(null);
  }

  /**
   * Grants {@code beneficiary} read-write access to {@code owner}'s own dataset (named after the
   * owner), making both accounts if needed; the beneficiary's sessions opened afterwards may use it.
   */
  public void grant(String owner, String beneficiary) {
    session(beneficiary);
    lmAs(session(owner)).newDataContract(owner, beneficiary);
  }

  /** A new Point of {@code user}'s holding x = "0" on the running Data Service, with a client of theirs. */
  public OwnedPoint ownedPoint(String user) {
    DataServiceClient client = client(session(user));
    UUID id = UUID.randomUUID();
    client.makePersistent(List.of(TestObjects.point(id, "0")), null);
    return new OwnedPoint(client, id);
  }

  /** A Point on the running Data Service and a client of its owner. */
  public record OwnedPoint(DataServiceClient client, UUID id) {}

  /** Calls {@code point}'s {@code method} without arguments through its owner's client, on a thread of its own. */
  public CompletableFuture<byte[]> call(OwnedPoint point, String method) {
    return call(point.client(), point.id(), method, "()");
  }

  /** Runs {@code call} on a thread of its own (calls that wait for a peer must not share one). */
  public <T> CompletableFuture<T> async(Supplier<T> call) {
    return CompletableFuture.supplyAsync(call, calls);
  }

  /** Calls {@code method} of {@code id} with {@code args} (UTF-8) through {@code client}, on a thread of its own. */
  public CompletableFuture<byte[]> call(DataServiceClient client, UUID id, String method, String args) {
    return async(() -> client.callMethod(id.toString(), method, args.getBytes(StandardCharsets.UTF_8)));
  }

  /** Closes {@code resource} when the running Data Service stops. */
  public <T extends AutoCloseable> T closing(T resource) {
    perDataService.add(resource);
    return resource;
  }

  /** Stops everything started (also what a failed start left) and removes the temporary directory. */
  @Override
  public void close() throws Exception {
    try {
      stopDataService();
      closeAll(clients);
      adminLm = closed(adminLm);
      lm = closed(lm);
      calls.shutdownNow();
    } finally {
      TestPools.delete(dir);
      dir = null;
    }
  }

  /** Closes {@code resource} if there is one; returns null, for the field that held it. */
  private static <T extends AutoCloseable> T closed(T resource) throws Exception {
    if (resource != null) {
      resource.close();
    }
    return null;
  }

  /** Closes and forgets each of {@code resources}. */
  private static void closeAll(List<AutoCloseable> resources) throws Exception {
    for (AutoCloseable r : resources) {
      r.close();
    }
    resources.clear();
  }
}
