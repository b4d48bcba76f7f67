package io.dataclay.ds.servicer;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.TestCluster;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.ObjectNotHereException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(60)
class SessionsAndPermissionsTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClassWithDataService();

  @Test
  void a_token_is_validated_with_the_logic_module_once_for_many_calls() throws Exception {
    // setup: no forget-all of an earlier test's contract change still on its way
    cluster.settle();
    DataServiceClient carol = cluster.client(cluster.session("carol"));
    UUID id = UUID.randomUUID();
    long before = cluster.lmCalls("ValidateSession");
    // run
    carol.makePersistent(List.of(point(id, "1")), null);
    for (int i = 0; i < 50; i++) {
      carol.getObjects(List.of(id.toString()));
    }
    // verify
    assertEquals(1, cluster.lmCalls("ValidateSession") - before);
  }

  @Test
  void concurrent_first_uses_of_a_token_make_one_logic_module_call() throws Exception {
    // setup
    cluster.settle();
    String token = cluster.session("dave");
    List<DataServiceClient> clients = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      clients.add(cluster.client(token));
    }
    UUID absent = UUID.randomUUID();
    long before = cluster.lmCalls("ValidateSession");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch go = new CountDownLatch(1);
    try {
      // run: eight calls with the same fresh token at once
      List<Future<String>> outcomes = new ArrayList<>();
      for (DataServiceClient c : clients) {
        outcomes.add(pool.submit(() -> {
          go.await();
          try {
            c.getObjects(List.of(absent.toString()));
            return "found";
          } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
          }
        }));
      }
      go.countDown();
      // verify: all authenticated (the object is simply not here), one validation
      for (Future<String> f : outcomes) {
        assertEquals("ObjectNotHereException", f.get());
      }
      assertEquals(1, cluster.lmCalls("ValidateSession") - before);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void missing_or_unknown_tokens_are_not_authenticated() {
    // (how long a refusal is remembered is SessionCacheTest's, on a clock it controls: here heartbeats
    // may tell the backend to forget every cached session at any moment)
    UUID id = UUID.randomUUID();
    assertThrows(NotAuthenticatedException.class, () -> cluster.client(null).getObjects(List.of(id.toString())));
    DataServiceClient bogus = cluster.client("bogus-token");
    assertThrows(NotAuthenticatedException.class, () -> bogus.getObjects(List.of(id.toString())));
    assertThrows(NotAuthenticatedException.class, () -> bogus.callMethod(id.toString(), "m", new byte[0]));
  }

  @Test
  void objects_of_a_dataset_the_session_may_not_use_are_refused() {
    // setup
    String ownerToken = cluster.session("erin");
    DataServiceClient erin = cluster.client(ownerToken);
    UUID id = UUID.randomUUID();
    erin.makePersistent(List.of(point(id, "secret")), null);
    DataServiceClient frank = cluster.client(cluster.session("frank"));
    // run
    ObjectNotHereException read = assertThrows(ObjectNotHereException.class,
        () -> frank.getObjects(List.of(id.toString())));
    ObjectNotHereException call = assertThrows(ObjectNotHereException.class,
        () -> frank.callMethod(id.toString(), "get", new byte[0]));
    assertThrows(ObjectNotHereException.class, () -> frank.getField(id.toString(), "x"));
    assertThrows(ObjectNotHereException.class, () -> frank.setField(id.toString(), "x", new byte[] {1}));
    // verify: refused as if not stored here (neither the dataset nor the object's existence told);
    // a session opened after a data contract may read it
    assertEquals("object " + id + " is not stored on this backend", read.getMessage());
    assertTrue(call.getMessage().contains(id.toString()), call.getMessage());
    cluster.lmAs(ownerToken).newDataContract("erin", "frank");
    DataServiceClient frankAgain = cluster.client(cluster.session("frank"));
    assertEquals(id.toString(), frankAgain.getObjects(List.of(id.toString())).get(0).getId());
  }
}
