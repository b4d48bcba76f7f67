package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.delta;
import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster.OwnedPoint;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestObjects;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.exceptions.CallTimedOutException;
import io.dataclay.exceptions.QuotaExceededException;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.Language;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.server.testing.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Each account's share of a backend: a process of its own, a bounded number of calls in flight
 * and waiting, a deadline per call; and what every new process is given.
 */
@Timeout(60)
class AccountEnvironmentsTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();

  private static <T> Throwable failure(CompletableFuture<T> call) {
    Exception e = assertThrows(Exception.class, () -> call.get(10, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void a_spare_process_started_ahead_takes_an_accounts_first_call_and_another_spare_follows() throws Exception {
    // setup: a Data Service that keeps one Python process started ahead
    cluster.startDataService(Map.of("DATACLAY_EE_SPARES", "1"));
    EnvironmentPeer spare = cluster.nextPeer(); // started at once, before any call
    assertEquals(0, spare.hello().getModelsCount()); // with no model: it belongs to nobody yet
    OwnedPoint ann = cluster.ownedPoint("ann");
    // run
    CompletableFuture<byte[]> call = cluster.call(ann, "m");
    assertTrue(spare.next().getDeploy().getModelsCount() > 0); // adopted: ann's models, then her call
    ExecuteRequest request = spare.nextExecute();
    spare.answer(request, "from the spare");
    EnvironmentPeer next = cluster.attach();
    // verify: the spare served ann's first call as hers, and a new spare was started
    assertEquals("from the spare", new String(call.get(10, TimeUnit.SECONDS)));
    assertEquals("ann", request.getCaller().getUsername());
    assertEquals(spare.pid(), cluster.process(io.dataclay.common.Language.PYTHON, "ann").pid());
    assertNotEquals(spare.pid(), next.pid());
    assertNotEquals(slot(spare), slot(next));
  }

  @Test
  void each_account_gets_a_process_of_its_own_started_through_the_launcher_with_no_credential() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    OwnedPoint ann = cluster.ownedPoint("ann");
    OwnedPoint bea = cluster.ownedPoint("bea");
    // run
    CompletableFuture<byte[]> annCall = cluster.call(ann, "m");
    EnvironmentPeer annPeer = cluster.attach();
    ExecuteRequest annReq = annPeer.nextExecute();
    CompletableFuture<byte[]> beaCall = cluster.call(bea, "m");
    EnvironmentPeer beaPeer = cluster.attach();
    ExecuteRequest beaReq = beaPeer.nextExecute();
    annPeer.answer(annReq, "ann's");
    beaPeer.answer(beaReq, "bea's");
    // verify: two processes, each serving only its account's calls
    assertEquals("ann's", new String(annCall.get(10, TimeUnit.SECONDS)));
    assertEquals("bea's", new String(beaCall.get(10, TimeUnit.SECONDS)));
    assertNotEquals(annPeer.pid(), beaPeer.pid());
    assertEquals("ann", annReq.getCaller().getUsername());
    assertEquals("bea", beaReq.getCaller().getUsername());
    assertEquals(annPeer.pid(), cluster.process(io.dataclay.common.Language.PYTHON, "ann").pid());
    assertEquals(beaPeer.pid(), cluster.process(io.dataclay.common.Language.PYTHON, "bea").pid());
    // the sandbox launcher's command line, with a slot of each process's own
    List<String> args = annPeer.arguments();
    assertEquals(List.of("-m", "dataclay._internal.sandbox", "--mode", "none", "--memory-mb", "4096",
        "--max-processes", "512", "--self-confining", "--uid-slot"), args.subList(0, 10));
    assertEquals(List.of("-m", "dataclay._internal.ee"), args.subList(args.size() - 2, args.size()));
    assertEquals("--", args.get(args.size() - 4));
    assertNotEquals(slot(annPeer), slot(beaPeer));
    // its environment: the backend's ID and the account's share, nothing secret
    Map<String, String> env = annPeer.environment();
    assertEquals(cluster.node().identity().id().toString(), env.get("DATACLAY_EE_BACKEND_ID"));
    assertEquals("16", env.get("DATACLAY_EE_THREADS"));
    for (String key : env.keySet()) {
      assertFalse(key.contains("SECRET") || key.contains("PASSWORD") || key.contains("TOKEN") || key.contains("KEY"),
          key);
    }
  }

  private static String slot(EnvironmentPeer peer) {
    return peer.arguments().get(peer.arguments().indexOf("--uid-slot") + 1);
  }

  @Test
  void a_new_account_over_the_process_limit_is_refused_while_all_are_busy_and_replaces_an_idle_one() throws Exception {
    // setup: two processes at most, both busy
    cluster.startDataService(Map.of(EnvironmentSettings.MAX_PROCESSES, "2"));
    OwnedPoint cyd = cluster.ownedPoint("cyd");
    OwnedPoint dot = cluster.ownedPoint("dot");
    OwnedPoint eli = cluster.ownedPoint("eli");
    CompletableFuture<byte[]> cydCall = cluster.call(cyd, "m");
    EnvironmentPeer cydPeer = cluster.attach();
    ExecuteRequest cydReq = cydPeer.nextExecute();
    CompletableFuture<byte[]> dotCall = cluster.call(dot, "m");
    EnvironmentPeer dotPeer = cluster.attach();
    ExecuteRequest dotReq = dotPeer.nextExecute();
    // run: a third account while both are busy
    QuotaExceededException refused = assertThrows(QuotaExceededException.class,
        () -> eli.client().callMethod(eli.id().toString(), "m", new byte[0]));
    // verify: refused naming the setting, and no process started for it
    assertTrue(refused.getMessage().contains(EnvironmentSettings.MAX_PROCESSES), refused.getMessage());
    assertNull(cluster.peers().poll(300));
    // run: once cyd's process is idle, eli's call stops it and takes its place
    cydPeer.answer(cydReq, "cyd's");
    assertEquals("cyd's", new String(cydCall.get(10, TimeUnit.SECONDS)));
    Thread.sleep(200); // the call's slot is freed just after its answer left
    CompletableFuture<byte[]> eliCall = cluster.call(eli, "m");
    EnvironmentPeer eliPeer = cluster.attach();
    eliPeer.answer(eliPeer.nextExecute(), "eli's");
    // verify
    assertEquals("eli's", new String(eliCall.get(10, TimeUnit.SECONDS)));
    assertEquals("closed", cydPeer.ended());
    Eventually.await(Duration.ofSeconds(5), () -> !cydPeer.alive(), "the idle process to be stopped");
    dotPeer.answer(dotReq, "dot's");
    assertEquals("dot's", new String(dotCall.get(10, TimeUnit.SECONDS)));
    assertEquals(Set.of("dot", "eli"), cluster.environment(io.dataclay.common.Language.PYTHON).processes().stream()
        .map(EnvironmentStatus.Process::account).collect(Collectors.toSet()));
  }

  @Test
  void an_account_runs_at_most_its_threads_at_once_waits_in_a_bounded_queue_and_never_holds_up_another()
      throws Exception {
    // setup: two calls at once per account, one waiting
    cluster.startDataService(Map.of(EnvironmentSettings.THREADS, "2", EnvironmentSettings.MAX_QUEUED, "1"));
    OwnedPoint fay = cluster.ownedPoint("fay");
    OwnedPoint gus = cluster.ownedPoint("gus");
    CompletableFuture<byte[]> first = cluster.call(fay, "one");
    EnvironmentPeer fayPeer = cluster.attach();
    ExecuteRequest r1 = fayPeer.nextExecute();
    CompletableFuture<byte[]> second = cluster.call(fay, "two");
    ExecuteRequest r2 = fayPeer.nextExecute();
    // run: a third waits, a fourth is refused
    CompletableFuture<byte[]> third = cluster.call(fay, "three");
    DataServiceMessage early = fayPeer.poll(300);
    QuotaExceededException refused = assertThrows(QuotaExceededException.class,
        () -> fay.client().callMethod(fay.id().toString(), "four", new byte[0]));
    // verify: the third was not sent while two ran; another account is served at once meanwhile
    assertNull(early, "a third call was sent while two were running");
    assertTrue(refused.getMessage().contains("fay"), refused.getMessage());
    CompletableFuture<byte[]> other = cluster.call(gus, "m");
    EnvironmentPeer gusPeer = cluster.attach();
    gusPeer.answer(gusPeer.nextExecute(), "gus's");
    assertEquals("gus's", new String(other.get(10, TimeUnit.SECONDS)));
    assertFalse(third.isDone());
    // run: one answer frees a thread for the waiting call
    fayPeer.answer(r1, "1");
    ExecuteRequest r3 = fayPeer.nextExecute();
    fayPeer.answer(r2, "2");
    fayPeer.answer(r3, "3");
    // verify
    assertEquals("three", r3.getName());
    assertEquals("1", new String(first.get(10, TimeUnit.SECONDS)));
    assertEquals("2", new String(second.get(10, TimeUnit.SECONDS)));
    assertEquals("3", new String(third.get(10, TimeUnit.SECONDS)));
    assertEquals("2", fayPeer.environment().get("DATACLAY_EE_THREADS"));
  }

  @Test
  void answered_calls_leave_no_task_waiting_on_the_timer() throws Exception {
    // setup: the default deadline (30 minutes) for the first calls
    cluster.startDataService(Map.of());
    OwnedPoint ivy = cluster.ownedPoint("ivy");
    CompletableFuture<byte[]> first = cluster.call(ivy, "m");
    EnvironmentPeer peer = cluster.attach();
    peer.answer(peer.nextExecute(), "0");
    first.get(10, TimeUnit.SECONDS);
    int before = cluster.node().environmentTimerTasks();
    // run: 2,000 calls, each answered
    for (int i = 1; i <= 2000; i++) {
      CompletableFuture<byte[]> call = cluster.call(ivy, "m");
      peer.answer(peer.nextExecute(), Integer.toString(i));
      assertEquals(Integer.toString(i), new String(call.get(10, TimeUnit.SECONDS)));
    }
    // verify: no task per call waits out its deadline on the timer (there were 2,000 more before)
    int after = cluster.node().environmentTimerTasks();
    assertTrue(after <= before + 1, before + " tasks before the calls, " + after + " after");
  }

  @Test
  void a_call_past_its_deadline_fails_its_process_is_replaced_and_nothing_it_changed_is_stored() throws Exception {
    // setup: a deadline of 1 s
    cluster.startDataService(Map.of(EnvironmentSettings.CALL_TIMEOUT_S, "1"));
    OwnedPoint hal = cluster.ownedPoint("hal");
    long t0 = System.nanoTime();
    CompletableFuture<byte[]> stuck = cluster.call(hal, "forever");
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest req = peer.nextExecute();
    peer.load(req.getCallId(), hal.id().toString());
    // run: the process never answers in time
    Throwable timedOut = failure(stuck);
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    // verify: CALL_TIMED_OUT after about a second, and the process was stopped and replaced
    assertTrue(timedOut instanceof CallTimedOutException, String.valueOf(timedOut));
    assertTrue(ms >= 900 && ms < 8000, "failed after " + ms + " ms");
    assertTrue(timedOut.getMessage().contains(EnvironmentSettings.CALL_TIMEOUT_S), timedOut.getMessage());
    assertEquals("closed", peer.ended());
    EnvironmentPeer next = cluster.attach();
    assertNotEquals(peer.pid(), next.pid());
    // run: its late result (a change) goes nowhere
    try {
      peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).addDeltas(delta(hal.id(), "x", "late", 1))
          .build());
    } catch (java.io.IOException gone) {
      // the process and its link are gone: exactly the point
    }
    CompletableFuture<byte[]> again = cluster.call(hal, "quick");
    next.answer(next.nextExecute(), "quick");
    // verify
    assertEquals("quick", new String(again.get(10, TimeUnit.SECONDS)));
    assertEquals("0", cluster.storedX(hal.id()));
    assertEquals(1, cluster.process(io.dataclay.common.Language.PYTHON, "hal").restarts());
  }

  @Test
  void a_model_registered_later_reaches_the_running_processes_with_every_model() throws Exception {
    // setup: a running process got the test model
    cluster.startDataService(Map.of());
    OwnedPoint ivy = cluster.ownedPoint("ivy");
    CompletableFuture<byte[]> call = cluster.call(ivy, "m");
    EnvironmentPeer peer = cluster.nextPeer();
    List<String> atStart = peer.hello().getModelsList().stream().map(Model::getNamespace).toList();
    peer.answer(peer.nextExecute(), "ok");
    call.get(10, TimeUnit.SECONDS);
    // run: a new model is registered with the Logic Module
    cluster.registerModel(Model.newBuilder().setNamespace("later").setLanguage(Language.PYTHON)
        .addFiles(ModelFile.newBuilder().setPath("later.py").setContent(TestObjects.bytes("class Later: pass\n")))
        .addClasses(ClassDescription.newBuilder().setName("later.Later")).build());
    // verify: the whole list again, with the new one
    DataServiceMessage m = peer.next();
    assertTrue(m.hasDeploy(), m.toString());
    assertEquals(List.of("shapes"), atStart);
    assertEquals(Set.of("shapes", "later"), m.getDeploy().getModelsList().stream().map(Model::getNamespace)
        .collect(Collectors.toSet()));
  }
}
