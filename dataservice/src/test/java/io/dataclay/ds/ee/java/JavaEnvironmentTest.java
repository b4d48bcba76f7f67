package io.dataclay.ds.ee.java;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.common.Language;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.ee.java.models.Counter;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.MethodDoesNotExistException;
import io.dataclay.exceptions.RemoteException;
import io.dataclay.exceptions.SerializationException;
import io.dataclay.proto.ObjectData;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JavaEnvironmentTest {
  @RegisterExtension final TestCluster cluster = TestCluster.forEachTestWithDataService();
  private DataServiceClient ds;
  private final JavaModels models = new JavaModels(Set.of(Counter.class));

  @BeforeEach
  void start() throws Exception {
    cluster.registerModel(JavaModels.model("counters", Counter.class));
    ds = cluster.client(cluster.session("ann"));
  }

  private UUID persist(Counter c) {
    ObjectData data = models.objectData(c);
    ds.makePersistent(List.of(data), null);
    return UUID.fromString(data.getId());
  }

  private Object field(UUID id, String name) {
    StoredObject o = cluster.store().get(id).orElseThrow();
    return models.decode(o.fields().get(name).value());
  }

  @Test
  void a_method_runs_on_the_stored_object_and_its_change_is_stored_when_it_returns() {
    // setup
    UUID id = persist(new Counter("c", 5));
    // run
    Object result = models.decode(ds.callMethod(id.toString(), "add(I)I", models.args(3)));
    // verify
    assertEquals(8, result);
    assertEquals(8, field(id, "value"));
    assertEquals(List.of("add 3"), field(id, "log"));
  }

  @Test
  void a_method_not_overloaded_can_be_named_without_its_descriptor() {
    // setup
    UUID id = persist(new Counter("plain", 1));
    // run
    Object label = models.decode(ds.callMethod(id.toString(), "getLabel", models.args()));
    MethodDoesNotExistException overloaded = assertThrows(MethodDoesNotExistException.class,
        () -> ds.callMethod(id.toString(), "add", models.args(1)));
    // verify
    assertEquals("plain", label);
    assertTrue(overloaded.getMessage().contains("add"), overloaded.getMessage());
  }

  @Test
  void a_model_exception_reaches_the_caller_with_its_type_and_message_and_earlier_changes_are_kept() {
    // setup
    UUID id = persist(new Counter("c", 5));
    // run
    RemoteException e = assertThrows(RemoteException.class,
        () -> ds.callMethod(id.toString(), "fail(Ljava/lang/String;)V", models.args("boom")));
    // verify
    assertEquals("java.lang.IllegalStateException", e.remoteType());
    assertEquals("boom", e.remoteMessage());
    assertTrue(e.remoteTraceback().contains("Counter.fail"), e.remoteTraceback());
    assertEquals(-1, field(id, "value"));
  }

  @Test
  void fields_are_read_and_assigned_through_the_environment() {
    // setup
    UUID id = persist(new Counter("before", 0));
    // run
    Object before = models.decode(ds.getField(id.toString(), "label"));
    ds.setField(id.toString(), "label", models.codec.encode("after", models).value());
    // verify
    assertEquals("before", before);
    assertEquals("after", models.decode(ds.getField(id.toString(), "label")));
    assertEquals("after", field(id, "label"));
  }

  @Test
  void an_object_created_by_a_method_becomes_persistent_with_the_call() {
    // setup
    UUID id = persist(new Counter("parent", 0));
    // run
    Counter child = (Counter) models.decode(
        ds.callMethod(id.toString(), "spawn(Ljava/lang/String;)Lio/dataclay/ds/ee/java/models/Counter;",
            models.args("child")));
    // verify
    UUID childId = child.getObjectId();
    assertNotNull(childId);
    StoredObject stored = cluster.store().get(childId).orElseThrow();
    assertEquals("child", models.decode(stored.fields().get("label").value()));
    assertEquals("ann", stored.header().dataset());
    assertEquals(List.of(childId), cluster.store().get(id).orElseThrow().fields().get("next").references());
  }

  @Test
  void a_call_on_another_object_stored_here_runs_here_and_its_change_is_stored() {
    // setup
    Counter next = new Counter("next", 10);
    UUID nextId = persist(next);
    Counter first = new Counter("first", 0);
    first.setNext(next);
    UUID firstId = persist(first);
    // run
    Object result = models.decode(ds.callMethod(firstId.toString(), "addToNext(I)I", models.args(5)));
    // verify
    assertEquals(15, result);
    assertEquals(15, field(nextId, "value"));
    assertEquals(0, field(firstId, "value"));
  }

  @Test
  void a_value_naming_a_class_outside_the_allow_list_is_refused_and_nothing_changes() {
    // setup
    UUID id = persist(new Counter("safe", 0));
    byte[] evil = models.codec.encode(Map.of("k", "v"), models).value();
    // run
    SerializationException e = assertThrows(SerializationException.class,
        () -> ds.setField(id.toString(), "label", replaceName(evil)));
    // verify
    assertTrue(e.getMessage().contains("not allowed"), e.getMessage());
    assertEquals("safe", field(id, "label"));
  }

  @Test
  void unknown_methods_are_method_does_not_exist() {
    // setup
    UUID id = persist(new Counter("c", 0));
    // run
    MethodDoesNotExistException e = assertThrows(MethodDoesNotExistException.class,
        () -> ds.callMethod(id.toString(), "explode()V", models.args()));
    // verify
    assertTrue(e.getMessage().contains("explode()V"), e.getMessage());
  }

  @Test
  void status_lists_the_java_environment_beside_the_python_one() {
    // run
    List<EnvironmentStatus> environments = cluster.node().report().environments();
    // verify
    EnvironmentStatus java = environments.stream().filter(e -> e.language() == Language.JAVA).findFirst().orElseThrow();
    assertTrue(java.alive());
    assertEquals(ProcessHandle.current().pid(), java.pid());
    assertTrue(environments.stream().anyMatch(e -> e.language() == Language.PYTHON));
    assertTrue(cluster.node().identity().languages().contains(Language.JAVA));
  }

  /** The encoded immutable map with its class name swapped for java.lang.ProcessBuilder (Kryo ends an ASCII name with its high bit set). */
  private static byte[] replaceName(byte[] mapPayload) {
    String text = new String(mapPayload, StandardCharsets.ISO_8859_1);
    String from = "java.util.ImmutableCollections$Map" + (char) ('1' | 0x80);
    String to = "java.lang.ProcessBuilde" + (char) ('r' | 0x80);
    int at = text.indexOf(from);
    assertTrue(at >= 0, "the payload names " + from);
    return (text.substring(0, at) + to + text.substring(at + from.length())).getBytes(StandardCharsets.ISO_8859_1);
  }
}
