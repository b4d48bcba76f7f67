package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.bytes;
import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.Field;
import io.dataclay.proto.ObjectDelta;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The wire of the environment link: malformed frames end it, large frames cross it whole. */
@Timeout(60)
class LinkFramingTest {
  @TempDir static Path tmp;
  static TestCluster cluster;
  static String token;
  static final ExecutorService pool = Executors.newFixedThreadPool(20);
  DataServiceClient user;
  UUID point;

  @BeforeAll
  static void startLogicModule() throws Exception {
    cluster = TestCluster.withLogicModule(tmp);
    token = cluster.session("lena");
  }

  @AfterAll
  static void stopLogicModule() throws Exception {
    pool.shutdownNow();
    cluster.close();
  }

  @BeforeEach
  void startDataService() throws Exception {
    cluster.startDataService(Map.of());
    user = cluster.client(token);
    point = UUID.randomUUID();
    user.makePersistent(List.of(point(point, "0")), null);
  }

  @AfterEach
  void stopDataService() throws Exception {
    cluster.stopDataService();
  }

  private CompletableFuture<byte[]> callAsync(String method) {
    return CompletableFuture.supplyAsync(() -> user.callMethod(point.toString(), method, new byte[0]));
  }

  /** Sends {@code frame} in the middle of a call and checks the link ends and a restarted environment serves. */
  private void assertFrameEndsLinkAndRestartedEnvironmentServes(byte[] frame) throws Exception {
    // setup
    String firstSecret = cluster.secret(null);
    EnvironmentPeer peer = cluster.attachPeer();
    CompletableFuture<byte[]> inFlight = callAsync("slow");
    peer.nextExecute();
    // run
    peer.sendRaw(frame);
    // verify: the link ended, the call failed as unavailable, the process was replaced and the new one serves
    assertTrue(peer.ended().length() > 0);
    Exception e = assertThrows(Exception.class, () -> inFlight.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    EnvironmentPeer second = cluster.attachPeer(firstSecret);
    CompletableFuture<byte[]> again = callAsync("fast");
    ExecuteRequest req = second.nextExecute();
    second.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("served")).build());
    assertEquals("served", new String(again.get(10, TimeUnit.SECONDS)));
    assertEquals(1, cluster.node().report().environments().get(0).restarts());
  }

  @Test
  void a_frame_announcing_more_than_2_gib_closes_the_link_and_the_restarted_environment_serves() throws Exception {
    assertFrameEndsLinkAndRestartedEnvironmentServes(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2});
  }

  @Test
  void a_frame_of_garbage_bytes_closes_the_link_and_the_restarted_environment_serves() throws Exception {
    // a tag with the invalid wire type 7, then bytes that are no message either
    assertFrameEndsLinkAndRestartedEnvironmentServes(new byte[] {0, 0, 0, 6, 0x0f, (byte) 0xff, (byte) 0xff, 1, 2, 3});
  }

  @Test
  void a_32_mib_argument_and_a_32_mib_delta_cross_the_link_intact() throws Exception {
    // setup
    EnvironmentPeer peer = cluster.attachPeer();
    byte[] argument = new byte[32 << 20];
    byte[] value = new byte[32 << 20];
    Random random = new Random(7);
    random.nextBytes(argument);
    random.nextBytes(value);
    // run: a 32 MiB value goes to the environment, and a 32 MiB delta comes back
    CompletableFuture<Void> set = CompletableFuture.runAsync(() -> user.setField(point.toString(), "x", argument));
    ExecuteRequest req = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId())
        .addDeltas(ObjectDelta.newBuilder().setId(point.toString()).setSequence(1)
            .addChangedFields(Field.newBuilder().setName("x").setValue(UnsafeByteOperations.unsafeWrap(value))))
        .build());
    set.get(30, TimeUnit.SECONDS);
    // verify: both arrived byte for byte, and the link still serves small calls
    assertArrayEquals(argument, req.getPayload().toByteArray());
    assertArrayEquals(value, cluster.store().get(point).orElseThrow().fields().get("x").value());
    CompletableFuture<byte[]> small = callAsync("small");
    ExecuteRequest next = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(next.getCallId()).setResult(bytes("ok")).build());
    assertEquals("ok", new String(small.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void twenty_concurrent_calls_reach_the_environment_and_each_gets_its_own_answer_in_any_order() throws Exception {
    // setup: more calls in flight than are ever written on a transport thread
    EnvironmentPeer peer = cluster.attachPeer();
    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      String arg = Integer.toString(i);
      calls.add(CompletableFuture.supplyAsync(
          () -> user.callMethod(point.toString(), "echo", bytes(arg).toByteArray()), pool));
    }
    List<ExecuteRequest> received = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      received.add(peer.nextExecute());
    }
    // run: answers go back in reverse arrival order, each echoing its request's argument
    Collections.reverse(received);
    for (ExecuteRequest r : received) {
      peer.answer(ExecuteResult.newBuilder().setCallId(r.getCallId()).setResult(r.getPayload()).build());
    }
    // verify
    for (int i = 0; i < 20; i++) {
      assertEquals(Integer.toString(i), new String(calls.get(i).get(10, TimeUnit.SECONDS)));
    }
    assertEquals(20, received.stream().map(ExecuteRequest::getCallId).distinct().count());
  }
}
