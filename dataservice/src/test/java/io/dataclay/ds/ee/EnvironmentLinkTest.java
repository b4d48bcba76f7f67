package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.bytes;
import static io.dataclay.ds.TestObjects.delta;
import static io.dataclay.ds.TestObjects.point;
import static io.dataclay.ds.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.api.StoredObject;
import io.dataclay.client.DataServiceClient;
import io.dataclay.common.Language;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ConcurrentChangeException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.RemoteException;
import io.dataclay.proto.ErrorCode;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.EvictRequest;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.ExecutionKind;
import io.dataclay.proto.Field;
import io.dataclay.proto.ObjectDelta;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Calls through a process's link: what is sent, how results are stored, and what happens when the link ends. */
@Timeout(60)
class EnvironmentLinkTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();
  static String token;
  DataServiceClient user;
  UUID point;

  @BeforeAll
  static void logIn() throws Exception {
    token = cluster.session("jane");
  }

  @BeforeEach
  void startDataService() throws Exception {
    cluster.startDataService(Map.of());
    user = cluster.client(token);
    point = UUID.randomUUID();
    user.makePersistent(List.of(point(point, "0")), null);
  }

  private CompletableFuture<byte[]> callAsync(String method, String args) {
    return cluster.call(user, point, method, args);
  }

  private String storedX(UUID id) {
    return text(user.getObjects(List.of(id.toString())).get(0).getFields(0).getValue());
  }

  @Test
  void a_method_call_is_sent_with_its_callers_scope_and_no_token_and_its_result_returned() throws Exception {
    // setup: the account's first call starts its process
    CompletableFuture<byte[]> call = callAsync("area", "(2,)");
    EnvironmentPeer peer = cluster.attach();
    // run
    ExecuteRequest req = peer.nextExecute();
    peer.answer(req, "42");
    // verify
    assertEquals("42", new String(call.get(10, TimeUnit.SECONDS)));
    assertEquals(point.toString(), req.getObjectId());
    assertEquals("shapes.Point", req.getClassName());
    assertEquals(ExecutionKind.CALL_METHOD, req.getKind());
    assertEquals("area", req.getName());
    assertEquals("(2,)", text(req.getPayload()));
    assertEquals("jane", req.getCaller().getUsername());
    assertEquals("jane", req.getCaller().getDataset());
    assertTrue(req.getCaller().getDatasetsList().contains("jane"), req.getCaller().toString());
    assertFalse(req.toByteString().toStringUtf8().contains(token), "the caller's token crossed the link");
  }

  @Test
  void field_reads_and_writes_go_to_the_environment_with_their_kind() throws Exception {
    // setup
    CompletableFuture<byte[]> get = cluster.async(() -> user.getField(point.toString(), "x"));
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest read = peer.nextExecute();
    peer.load(read.getCallId(), point.toString());
    peer.answer(read, "0");
    // run
    CompletableFuture<byte[]> set = cluster.async(() -> {
      user.setField(point.toString(), "x", bytes("9").toByteArray());
      return null;
    });
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

  private static ExecuteResult vouching(ExecuteRequest req, String value, String field) {
    return ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes(value)).setStoredField(field).build();
  }

  // Nothing but non-execute frames (evictions) reaches the process for a while.
  private static void assertNoExecute(EnvironmentPeer peer) throws InterruptedException {
    for (var m = peer.poll(300); m != null; m = peer.poll(300)) {
      assertFalse(m.hasExecute(), m.toString());
    }
  }

  @Test
  void a_read_the_process_vouched_for_is_answered_from_the_store_and_sees_the_next_write() throws Exception {
    // setup: the process answers a read of x, vouching that the stored x is its answer
    CompletableFuture<byte[]> first = cluster.async(() -> user.getField(point.toString(), "x"));
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest read = peer.nextExecute();
    peer.load(read.getCallId(), point.toString());
    peer.answer(vouching(read, "0", "x"));
    assertEquals("0", new String(first.get(10, TimeUnit.SECONDS)));
    // run: read, write through the process, read
    byte[] again = user.getField(point.toString(), "x");
    CompletableFuture<byte[]> set = cluster.async(() -> {
      user.setField(point.toString(), "x", bytes("9").toByteArray());
      return null;
    });
    ExecuteRequest write = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(write.getCallId()).addDeltas(delta(point, "x", "9", 1)).build());
    set.get(10, TimeUnit.SECONDS);
    byte[] after = user.getField(point.toString(), "x");
    // verify: both reads were the stored value, and only the write reached the process
    assertEquals("0", new String(again));
    assertEquals("9", new String(after));
    assertEquals(ExecutionKind.SET_FIELD, write.getKind());
    assertNoExecute(peer);
  }

  @Test
  void a_process_vouching_on_a_write_a_change_a_failure_or_a_missing_field_gets_no_read_from_the_store()
      throws Exception {
    // setup: a process that vouches on every answer, also where no promise can hold
    CompletableFuture<byte[]> set = cluster.async(() -> {
      user.setField(point.toString(), "x", bytes("5").toByteArray());
      return null;
    });
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest write = peer.nextExecute();
    peer.load(write.getCallId(), point.toString());
    peer.answer(ExecuteResult.newBuilder().setCallId(write.getCallId()).setStoredField("x")
        .addDeltas(delta(point, "x", "5", 1)).build());
    set.get(10, TimeUnit.SECONDS);
    // run and verify: each read still reaches the process
    CompletableFuture<byte[]> changing = cluster.async(() -> user.getField(point.toString(), "x"));
    ExecuteRequest r1 = peer.nextExecute(); // a write vouched for nothing
    peer.answer(ExecuteResult.newBuilder().setCallId(r1.getCallId()).setResult(bytes("5")).setStoredField("x")
        .addDeltas(delta(point, "x", "6", 2)).build());
    assertEquals("5", new String(changing.get(10, TimeUnit.SECONDS)));
    CompletableFuture<byte[]> failing = cluster.async(() -> user.getField(point.toString(), "x"));
    ExecuteRequest r2 = peer.nextExecute(); // nor did a read that changed the object
    peer.answer(ExecuteResult.newBuilder().setCallId(r2.getCallId()).setStoredField("x").setError(ErrorInfo
        .newBuilder().setCode(ErrorCode.REMOTE_EXCEPTION).setRemoteType("builtins.ValueError").setMessage("no"))
        .build());
    assertThrows(Exception.class, () -> failing.get(10, TimeUnit.SECONDS));
    CompletableFuture<byte[]> elsewhere = cluster.async(() -> user.getField(point.toString(), "x"));
    ExecuteRequest r3 = peer.nextExecute(); // nor a failed one
    peer.answer(vouching(r3, "6", "secret"));
    assertEquals("6", new String(elsewhere.get(10, TimeUnit.SECONDS)));
    CompletableFuture<byte[]> last = cluster.async(() -> user.getField(point.toString(), "x"));
    ExecuteRequest r4 = peer.nextExecute(); // and a field the object does not have is read here
    peer.answer(r4, "6");
    assertEquals("6", new String(last.get(10, TimeUnit.SECONDS)));
    assertEquals("6", storedX(point));
  }

  @Test
  void new_objects_and_deltas_are_stored_and_registered_before_the_caller_is_answered() throws Exception {
    // setup
    UUID created = UUID.randomUUID();
    CompletableFuture<byte[]> call = callAsync("spawn", "()");
    EnvironmentPeer peer = cluster.attach();
    // run
    ExecuteRequest req = peer.nextExecute();
    peer.load(req.getCallId(), point.toString());
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("ok"))
        .addNewObjects(point(created, "child"))
        .addDeltas(delta(point, "x", "1", 1)).build());
    call.get(10, TimeUnit.SECONDS);
    // verify: the moment the call returned, both changes were stored and the new object known
    assertEquals("1", storedX(point));
    assertEquals("child", storedX(created));
    assertEquals("jane", user.getObjects(List.of(created.toString())).get(0).getHeader().getDataset());
    StoredObject info = cluster.lmAs(token).getObjectInfo(created.toString());
    assertEquals("jane", info.dataset());
    assertEquals(cluster.node().identity().id().toString(), info.backendId().toString());
  }

  @Test
  void a_delta_with_a_sequence_not_newer_than_the_last_applied_is_ignored() throws Exception {
    // setup
    CompletableFuture<byte[]> first = callAsync("set", "5");
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest r1 = peer.nextExecute();
    peer.load(r1.getCallId(), point.toString());
    peer.answer(ExecuteResult.newBuilder().setCallId(r1.getCallId()).addDeltas(delta(point, "x", "five", 5)).build());
    first.get(10, TimeUnit.SECONDS);
    // run: an older and an equal sequence arrive later (the process still holds the object it changed)
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
  void a_delta_of_an_object_the_process_never_loaded_is_refused_as_a_concurrent_change() throws Exception {
    // setup: the process changes an object without having read its stored state on this link
    CompletableFuture<byte[]> call = callAsync("blind", "()");
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest req = peer.nextExecute();
    // run
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("never"))
        .addDeltas(delta(point, "x", "blind", 1)).build());
    // verify: refused, nothing stored
    Exception e = assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ConcurrentChangeException, String.valueOf(e.getCause()));
    assertEquals("0", storedX(point));
  }

  @Test
  void when_storing_fails_the_loaded_objects_it_touched_are_evicted_and_the_call_fails() throws Exception {
    // setup
    UUID missing = UUID.randomUUID();
    UUID created = UUID.randomUUID();
    CompletableFuture<byte[]> call = callAsync("bad", "()");
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest req = peer.nextExecute();
    peer.load(req.getCallId(), point.toString(), missing.toString());
    // run: a delta of an object this backend does not hold
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("never"))
        .addNewObjects(point(created, "c"))
        .addDeltas(delta(point, "x", "7", 1))
        .addDeltas(delta(missing, "x", "1", 1)).build());
    // verify: the caller gets the storing error, the process an eviction of what it loaded and touched
    Exception e = assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ObjectDoesNotExistException, String.valueOf(e.getCause()));
    EvictRequest evict = peer.nextEvict();
    assertTrue(Set.copyOf(evict.getIdsList()).containsAll(Set.of(point.toString(), missing.toString())),
        evict.toString());
    assertTrue(cluster.store().header(created).isEmpty(), "the unregistered new object was removed");
  }

  @Test
  void a_refused_calls_new_objects_are_evicted_too() throws Exception {
    // setup
    UUID missing = UUID.randomUUID();
    UUID created = UUID.randomUUID();
    CompletableFuture<byte[]> call = callAsync("bad", "()");
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest req = peer.nextExecute();
    peer.load(req.getCallId(), missing.toString());
    // run
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).addNewObjects(point(created, "c"))
        .addDeltas(delta(missing, "x", "1", 1)).build());
    // verify
    assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS));
    assertTrue(peer.nextEvict().getIdsList().contains(created.toString()));
  }

  @Test
  void a_remote_exception_reaches_the_caller_with_its_type() throws Exception {
    // setup
    CompletableFuture<byte[]> call = callAsync("explode", "()");
    EnvironmentPeer peer = cluster.attach();
    // run
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
  void calls_in_flight_fail_when_the_process_breaks_its_link_and_a_new_process_serves() throws Exception {
    // setup
    CompletableFuture<byte[]> inFlight = callAsync("slow", "()");
    EnvironmentPeer peer = cluster.attach();
    peer.nextExecute();
    // run
    peer.breakConnection();
    // verify: the call fails as unavailable; a new process is started and serves
    Exception e = assertThrows(Exception.class, () -> inFlight.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    EnvironmentPeer second = cluster.attach();
    CompletableFuture<byte[]> again = callAsync("fast", "()");
    second.answer(second.nextExecute(), "back");
    assertEquals("back", new String(again.get(10, TimeUnit.SECONDS)));
    assertNotEquals(peer.pid(), second.pid());
    EnvironmentStatus.Process status = cluster.process(Language.PYTHON, "jane");
    assertEquals(1, status.restarts());
    assertEquals(second.pid(), status.pid());
    assertTrue(status.alive());
    assertFalse(peer.alive());
  }

  @Test
  void a_call_waits_for_a_starting_process() throws Exception {
    // setup: the process is started, but has not said hello yet
    CompletableFuture<byte[]> early = callAsync("early", "()");
    EnvironmentPeer peer = cluster.nextPeer();
    Thread.sleep(200);
    assertFalse(early.isDone());
    // run
    peer.hello();
    peer.answer(peer.nextExecute(), "served");
    // verify
    assertEquals("served", new String(early.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void a_call_fails_unavailable_when_no_process_comes_up_in_time() throws Exception {
    // setup: a Data Service waiting 300 ms, whose processes never say hello
    cluster.restartDataService(Map.of("DATACLAY_EE_WAIT_MS", "300"));
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

  @Test
  void a_32_mib_argument_and_a_32_mib_delta_cross_the_link_intact() throws Exception {
    // setup
    byte[] argument = new byte[32 << 20];
    byte[] value = new byte[32 << 20];
    Random random = new Random(7);
    random.nextBytes(argument);
    random.nextBytes(value);
    // run: a 32 MiB value goes to the process, and a 32 MiB delta comes back
    CompletableFuture<Object> set = cluster.async(() -> {
      user.setField(point.toString(), "x", argument);
      return null;
    });
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest req = peer.nextExecute();
    peer.load(req.getCallId(), point.toString());
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId())
        .addDeltas(ObjectDelta.newBuilder().setId(point.toString()).setSequence(1)
            .addChangedFields(Field.newBuilder().setName("x").setValue(UnsafeByteOperations.unsafeWrap(value))))
        .build());
    set.get(30, TimeUnit.SECONDS);
    // verify: both arrived byte for byte, and the link still serves small calls
    assertArrayEquals(argument, req.getPayload().toByteArray());
    assertArrayEquals(value, cluster.store().get(point).orElseThrow().fields().get("x").value());
    CompletableFuture<byte[]> small = callAsync("small", "()");
    peer.answer(peer.nextExecute(), "ok");
    assertEquals("ok", new String(small.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void sixteen_concurrent_calls_reach_the_process_and_each_gets_its_own_answer_in_any_order() throws Exception {
    // setup: as many calls as one account may run at once (DATACLAY_EE_THREADS' default)
    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      calls.add(callAsync("echo", Integer.toString(i)));
    }
    EnvironmentPeer peer = cluster.attach();
    List<ExecuteRequest> received = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      received.add(peer.nextExecute());
    }
    // run: answers go back in reverse arrival order, each echoing its request's argument
    Collections.reverse(received);
    for (ExecuteRequest r : received) {
      peer.answer(ExecuteResult.newBuilder().setCallId(r.getCallId()).setResult(r.getPayload()).build());
    }
    // verify
    for (int i = 0; i < 16; i++) {
      assertEquals(Integer.toString(i), new String(calls.get(i).get(10, TimeUnit.SECONDS)));
    }
    assertEquals(16, received.stream().map(ExecuteRequest::getCallId).distinct().count());
    assertNull(peer.poll(100));
  }
}
