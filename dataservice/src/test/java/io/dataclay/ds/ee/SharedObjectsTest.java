package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.delta;
import static io.dataclay.ds.TestObjects.point;
import static io.dataclay.ds.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.exceptions.ConcurrentChangeException;
import io.dataclay.proto.CallMethodRequest;
import io.dataclay.proto.CallMethodResponse;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.LoadReply;
import io.dataclay.proto.RelayReply;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An object two accounts share (alice's, bob has a read-write contract): each account's process
 * holds its own copy, so their calls on it take turns, and a change computed from a copy another
 * writer changed meanwhile is refused, never stored over the other.
 */
@Timeout(60)
class SharedObjectsTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();
  static String aliceToken;
  static String bobToken;
  DataServiceClient alice;
  DataServiceClient bob;
  UUID shared;
  UUID bobs;

  @BeforeAll
  static void logIn() throws Exception {
    aliceToken = cluster.session("alice");
    cluster.grant("alice", "bob");
    bobToken = cluster.session("bob"); // opened after the contract: it may use alice's dataset
  }

  @BeforeEach
  void startDataService() throws Exception {
    cluster.startDataService(Map.of());
    alice = cluster.client(aliceToken);
    bob = cluster.client(bobToken);
    shared = UUID.randomUUID();
    bobs = UUID.randomUUID();
    alice.makePersistent(List.of(point(shared, "0")), null);
    bob.makePersistent(List.of(point(bobs, "0")), null);
  }

  private static ExecuteResult change(ExecuteRequest req, UUID id, String x, long sequence) {
    return ExecuteResult.newBuilder().setCallId(req.getCallId()).addDeltas(delta(id, "x", x, sequence)).build();
  }

  @Test
  void a_change_from_a_copy_another_account_changed_meanwhile_is_refused_and_the_first_change_stays() throws Exception {
    // setup: alice's call on the object and bob's call on his own object both load the shared one
    CompletableFuture<byte[]> aliceCall = cluster.call(alice, shared, "set", "()");
    EnvironmentPeer alicePeer = cluster.attach();
    ExecuteRequest aliceReq = alicePeer.nextExecute();
    alicePeer.load(aliceReq.getCallId(), shared.toString());
    CompletableFuture<byte[]> bobCall = cluster.call(bob, bobs, "set_through_reference", "()");
    EnvironmentPeer bobPeer = cluster.attach();
    ExecuteRequest bobReq = bobPeer.nextExecute();
    LoadReply bobsCopy = bobPeer.load(bobReq.getCallId(), shared.toString());
    assertEquals("0", text(bobsCopy.getObjects(0).getFields(0).getValue()));
    // run: alice's change is stored first
    alicePeer.answer(change(aliceReq, shared, "alice", 1));
    aliceCall.get(10, TimeUnit.SECONDS);
    // verify: bob's process is told to drop its copy (alice's, the writer's, is not)
    assertEquals(List.of(shared.toString()), bobPeer.nextEvict().getIdsList());
    assertNull(alicePeer.poll(200));
    // run: bob's change, computed from the old copy, arrives after
    bobPeer.answer(change(bobReq, shared, "bob", 1));
    // verify: refused, alice's change kept
    Exception e = assertThrows(Exception.class, () -> bobCall.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ConcurrentChangeException, String.valueOf(e.getCause()));
    assertEquals("alice", cluster.storedX(shared));
    // run: bob calls again, reloads the stored state and changes it
    CompletableFuture<byte[]> retry = cluster.call(bob, bobs, "set_through_reference", "()");
    ExecuteRequest retryReq = bobPeer.nextExecute();
    LoadReply fresh = bobPeer.load(retryReq.getCallId(), shared.toString());
    bobPeer.answer(change(retryReq, shared, "bob", 2));
    retry.get(10, TimeUnit.SECONDS);
    // verify
    assertEquals("alice", text(fresh.getObjects(0).getFields(0).getValue()));
    assertEquals("bob", cluster.storedX(shared));
    assertEquals(List.of(shared.toString()), alicePeer.nextEvict().getIdsList());
  }

  @Test
  void calls_of_two_accounts_on_one_object_take_turns() throws Exception {
    // setup: alice's call on the shared object runs
    CompletableFuture<byte[]> aliceCall = cluster.call(alice, shared, "slow", "()");
    EnvironmentPeer alicePeer = cluster.attach();
    ExecuteRequest aliceReq = alicePeer.nextExecute();
    // run: bob calls the same object; his process starts, but gets no call yet
    CompletableFuture<byte[]> bobCall = cluster.call(bob, shared, "next", "()");
    EnvironmentPeer bobPeer = cluster.attach();
    assertNull(bobPeer.poll(300), "bob's call was sent while alice's ran on the same object");
    assertFalse(bobCall.isDone());
    alicePeer.answer(aliceReq, "alice's");
    // verify: bob's call is sent once alice's was answered
    ExecuteRequest bobReq = bobPeer.nextExecute();
    assertEquals(shared.toString(), bobReq.getObjectId());
    assertEquals("bob", bobReq.getCaller().getUsername());
    bobPeer.answer(bobReq, "bob's");
    assertEquals("alice's", new String(aliceCall.get(10, TimeUnit.SECONDS)));
    assertEquals("bob's", new String(bobCall.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void a_call_model_code_makes_does_not_wait_for_its_objects_turn() throws Exception {
    // setup: alice's call holds the shared object's turn; bob's call runs on his own object
    CompletableFuture<byte[]> aliceCall = cluster.call(alice, shared, "slow", "()");
    EnvironmentPeer alicePeer = cluster.attach();
    ExecuteRequest aliceReq = alicePeer.nextExecute();
    CompletableFuture<byte[]> bobCall = cluster.call(bob, bobs, "outer", "()");
    EnvironmentPeer bobPeer = cluster.attach();
    ExecuteRequest bobReq = bobPeer.nextExecute();
    String backend = cluster.node().identity().id().toString();
    // run: bob's model code calls a method of the shared object (relayed, so nested)
    CompletableFuture<RelayReply> relayed = cluster.async(() -> {
      try {
        return bobPeer.relay(bobReq.getCallId(), backend, "/dataclay.v1.DataService/CallMethod",
            CallMethodRequest.newBuilder().setObjectId(shared.toString()).setMethod("peek").build());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    // verify: it reaches bob's process while alice's call still runs (a wait here could be a cycle)
    ExecuteRequest nested = bobPeer.nextExecute();
    assertEquals(shared.toString(), nested.getObjectId());
    assertFalse(aliceCall.isDone());
    bobPeer.answer(nested, "peeked");
    RelayReply reply = relayed.get(10, TimeUnit.SECONDS);
    assertEquals("peeked", text(CallMethodResponse.parseFrom(reply.getResponse()).getResult()));
    bobPeer.answer(bobReq, "outer");
    alicePeer.answer(aliceReq, "slow");
    assertEquals("outer", new String(bobCall.get(10, TimeUnit.SECONDS)));
    assertEquals("slow", new String(aliceCall.get(10, TimeUnit.SECONDS)));
  }
}
