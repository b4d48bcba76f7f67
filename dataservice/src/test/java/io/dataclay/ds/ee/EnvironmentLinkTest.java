package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.bytes;
import static io.dataclay.ds.TestObjects.delta;
import static io.dataclay.ds.TestObjects.point;
import static io.dataclay.ds.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.service.EnvironmentStatus;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.RemoteException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.ErrorCode;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.ExecutionKind;
import io.dataclay.proto.ObjectInfo;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class EnvironmentLinkTest {
  @TempDir static Path tmp;
  static TestCluster cluster;
  static String token;
  DataServiceClient user;
  UUID point;

  @BeforeAll
  static void startLogicModule() throws Exception {
    cluster = TestCluster.withLogicModule(tmp);
    token = cluster.session("jane");
  }

  @AfterAll
  static void stopLogicModule() throws Exception {
    cluster.close();
  }

  @BeforeEach
  void startDataService() throws Exception {
    cluster.startDataService(java.util.Map.of());
    user = cluster.client(token);
    point = UUID.randomUUID();
    user.makePersistent(List.of(point(point, "0")), null);
  }

  @AfterEach
  void stopDataService() throws Exception {
    cluster.stopDataService();
  }

  private CompletableFuture<byte[]> callAsync(String method, String args) {
    return CompletableFuture.supplyAsync(() -> user.callMethod(point.toString(), method, bytes(args).toByteArray()));
  }

  private String storedX(UUID id) {
    return text(user.getObjects(List.of(id.toString())).get(0).getFields(0).getValue());
  }

  @Test
  void a_method_call_is_dispatched_to_the_environment_and_its_result_returned() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    // run
    CompletableFuture<byte[]> call = callAsync("area", "(2,)");
    ExecuteRequest req = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("42")).build());
    // verify
    assertEquals("42", new String(call.get(10, TimeUnit.SECONDS)));
    assertEquals(point.toString(), req.getObjectId());
    assertEquals("shapes.Point", req.getClassName());
    assertEquals(ExecutionKind.CALL_METHOD, req.getKind());
    assertEquals("area", req.getName());
    assertEquals("(2,)", text(req.getPayload()));
    assertEquals("jane", req.getSession().getUsername());
    assertEquals("jane", req.getSession().getDataset());
    assertFalse(req.getSession().getToken().isEmpty());
  }

  @Test
  void field_reads_and_writes_go_to_the_environment_with_their_kind() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    // run
    CompletableFuture<byte[]> get = CompletableFuture.supplyAsync(() -> user.getField(point.toString(), "x"));
    ExecuteRequest read = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(read.getCallId()).setResult(bytes("0")).build());
    CompletableFuture<Void> set = CompletableFuture.runAsync(
        () -> user.setField(point.toString(), "x", bytes("9").toByteArray()));
    ExecuteRequest write = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(write.getCallId()).addDeltas(delta(point, "x", "9", 1)).build());
    // verify
    assertEquals("0", new String(get.get(10, TimeUnit.SECONDS)));
    set.get(10, TimeUnit.SECONDS);
    assertEquals(ExecutionKind.GET_FIELD, read.getKind());
    assertEquals("x", read.getName());
    assertEquals(ExecutionKind.SET_FIELD, write.getKind());
    assertEquals("9", text(write.getPayload()));
    assertEquals("9", storedX(point));
  }

  @Test
  void new_objects_and_deltas_are_stored_and_registered_before_the_caller_is_answered() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    UUID created = UUID.randomUUID();
    // run
    CompletableFuture<byte[]> call = callAsync("spawn", "()");
    ExecuteRequest req = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("ok"))
        .addNewObjects(point(created, "child"))
        .addDeltas(delta(point, "x", "1", 1)).build());
    call.get(10, TimeUnit.SECONDS);
    // verify: the moment the call returned, both changes were stored and the new object known
    assertEquals("1", storedX(point));
    assertEquals("child", storedX(created));
    assertEquals("jane", user.getObjects(List.of(created.toString())).get(0).getHeader().getDataset());
    ObjectInfo info = cluster.lmAs(token).getObjectInfo(created.toString());
    assertEquals("jane", info.getDataset());
    assertEquals(cluster.node().identity().id().toString(), info.getMasterBackendId());
  }

  @Test
  void a_delta_with_a_sequence_not_newer_than_the_last_applied_is_ignored() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    CompletableFuture<byte[]> first = callAsync("set", "5");
    ExecuteRequest r1 = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(r1.getCallId()).addDeltas(delta(point, "x", "five", 5)).build());
    first.get(10, TimeUnit.SECONDS);
    // run: an older and an equal sequence arrive later
    for (long stale : new long[] {3, 5}) {
      CompletableFuture<byte[]> late = callAsync("set", "stale");
      ExecuteRequest r = peer.nextExecute();
      peer.answer(ExecuteResult.newBuilder().setCallId(r.getCallId())
          .addDeltas(delta(point, "x", "stale-" + stale, stale)).build());
      late.get(10, TimeUnit.SECONDS);
    }
    // verify
    assertEquals("five", storedX(point));
  }

  @Test
  void when_storing_fails_the_touched_objects_are_evicted_and_the_call_fails() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    UUID missing = UUID.randomUUID();
    UUID created = UUID.randomUUID();
    // run: a delta of an object this backend does not hold
    CompletableFuture<byte[]> call = callAsync("bad", "()");
    ExecuteRequest req = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("never"))
        .addNewObjects(point(created, "c"))
        .addDeltas(delta(point, "x", "7", 1))
        .addDeltas(delta(missing, "x", "1", 1)).build());
    // verify: the caller gets the storing error, the environment an eviction of every touched object
    Exception e = assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ObjectDoesNotExistException, String.valueOf(e.getCause()));
    DataServiceMessage evict = peer.next();
    assertTrue(evict.hasEvict(), evict.toString());
    assertEquals(Set.of(created.toString(), point.toString(), missing.toString()),
        Set.copyOf(evict.getEvict().getIdsList()));
    assertTrue(cluster.store().header(created).isEmpty(), "the unregistered new object was removed");
  }

  @Test
  void a_remote_exception_reaches_the_caller_with_its_type() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    // run
    CompletableFuture<byte[]> call = callAsync("explode", "()");
    ExecuteRequest req = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setError(ErrorInfo.newBuilder()
        .setCode(ErrorCode.REMOTE_EXCEPTION).setRemoteType("builtins.ValueError").setMessage("bad value")
        .setRemoteArgs(bytes("args"))).build());
    // verify
    Exception e = assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS));
    RemoteException remote = (RemoteException) e.getCause();
    assertEquals("builtins.ValueError", remote.remoteType());
    assertEquals("bad value", remote.remoteMessage());
    assertArrayEquals(bytes("args").toByteArray(), remote.remoteArgs());
  }

  @Test
  void calls_in_flight_fail_when_the_connection_breaks_and_the_environment_is_restarted() throws Exception {
    // setup
    String firstSecret = cluster.secret(null);
    EnvironmentPeer peer = cluster.attachPeer();
    CompletableFuture<byte[]> inFlight = callAsync("slow", "()");
    peer.nextExecute();
    // run
    peer.breakConnection();
    // verify: the call fails as unavailable; a new process (new secret) is spawned and serves
    Exception e = assertThrows(Exception.class, () -> inFlight.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    EnvironmentPeer second = cluster.attachPeer(firstSecret);
    CompletableFuture<byte[]> again = callAsync("fast", "()");
    ExecuteRequest req = second.nextExecute();
    second.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("back")).build());
    assertEquals("back", new String(again.get(10, TimeUnit.SECONDS)));
    EnvironmentStatus status = cluster.node().report().environments().get(0);
    assertEquals(1, status.restarts());
    assertTrue(status.alive());
  }

  @Test
  void an_environment_that_half_closes_its_connection_is_given_time_to_exit_on_its_own() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    CompletableFuture<byte[]> inFlight = callAsync("slow", "()");
    peer.nextExecute();
    // run: the environment half-closes, as it does before exiting with code 3
    peer.finish();
    // verify: the Data Service closes its side, the call fails as unavailable, the process is not killed at once
    assertEquals("closed", peer.ended());
    Exception e = assertThrows(Exception.class, () -> inFlight.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    Thread.sleep(1000);
    EnvironmentStatus status = cluster.node().report().environments().get(0);
    assertFalse(status.alive());
    assertTrue(status.pid() > 0, "the process was stopped before its grace period");
    assertEquals(0, status.restarts());
  }

  @Test
  void a_call_waits_for_a_starting_environment() throws Exception {
    // setup: no environment attached yet
    CompletableFuture<byte[]> early = callAsync("early", "()");
    Thread.sleep(200);
    assertFalse(early.isDone());
    // run
    EnvironmentPeer peer = cluster.attachPeer();
    ExecuteRequest req = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("served")).build());
    // verify
    assertEquals("served", new String(early.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void a_call_fails_unavailable_when_no_environment_comes_up_in_time() throws Exception {
    // setup: a Data Service whose environment never attaches, waiting 300 ms
    cluster.restartDataService(java.util.Map.of("DATACLAY_EE_WAIT_MS", "300"));
    DataServiceClient again = cluster.client(token);
    UUID fresh = UUID.randomUUID();
    again.makePersistent(List.of(point(fresh, "0")), null);
    // run
    long t0 = System.nanoTime();
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> again.callMethod(fresh.toString(), "m", new byte[0]));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    // verify
    assertTrue(ms >= 290 && ms < 3000, "waited " + ms + " ms");
    assertTrue(e.getMessage().contains("300 ms"), e.getMessage());
  }
}
