package io.dataclay.ds.servicer;

import static io.dataclay.ds.TestObjects.delta;
import static io.dataclay.ds.TestObjects.point;
import static io.dataclay.ds.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.TestCluster;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.PromotedObject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Who may make a backend a master, and what a backend takes from another as a master's change:
 * PromoteReplicas is the Logic Module's only (its terms are learnt from nobody else), and a
 * change passed on to a master copy is a stale master's and is refused.
 */
@Timeout(60)
class FencingTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClassWithDataService();

  @Test
  void promote_replicas_is_refused_to_backends_administrators_and_users_and_teaches_no_terms() {
    // setup: a master copy here
    UUID id = UUID.randomUUID();
    cluster.client(cluster.session("erin")).makePersistent(List.of(point(id, "1")), null);
    PromotedObject promote = PromotedObject.newBuilder().setObjectId(id.toString()).build();
    // run / verify: a term that would fence this backend itself, from every caller but the Logic Module
    for (String token : List.of(cluster.backendToken(), cluster.adminToken(), cluster.session("frank"))) {
      DataServiceClient caller = cluster.client(token);
      assertThrows(PermissionDeniedException.class,
          () -> caller.promoteReplicas(List.of(promote), Map.of(cluster.node().identity().id().toString(), 9L)));
    }
    // the backend's own changes are still taken at term 0: nothing was learnt
    cluster.client(cluster.backendToken()).storeCopies(List.of(), 0);
  }

  @Test
  void a_change_passed_on_to_a_master_copy_is_refused_and_not_applied() {
    // setup
    UUID id = UUID.randomUUID();
    cluster.client(cluster.session("gina")).makePersistent(List.of(point(id, "1")), null);
    DataServiceClient backend = cluster.client(cluster.backendToken());
    // run: another backend passes on a "master's change" to what is a master copy here
    assertThrows(PermissionDeniedException.class,
        () -> backend.applyDeltas(List.of(delta(id, "x", "2", 1)), 0));
    // verify
    assertEquals("1", text(cluster.client(cluster.session("gina")).getObjects(List.of(id.toString())).get(0)
        .getFields(0).getValue()));
  }
}
