package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestObjects;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class AttachRulesTest {
  @TempDir static Path tmp;
  static TestCluster cluster;

  @BeforeAll
  static void startLogicModule() throws Exception {
    cluster = TestCluster.withLogicModule(tmp);
  }

  @AfterAll
  static void stopLogicModule() throws Exception {
    cluster.close();
  }

  @AfterEach
  void stopDataService() throws Exception {
    cluster.stopDataService();
  }

  @Test
  void a_hello_with_a_wrong_or_missing_secret_or_no_pid_closes_that_connection_only() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    String secret = cluster.secret(null);
    Path socket = cluster.socket();
    // run
    EnvironmentPeer wrong = cluster.closing(EnvironmentPeer.attach(socket, "not-the-secret"));
    String wrongEnded = wrong.ended();
    EnvironmentPeer none = cluster.closing(EnvironmentPeer.attach(socket, ""));
    String noneEnded = none.ended();
    EnvironmentPeer noPid = cluster.closing(EnvironmentPeer.connect(socket));
    noPid.hello(secret, 0);
    String noPidEnded = noPid.ended();
    // verify: each was closed, none counted as attached, and the process still attaches afterwards
    assertEquals("closed", wrongEnded);
    assertEquals("closed", noneEnded);
    assertEquals("closed", noPidEnded);
    assertFalse(cluster.pythonAlive());
    cluster.attachPeer();
    assertEquals(0, cluster.node().report().environments().get(0).restarts());
  }

  @Test
  void a_second_connection_is_closed_at_once_while_one_is_attached() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    EnvironmentPeer first = cluster.attachPeer();
    // run: the second connection says nothing, and is closed anyway
    EnvironmentPeer second = cluster.closing(EnvironmentPeer.connect(cluster.socket()));
    // verify: refused, and the first still serves
    assertEquals("closed", second.ended());
    DataServiceClient user = cluster.client(cluster.session("kim"));
    UUID id = UUID.randomUUID();
    user.makePersistent(List.of(point(id, "0")), null);
    CompletableFuture<byte[]> call = CompletableFuture.supplyAsync(() -> user.callMethod(id.toString(), "m", new byte[0]));
    ExecuteRequest req = first.nextExecute();
    first.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(TestObjects.bytes("1")).build());
    assertEquals("1", new String(call.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void a_connection_whose_first_frame_is_not_hello_is_closed_and_the_process_can_still_attach() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    cluster.secret(null);
    EnvironmentPeer rude = cluster.closing(EnvironmentPeer.connect(cluster.socket()));
    // run
    rude.send(EnvironmentMessage.newBuilder().setResult(ExecuteResult.newBuilder().setCallId(1)).build());
    // verify: only that connection was dropped; it proved no process, so none was stopped
    assertEquals("closed", rude.ended());
    assertFalse(cluster.pythonAlive());
    cluster.attachPeer();
    assertEquals(0, cluster.node().report().environments().get(0).restarts());
  }

  @Test
  void a_silent_connection_is_closed_after_the_wait_and_frees_the_slot() throws Exception {
    // setup: connections get 300 ms to say hello
    cluster.startDataService(Map.of("DATACLAY_EE_WAIT_MS", "300"));
    // run
    long t0 = System.nanoTime();
    EnvironmentPeer silent = cluster.closing(EnvironmentPeer.connect(cluster.socket()));
    String ended = silent.ended();
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    // verify
    assertEquals("closed", ended);
    assertTrue(ms >= 290 && ms < 5000, "closed after " + ms + " ms");
    cluster.attachPeer();
    assertTrue(cluster.pythonAlive());
  }

  @Test
  void the_socket_is_in_a_private_directory_that_is_removed_when_the_data_service_stops() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    Path socket = cluster.socket();
    // run
    Set<PosixFilePermission> mode = Files.getPosixFilePermissions(socket.getParent());
    boolean existedWhileRunning = Files.exists(socket);
    cluster.stopDataService();
    // verify
    assertEquals(PosixFilePermissions.fromString("rwx------"), mode);
    assertTrue(existedWhileRunning);
    assertTrue(socket.toString().length() <= 107, socket.toString());
    assertFalse(Files.exists(socket.getParent()), "the socket directory outlived its Data Service");
  }

  @Test
  void objects_of_a_language_without_environment_are_unavailable() throws Exception {
    // setup: a backend started without a Python environment (DATACLAY_PYTHON=none)
    cluster.startDataService(Map.of("DATACLAY_PYTHON", "none"));
    DataServiceClient user = cluster.client(cluster.session("max"));
    UUID id = UUID.randomUUID();
    user.makePersistent(List.of(point(id, "0")), null);
    // run
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> user.callMethod(id.toString(), "m", new byte[0]));
    // verify
    assertTrue(e.getMessage().contains("PYTHON"), e.getMessage());
  }

}
