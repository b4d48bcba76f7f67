package io.dataclay.ds;

import io.dataclay.client.Channels;
import io.dataclay.common.ClusterSecret;
import io.dataclay.common.PrivatePaths;
import io.dataclay.logic.LogicModuleServer;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.MetadataSync;
import io.dataclay.logic.outgoing.GrpcBackendCalls;
import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.rpc.SessionMetadata;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.GrpcServer;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/**
 * A real Logic Module in this JVM: SQLite metadata under {@code home}, listening on a free TCP
 * port; a backend counts as alive for {@link #BACKEND_TIMEOUT_MS} after a heartbeat. It owns its
 * metadata store, outgoing calls, server and {@code channel} (a channel to it), and closes them.
 */
public record TestLogicModule(
    MetadataStore store, GrpcBackendCalls deployer, GrpcServer server, ManagedChannel channel)
    implements AutoCloseable {
  /** How long a backend counts as alive after its last heartbeat. */
  public static final long BACKEND_TIMEOUT_MS = 1500;

  /** The cluster secret of test clusters (backends prove it to the Logic Module). */
  public static final ClusterSecret SECRET = ClusterSecret.of("test-cluster-secret-0123456789abcdef");

  /** Writes {@code dir}/cluster.secret holding {@link #SECRET}, readable by its owner only; returns its path. */
  public static Path secretFile(Path dir) throws java.io.IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve("cluster.secret");
    Files.writeString(file, "test-cluster-secret-0123456789abcdef\n");
    Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    return file;
  }

  /** Starts a Logic Module whose administrator is {@code admin}. */
  public static TestLogicModule start(Path home, String admin, String password) throws Exception {
    Files.createDirectories(home, PrivatePaths.DIRECTORY); // the Logic Module refuses a database directory others reach
    MetadataStore store = MetadataStore.open("jdbc:sqlite:" + home.resolve("metadata.db"), MetadataSync.NORMAL);
    GrpcBackendCalls deployer = new GrpcBackendCalls(TlsSettings.plaintext());
    try {
      LogicModuleService service = new LogicModuleService(store, deployer,
          new LogicModuleService.Settings(Duration.ofHours(1), BACKEND_TIMEOUT_MS, SECRET, 16L << 20),
          Clock.systemUTC(), SessionMetadata::currentPeer);
      service.bootstrapAdministrator(admin, password);
      GrpcServer server =
          LogicModuleServer.listening("127.0.0.1", 0, TlsSettings.plaintext(), service, 64 << 20).start();
      return new TestLogicModule(store, deployer, server,
          Channels.forAddress("127.0.0.1", server.port(), TlsSettings.plaintext()));
    } catch (Exception e) {
      deployer.close();
      store.close();
      throw e;
    }
  }

  /** Its TCP port. */
  public int port() {
    return server.port();
  }

  @Override
  public void close() {
    Channels.close(channel);
    server.stop();
    deployer.close();
    store.close();
  }
}
