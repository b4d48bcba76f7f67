package io.dataclay.logic.collection;

import io.dataclay.logic.snapshot.SnapshotIndex;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;


class ReferenceGraphTest {
  private static final String B1 = UUID.randomUUID().toString();

  private static List<String> ids(int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(UUID.randomUUID().toString());
    }
    return out;
  }

  private static SnapshotIndex snapshot(List<String> ids) {
    SnapshotIndex index = new SnapshotIndex();
    ids.forEach(id -> index.add(id, B1));
    index.seal();
    return index;
  }

  private static Set<String> reachable(SnapshotIndex index, ReferenceGraph graph) {
    BitSet marked = graph.mark();
    Set<String> out = new HashSet<>();
    for (int i = marked.nextSetBit(0); i >= 0; i = marked.nextSetBit(i + 1)) {
      out.add(index.id(i));
    }
    return out;
  }

  @Test
  void every_snapshot_object_is_found_at_its_position_and_others_are_not() {
    // setup
    List<String> ids = ids(20_000);
    // run
    SnapshotIndex index = snapshot(ids);
    // verify
    assertEquals(20_000, index.size());
    for (String id : ids) {
      assertEquals(id, index.id(index.indexOf(id)));
      assertEquals(B1, index.masterAtSnapshot(index.indexOf(id)));
    }
    assertEquals(-1, index.indexOf(UUID.randomUUID().toString()));
    assertEquals(-1, index.indexOf("not-a-uuid"));
  }

  @Test
  void a_cycle_reachable_from_a_root_is_kept_and_an_unreachable_cycle_is_not() {
    // setup: root -> a -> b -> a (kept); c -> d -> e -> c (unreachable)
    List<String> o = ids(6);
    String root = o.get(0);
    SnapshotIndex index = snapshot(o);
    ReferenceGraph graph = new ReferenceGraph(index);
    graph.reported(root, List.of(o.get(1)));
    graph.reported(o.get(1), List.of(o.get(2)));
    graph.reported(o.get(2), List.of(o.get(1), o.get(2)));
    graph.reported(o.get(3), List.of(o.get(4)));
    graph.reported(o.get(4), List.of(o.get(5)));
    graph.reported(o.get(5), List.of(o.get(3)));
    // run
    graph.root(root);
    Set<String> kept = reachable(index, graph);
    // verify
    assertEquals(Set.of(root, o.get(1), o.get(2)), kept);
  }

  @Test
  void the_reports_of_every_backend_are_united_so_a_replica_edge_is_enough() {
    // setup: backend 1 reports a -> b, backend 2 reports its copy of a -> c
    List<String> o = ids(3);
    SnapshotIndex index = snapshot(o);
    ReferenceGraph graph = new ReferenceGraph(index);
    graph.reported(o.get(0), List.of(o.get(1)));
    graph.reported(o.get(0), List.of(o.get(2)));
    graph.root(o.get(0));
    // run
    Set<String> kept = reachable(index, graph);
    // verify
    assertEquals(Set.copyOf(o), kept);
  }

  @Test
  void an_object_outside_the_snapshot_keeps_what_it_references() {
    // setup: a newer object (not in the snapshot) references x; x references y
    List<String> o = ids(3);
    SnapshotIndex index = snapshot(o);
    ReferenceGraph graph = new ReferenceGraph(index);
    graph.reported(UUID.randomUUID().toString(), List.of(o.get(0)));
    graph.reported(o.get(0), List.of(o.get(1)));
    // run
    Set<String> kept = reachable(index, graph);
    // verify
    assertEquals(Set.of(o.get(0), o.get(1)), kept);
  }

  @Test
  void a_version_is_kept_only_while_something_reaches_it_and_a_kept_version_keeps_its_original() {
    // setup: originals o0 (rooted) and o1 (not); versions report their original as a reference:
    // v2 of o0 reached by nothing, v3 of o1 held (a root), v4 of o0 referenced by the rooted o0,
    // and a newer version outside the snapshot whose original is o5
    List<String> o = ids(6);
    SnapshotIndex index = snapshot(o);
    ReferenceGraph graph = new ReferenceGraph(index);
    graph.reported(o.get(2), List.of(o.get(0)));
    graph.reported(o.get(3), List.of(o.get(1)));
    graph.reported(o.get(0), List.of(o.get(4)));
    graph.reported(o.get(4), List.of(o.get(0)));
    graph.reported(UUID.randomUUID().toString(), List.of(o.get(5)));
    graph.root(o.get(0));
    graph.root(o.get(3));
    // run
    Set<String> kept = reachable(index, graph);
    // verify: the unreached version v2 is garbage although its original is kept; the held v3 keeps o1
    assertEquals(Set.of(o.get(0), o.get(1), o.get(3), o.get(4), o.get(5)), kept);
  }

  @Test
  void only_objects_some_backend_reported_count_as_reported() {
    // setup
    List<String> o = ids(2);
    SnapshotIndex index = snapshot(o);
    ReferenceGraph graph = new ReferenceGraph(index);
    // run
    graph.reported(o.get(0), List.of(o.get(1), "not-a-uuid", UUID.randomUUID().toString()));
    // verify
    assertTrue(graph.wasReported(index.indexOf(o.get(0))));
    assertFalse(graph.wasReported(index.indexOf(o.get(1))));
    assertEquals(Set.of(), reachable(index, graph));
  }
}
