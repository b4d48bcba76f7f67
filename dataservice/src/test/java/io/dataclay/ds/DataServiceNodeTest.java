package io.dataclay.ds;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.BackendStatus;
import io.dataclay.proto.EnvironmentProcess;
import io.dataclay.proto.ExecutionEnvironmentStatus;
import io.dataclay.proto.Language;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class DataServiceNodeTest {
  @TempDir Path tmp;
  @RegisterExtension final TestCluster cluster = TestCluster.forEachTest();

  private BackendInfo registered() {
    List<BackendInfo> all = cluster.adminLm().getBackends();
    assertEquals(1, all.size(), all.toString());
    return all.get(0);
  }

  @Test
  void the_backend_registers_its_bound_port_and_keeps_its_id_across_restarts() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    UUID id = cluster.node().identity().id();
    // run
    BackendInfo first = registered();
    cluster.restartDataService(Map.of());
    BackendInfo second = registered();
    // verify
    assertEquals(id.toString(), first.getId());
    assertEquals(id.toString(), Files.readString(cluster.backendDir().resolve("backend.id")).trim());
    assertEquals(id.toString(), second.getId());
    assertEquals(cluster.port(), second.getPort());
    assertEquals("test-backend", second.getName());
    assertEquals("127.0.0.1", second.getHost());
    assertEquals("memory", second.getStoreEngine());
    assertEquals(List.of(Language.PYTHON, Language.JAVA), second.getLanguagesList());
    assertTrue(second.getAlive());
  }

  @Test
  void a_backend_with_another_clusters_secret_fails_the_start_and_spawns_no_environment() throws Exception {
    // setup
    Path wrong = tmp.resolve("wrong.secret");
    java.nio.file.Files.writeString(wrong, "another-cluster-secret-0123456789abcdef");
    java.nio.file.Files.setPosixFilePermissions(wrong, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    // run
    NotAuthenticatedException e = assertThrows(NotAuthenticatedException.class,
        () -> cluster.startDataService(Map.of("DATACLAY_CLUSTER_SECRET_FILE", wrong.toString())));
    // verify
    assertTrue(e.getMessage().contains("does not match"), e.getMessage());
    assertEquals(0, cluster.spawned());
    assertTrue(cluster.adminLm().getBackends().isEmpty());
  }

  @Test
  void heartbeats_keep_the_backend_alive_beyond_the_logic_modules_timeout() throws Exception {
    // setup: the test Logic Module counts a backend dead 1.5 s after its last heartbeat
    cluster.startDataService(Map.of());
    long before = cluster.lmCalls("Heartbeat");
    // run
    Thread.sleep(2 * TestLogicModule.BACKEND_TIMEOUT_MS);
    // verify
    assertTrue(cluster.lmCalls("Heartbeat") - before >= 8, "heartbeats every 200 ms");
    assertTrue(registered().getAlive());
  }

  @Test
  void a_logic_module_that_forgot_the_session_gets_a_new_login_and_registration() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    long logins = cluster.lmCalls("NewBackendSession");
    long registrations = cluster.lmCalls("RegisterBackend");
    // run: the Data Service's own session ends behind its back
    cluster.dataServiceAdmin().client().closeSession();
    Thread.sleep(2 * TestLogicModule.BACKEND_TIMEOUT_MS);
    // verify: it logged in and registered again, and heartbeats keep it alive
    assertTrue(cluster.lmCalls("NewBackendSession") > logins);
    assertTrue(cluster.lmCalls("RegisterBackend") > registrations);
    assertTrue(registered().getAlive());
  }

  @Test
  void get_status_reports_identity_store_environments_their_processes_and_calls() throws Exception {
    // setup: nora's first call starts her process
    cluster.startDataService(Map.of());
    DataServiceClient user = cluster.client(cluster.session("nora"));
    UUID id = UUID.randomUUID();
    user.makePersistent(List.of(point(id, "1")), null);
    var call = cluster.call(user, id, "m", "()");
    EnvironmentPeer peer = cluster.attach();
    peer.answer(peer.nextExecute(), "done");
    call.get(10, java.util.concurrent.TimeUnit.SECONDS);
    // run
    BackendStatus status = cluster.client(cluster.adminToken()).getStatus(5000);
    PermissionDeniedException refused = assertThrows(PermissionDeniedException.class, () -> user.getStatus(5000));
    // verify
    assertEquals(cluster.node().identity().id().toString(), status.getBackend().getId());
    assertEquals(cluster.port(), status.getBackend().getPort());
    assertEquals("memory", status.getStore().getEngine());
    assertEquals(1, status.getStore().getObjects());
    ExecutionEnvironmentStatus python = status.getEnvironmentsList().stream()
        .filter(e -> e.getLanguage() == Language.PYTHON).findFirst().orElseThrow();
    assertTrue(python.getAlive());
    assertEquals(0, python.getPid(), "confined environments have no pid of their own");
    assertEquals("none", python.getConfinement());
    assertEquals(0, python.getRestarts());
    assertEquals(1, python.getProcessesCount());
    EnvironmentProcess process = python.getProcesses(0);
    assertEquals("nora", process.getAccount());
    assertEquals(peer.pid(), process.getPid());
    assertTrue(process.getAlive());
    assertEquals("test-peer", process.getConfinement());
    assertEquals(1, process.getCalls());
    assertEquals(0, process.getCallsInFlight());
    ExecutionEnvironmentStatus java = status.getEnvironmentsList().stream()
        .filter(e -> e.getLanguage() == Language.JAVA).findFirst().orElseThrow();
    assertEquals("in-process", java.getConfinement());
    assertEquals(1L, status.getCallsMap().get("MakePersistent"));
    assertEquals(1L, status.getCallsMap().get("GetStatus"));
    io.dataclay.proto.CallLatency persisted = status.getLatencyMap().get("MakePersistent");
    assertEquals(1, persisted.getCount());
    assertEquals(persisted.getBoundsSecondsCount() + 1, persisted.getCountsCount());
    assertEquals(1, persisted.getCountsList().stream().mapToLong(Long::longValue).sum());
    assertTrue(persisted.getSumSeconds() > 0);
    assertFalse(status.containsLatency("GetStatus"), "answered before it ended");
    assertTrue(refused.getMessage().contains("nora"), refused.getMessage());
  }
}
