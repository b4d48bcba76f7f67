package io.dataclay.ds.servicer;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.TestCluster;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.Field;
import io.dataclay.proto.Language;
import io.dataclay.proto.ObjectData;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

@Timeout(60)
class BadInputTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClassWithDataService();
  static DataServiceClient ds;

  @BeforeAll
  static void logIn() throws Exception {
    ds = cluster.client(cluster.session("gina"));
  }

  private static void assertInvalid(String field, Executable call) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
    assertTrue(e.getMessage().startsWith(field), "expected the message to name " + field + ": " + e.getMessage());
  }

  private static ObjectData edited(Consumer<ObjectData.Builder> edit) {
    ObjectData.Builder b = point(UUID.randomUUID(), "1").toBuilder();
    edit.accept(b);
    return b.build();
  }

  @Test
  void every_malformed_field_is_named_and_the_server_keeps_serving() {
    String id = UUID.randomUUID().toString();
    // run + verify, one bad field at a time
    assertInvalid("object_id", () -> ds.callMethod("not-a-uuid", "m", new byte[0]));
    assertInvalid("object_id", () -> ds.callMethod(id.toUpperCase(), "m", new byte[0]));
    assertInvalid("method", () -> ds.callMethod(id, "", new byte[0]));
    assertInvalid("field", () -> ds.getField(id, ""));
    assertInvalid("object_id", () -> ds.setField("", "x", new byte[0]));
    assertInvalid("ids[1]", () -> ds.getObjects(List.of(id, "1-2-3-4-5")));
    assertInvalid("objects is empty", () -> ds.makePersistent(List.of(), null));
    assertInvalid("objects[0].id", () -> ds.makePersistent(List.of(edited(b -> b.setId("x"))), null));
    assertInvalid("objects[0].header is missing", () -> ds.makePersistent(List.of(edited(ObjectData.Builder::clearHeader)), null));
    assertInvalid("objects[0].header.class_name",
        () -> ds.makePersistent(List.of(edited(b -> b.getHeaderBuilder().setClassName(""))), null));
    assertInvalid("objects[0].header.language",
        () -> ds.makePersistent(List.of(edited(b -> b.getHeaderBuilder().setLanguage(Language.LANGUAGE_UNSPECIFIED))), null));
    assertInvalid("objects[0].header.language",
        () -> ds.makePersistent(List.of(edited(b -> b.getHeaderBuilder().setLanguageValue(77))), null));
    assertInvalid("objects[0].header.version_of",
        () -> ds.makePersistent(List.of(edited(b -> b.getHeaderBuilder().setVersionOf("v1"))), null));
    assertInvalid("objects[0].fields[1].name",
        () -> ds.makePersistent(List.of(edited(b -> b.addFields(Field.newBuilder().setName("x")))), null));
    assertInvalid("objects[0].fields[0].references[0]",
        () -> ds.makePersistent(List.of(edited(b -> b.getFieldsBuilder(0).addReferences("nope"))), null));
    assertInvalid("objects[0].fields[1].name",
        () -> ds.makePersistent(List.of(edited(b -> b.addFields(Field.newBuilder()))), null));
    // the server still serves, and nothing was stored by the bad requests
    UUID good = UUID.randomUUID();
    ds.makePersistent(List.of(point(good, "1")), null);
    assertEquals(1, cluster.store().count());
  }

  @Test
  void bad_requests_are_counted_in_the_status_like_any_call() {
    long before = cluster.node().report().calls().getOrDefault("CallMethod", 0L);
    assertInvalid("object_id", () -> ds.callMethod("nope", "m", new byte[0]));
    Map<String, Long> after = cluster.node().report().calls();
    assertEquals(before + 1, after.get("CallMethod"));
  }

  @Test
  void a_whole_state_that_also_removes_fields_is_refused_before_anything_is_changed() {
    // setup
    io.dataclay.proto.ObjectDelta state = io.dataclay.proto.ObjectDelta.newBuilder()
        .setId(UUID.randomUUID().toString()).setWholeState(true).addRemovedFields("x").build();
    // run + verify
    assertInvalid("deltas[0] is a whole state", () -> ds.applyDeltas(List.of(state), 0));
  }
}
