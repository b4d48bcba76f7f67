package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.delta;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster.OwnedPoint;
import io.dataclay.ds.TestCluster;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a process must do to be served, and what it cannot do to others: its first frame is a
 * hello, within DATACLAY_EE_WAIT_MS; a bad frame ends its own link only; an answer for a call not
 * in flight changes nothing.
 */
@Timeout(60)
class AttachRulesTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();

  @Test
  void a_process_whose_first_frame_is_not_a_hello_is_stopped_and_a_new_one_serves_the_waiting_call() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    OwnedPoint kim = cluster.ownedPoint("kim");
    CompletableFuture<byte[]> call = cluster.call(kim, "m");
    EnvironmentPeer rude = cluster.nextPeer();
    // run
    rude.send(EnvironmentMessage.newBuilder().setResult(ExecuteResult.newBuilder().setCallId(1)).build());
    // verify: that link ended and its process was stopped; the call waited for the next process
    assertEquals("closed", rude.ended());
    EnvironmentPeer next = cluster.attach();
    next.answer(next.nextExecute(), "1");
    assertEquals("1", new String(call.get(10, TimeUnit.SECONDS)));
    assertFalse(rude.alive());
    assertEquals(1, cluster.process(Language.PYTHON, "kim").restarts());
  }

  @Test
  void a_process_that_sends_no_hello_within_the_wait_is_stopped_and_restarted() throws Exception {
    // setup: processes get 500 ms to say hello
    cluster.startDataService(Map.of("DATACLAY_EE_WAIT_MS", "500"));
    OwnedPoint lou = cluster.ownedPoint("lou");
    CompletableFuture<byte[]> call = cluster.call(lou, "m");
    // run
    long t0 = System.nanoTime();
    EnvironmentPeer silent = cluster.nextPeer();
    String ended = silent.ended();
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    // verify: ended after the wait, the call failed naming why, and a new process is started
    assertEquals("closed", ended);
    assertTrue(ms >= 400 && ms < 5000, "closed after " + ms + " ms");
    Exception e = assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    EnvironmentPeer next = cluster.attach();
    assertNotEquals(silent.pid(), next.pid());
    CompletableFuture<byte[]> again = cluster.call(lou, "m");
    next.answer(next.nextExecute(), "2");
    assertEquals("2", new String(again.get(10, TimeUnit.SECONDS)));
    assertFalse(silent.alive());
  }

  @Test
  void a_malformed_frame_ends_only_that_processs_link() throws Exception {
    // setup: two accounts, each with its process
    cluster.startDataService(Map.of());
    OwnedPoint mia = cluster.ownedPoint("mia");
    OwnedPoint ned = cluster.ownedPoint("ned");
    CompletableFuture<byte[]> miaCall = cluster.call(mia, "m");
    EnvironmentPeer miaPeer = cluster.attach();
    miaPeer.nextExecute();
    CompletableFuture<byte[]> nedCall = cluster.call(ned, "m");
    EnvironmentPeer nedPeer = cluster.attach();
    ExecuteRequest nedReq = nedPeer.nextExecute();
    // run: a tag with the invalid wire type 7, then bytes that are no message either
    miaPeer.sendRaw(new byte[] {0, 0, 0, 6, 0x0f, (byte) 0xff, (byte) 0xff, 1, 2, 3});
    // verify: mia's call fails and her process is replaced; ned's process still serves, untouched
    assertEquals("closed", miaPeer.ended());
    Exception e = assertThrows(Exception.class, () -> miaCall.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    nedPeer.answer(nedReq, "ned's");
    assertEquals("ned's", new String(nedCall.get(10, TimeUnit.SECONDS)));
    assertFalse(nedPeer.isEnded());
    assertEquals(0, cluster.process(Language.PYTHON, "ned").restarts());
    assertEquals(nedPeer.pid(), cluster.process(Language.PYTHON, "ned").pid());
    EnvironmentPeer miaNext = cluster.attach();
    CompletableFuture<byte[]> again = cluster.call(mia, "m");
    miaNext.answer(miaNext.nextExecute(), "mia's");
    assertEquals("mia's", new String(again.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void a_frame_announcing_more_than_2_gib_ends_the_link_and_a_new_process_serves() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    OwnedPoint ola = cluster.ownedPoint("ola");
    CompletableFuture<byte[]> inFlight = cluster.call(ola, "m");
    EnvironmentPeer peer = cluster.attach();
    peer.nextExecute();
    // run
    peer.sendRaw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2});
    // verify
    assertEquals("closed", peer.ended());
    Exception e = assertThrows(Exception.class, () -> inFlight.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    EnvironmentPeer next = cluster.attach();
    CompletableFuture<byte[]> again = cluster.call(ola, "m");
    next.answer(next.nextExecute(), "served");
    assertEquals("served", new String(again.get(10, TimeUnit.SECONDS)));
    assertEquals(1, cluster.process(Language.PYTHON, "ola").restarts());
  }

  @Test
  void a_result_for_a_call_not_in_flight_changes_nothing_and_what_it_touched_is_evicted() throws Exception {
    // setup: a call in flight, whose object the process loaded
    cluster.startDataService(Map.of());
    OwnedPoint pat = cluster.ownedPoint("pat");
    CompletableFuture<byte[]> call = cluster.call(pat, "m");
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest req = peer.nextExecute();
    peer.load(req.getCallId(), pat.id().toString());
    // run: an answer to a call ID the Data Service never sent, changing the object
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId() + 1000)
        .addDeltas(delta(pat.id(), "x", "forged", 1)).build());
    // verify: nothing stored, the process told to drop its copy, the real call still answered
    assertEquals(List.of(pat.id().toString()), peer.nextEvict().getIdsList());
    peer.answer(req, "real");
    assertEquals("real", new String(call.get(10, TimeUnit.SECONDS)));
    assertEquals("0", cluster.storedX(pat.id()));
    assertFalse(peer.isEnded());
  }

  @Test
  void each_process_gets_a_private_directory_that_is_removed_when_the_data_service_stops() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    OwnedPoint quinn = cluster.ownedPoint("quinn");
    cluster.call(quinn, "m");
    EnvironmentPeer peer = cluster.attach();
    List<String> args = peer.arguments();
    Path dir = Path.of(args.get(args.indexOf("--tmp") + 1));
    // run
    boolean existed = Files.isDirectory(dir);
    String mode = PosixFilePermissions.toString(Files.getPosixFilePermissions(dir));
    cluster.stopDataService();
    // verify
    assertTrue(existed);
    assertEquals("rwx------", mode);
    assertTrue(dir.startsWith(cluster.backendDir()), dir.toString());
    assertFalse(Files.exists(dir.getParent()), "the environments' directory outlived its Data Service");
  }

  @Test
  void objects_of_a_language_without_environment_are_unavailable() throws Exception {
    // setup: a backend started without a Python environment (DATACLAY_PYTHON=none)
    cluster.startDataService(Map.of("DATACLAY_PYTHON", "none"));
    OwnedPoint max = cluster.ownedPoint("max");
    // run
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> max.client().callMethod(max.id().toString(), "m", new byte[0]));
    // verify
    assertTrue(e.getMessage().contains("PYTHON"), e.getMessage());
    assertEquals(0, cluster.spawned());
  }
}
