package io.dataclay.ds;

import io.dataclay.client.Channels;
import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.ds.lm.BackendSession;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.exceptions.AccountAlreadyExistsException;
import io.dataclay.proto.Model;
import io.dataclay.rpc.TlsSettings;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real Logic Module (in-process, SQLite in a temporary directory) with the test model
 * registered, and Data Services started on it one at a time (memory engine, a free port, a fresh
 * backend directory each). A Data Service's "python" is a tiny script that publishes the secret
 * and socket path it was spawned with and sleeps, so a test's {@link EnvironmentPeer} can attach
 * in its place.
 * Everything started is stopped by {@link #stopDataService()} and {@link #close()}.
 */
public final class TestCluster implements AutoCloseable {
  /** The administrator account. */
  public static final String ADMIN = "admin";
  /** Its password. */
  public static final String ADMIN_PASSWORD = "admin-secret";

  private final Path dir;
  private final TestLogicModule lm;
  private final LogicModuleClient adminLm;
  private final String adminToken;
  private final Path fakePython;
  private final List<AutoCloseable> clients = new ArrayList<>();
  private final List<AutoCloseable> perDataService = new ArrayList<>();
  private int started;
  private Path backendDir;
  private Path secretFile;
  private final Path clusterSecretFile;
  private ObjectStore store;
  private DataServiceNode node;
  private BackendSession dsAdmin;

  private TestCluster(Path dir) throws Exception {
    this.dir = dir;
    this.lm = TestLogicModule.start(dir.resolve("lm-home"), ADMIN, ADMIN_PASSWORD);
    String[] token = new String[1];
    this.adminLm = new LogicModuleClient(lm.channel(), () -> token[0]);
    token[0] = adminLm.newSession(ADMIN, ADMIN_PASSWORD, "").getToken();
    this.adminToken = token[0];
    fakePython = dir.resolve("fake-python");
    clusterSecretFile = TestLogicModule.secretFile(dir);
    adminLm.registerModel(TestObjects.shapesModel("class Point:\n    x: str\n"));
  }

  /** A Logic Module with the test model registered; start Data Services with {@link #startDataService}. */
  public static TestCluster withLogicModule(Path dir) throws Exception {
    return new TestCluster(dir);
  }

  /** A Logic Module and a Data Service with default settings. */
  public static TestCluster start(Path dir) throws Exception {
    return withLogicModule(dir).startDataService(Map.of());
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
    secretFile = dir.resolve("ee-secret-" + started);
    // stands in for Python: publishes the secret it read on standard input, its socket and its whole
    // environment, then waits for a test's EnvironmentPeer to attach in its place
    Files.writeString(fakePython, "#!/bin/sh\n"
        + "read secret\n"
        + "env > '" + secretFile + ".env'\n"
        + "printf '%s\\n%s\\n' \"$secret\" \"$DATACLAY_EE_SOCKET\" > '" + secretFile + ".tmp'\n"
        + "mv '" + secretFile + ".tmp' '" + secretFile + "'\n"
        + "exec sleep 600\n");
    Files.setPosixFilePermissions(fakePython, PosixFilePermissions.fromString("rwx------"));
    Map<String, String> settings = new HashMap<>();
    settings.put("PATH", System.getenv("PATH"));
    settings.put("DATACLAY_CLUSTER_SECRET_FILE", clusterSecretFile.toString());
    settings.put("DATACLAY_BACKEND_NAME", "test-backend");
    settings.put("DATACLAY_BACKEND_DIR", backend.toString());
    settings.put("DATACLAY_STORE", "memory");
    settings.put("DATACLAY_PYTHON", fakePython.toString());
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
    long deadline = System.currentTimeMillis() + 10_000;
    while (lmCalls("Heartbeat") < heartbeats + 2 && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
    }
  }

  /** Stops the running Data Service, its environment process and the peers attached to it. */
  public void stopDataService() throws Exception {
    for (AutoCloseable c : perDataService) {
      c.close();
    }
    perDataService.clear();
    if (node != null) {
      node.close();
      node = null;
    }
    if (store != null) {
      store.close();
      store = null;
    }
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

  /** The environment the current execution environment process was started with, as NAME=value lines. */
  public List<String> environmentOfEnvironment() throws Exception {
    secret(null);
    return Files.readAllLines(Path.of(secretFile + ".env"));
  }

  /** Its store. */
  public ObjectStore store() {
    return store;
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
      return anonymous.newSession(user, password(user), "").getToken();
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

  /** Whether a secret was published by an environment process of the running Data Service. */
  public boolean environmentSpawned() {
    return Files.exists(secretFile);
  }

  /** The secret of the current environment process, once it differs from {@code previous}. */
  public String secret(String previous) throws Exception {
    long deadline = System.currentTimeMillis() + 10_000;
    while (System.currentTimeMillis() < deadline) {
      if (Files.exists(secretFile)) {
        String s = Files.readAllLines(secretFile).get(0);
        if (!s.isEmpty() && !s.equals(previous)) {
          return s;
        }
      }
      Thread.sleep(10);
    }
    throw new AssertionError("no new execution environment secret within 10 s");
  }

  /** The socket the environment process was told to connect to (DATACLAY_EE_SOCKET). */
  public Path socket() throws Exception {
    secret(null);
    return Path.of(Files.readAllLines(secretFile).get(1));
  }

  /** A peer attached with the current process's secret, once the Data Service counts it alive. */
  public EnvironmentPeer attachPeer() throws Exception {
    return attachPeer(null);
  }

  /**
   * A peer attached with the secret of a process started after the one that published
   * {@code previousSecret}; returns once the Data Service counts the environment alive.
   */
  public EnvironmentPeer attachPeer(String previousSecret) throws Exception {
    String secret = secret(previousSecret);
    EnvironmentPeer peer = closing(EnvironmentPeer.attach(socket(), secret));
    long deadline = System.currentTimeMillis() + 10_000;
    while (!pythonAlive()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("the Data Service did not take the attached environment within 10 s");
      }
      Thread.sleep(5);
    }
    return peer;
  }

  /** Whether the running Data Service counts its Python environment alive. */
  public boolean pythonAlive() {
    return node.report().environments().stream()
        .anyMatch(e -> e.language() == io.dataclay.common.Language.PYTHON && e.alive());
  }

  /** Closes {@code resource} when the running Data Service stops. */
  public <T extends AutoCloseable> T closing(T resource) {
    perDataService.add(resource);
    return resource;
  }

  @Override
  public void close() throws Exception {
    stopDataService();
    for (AutoCloseable c : clients) {
      c.close();
    }
    adminLm.close();
    lm.close();
  }
}
