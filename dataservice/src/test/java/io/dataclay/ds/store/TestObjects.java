package io.dataclay.ds.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dataclay.common.Language;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Objects for store tests. A "tagged" object carries one tag in every field (fields a, b, c, and
 * d when the tag asks for it), each value being {@code tag;} plus padding of the tag's declared
 * length; an object whose fields disagree, or whose value does not match its own tag, is torn.
 */
public final class TestObjects {
  /** A header for ordinary test objects. */
  public static final ObjectHeader HEADER = ObjectHeader.of("model.Person", Language.PYTHON, "alice");

  private TestObjects() {}

  /** A field value holding {@code text} in UTF-8, referencing nothing. */
  public static FieldValue value(String text) {
    return FieldValue.of(text.getBytes(StandardCharsets.UTF_8));
  }

  /** The text a value holds. */
  public static String text(FieldValue value) {
    return new String(value.value(), StandardCharsets.UTF_8);
  }

  /** An object with the given fields (in order) and the test header. */
  public static StoredObject object(UUID id, Map<String, FieldValue> fields) {
    return new StoredObject(id, HEADER, fields);
  }

  /**
   * Puts {@code n} new objects into {@code store}, the i-th with one field "i" holding i; answers
   * their IDs in put order (a set the caller may change).
   */
  public static Set<UUID> putNumbered(ObjectStore store, int n) {
    Set<UUID> ids = new LinkedHashSet<>();
    for (int i = 0; i < n; i++) {
      UUID id = UUID.randomUUID();
      ids.add(id);
      store.put(object(id, "i", Integer.toString(i)));
    }
    return ids;
  }

  /** An object with text fields given as name, value, name, value... */
  public static StoredObject object(UUID id, String... namesAndValues) {
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      fields.put(namesAndValues[i], value(namesAndValues[i + 1]));
    }
    return object(id, fields);
  }

  /** The tag of version {@code version} with {@code padding} bytes per value; d present when asked. */
  public static String tag(String writer, long version, int padding, boolean withD) {
    return writer + ":" + version + ":" + padding + ":" + (withD ? "d" : "-");
  }

  /** An object whose every field carries {@code tag}. */
  public static StoredObject tagged(UUID id, String tag) {
    return object(id, taggedFields(id, tag));
  }

  /** The delta turning any tagged object into one carrying {@code tag} (a, b, c changed; d added or removed). */
  public static ObjectDelta taggedDelta(UUID id, String tag) {
    Map<String, FieldValue> changed = taggedFields(id, tag);
    Set<String> removed = changed.containsKey("d") ? Set.of() : Set.of("d");
    return new ObjectDelta(id, changed, removed);
  }

  /** The tag every field of {@code object} carries; fails the test when the object is torn. */
  public static String tagOf(StoredObject object) {
    Map<String, FieldValue> fields = object.fields();
    String tag = tagIn(fields.get("a"), object);
    String[] parts = tag.split(":");
    boolean withD = parts[3].equals("d");
    assertEquals(withD ? List.of("a", "b", "c", "d") : List.of("a", "b", "c"), List.copyOf(fields.keySet()),
        "fields of " + object.id() + " with tag " + tag);
    for (FieldValue v : fields.values()) {
      String own = tagIn(v, object);
      if (!own.equals(tag)) {
        fail("object " + object.id() + " is torn: field tags " + tag + " and " + own);
      }
      assertEquals(List.of(object.id()), v.references(), "references of " + object.id());
    }
    return tag;
  }

  private static String tagIn(FieldValue value, StoredObject object) {
    assertTrue(value != null, "object " + object.id() + " lacks field a");
    String text = text(value);
    int end = text.indexOf(';');
    assertTrue(end > 0, "object " + object.id() + " has an untagged value");
    String tag = text.substring(0, end);
    int padding = Integer.parseInt(tag.split(":")[2]);
    byte[] expected = new byte[padding];
    Arrays.fill(expected, (byte) 'x');
    assertEquals(end + 1 + padding, value.value().length, "value length of " + object.id() + " tag " + tag);
    assertTrue(Arrays.equals(expected, Arrays.copyOfRange(value.value(), end + 1, value.value().length)),
        "object " + object.id() + " has a torn value under tag " + tag);
    return tag;
  }

  private static Map<String, FieldValue> taggedFields(UUID id, String tag) {
    int padding = Integer.parseInt(tag.split(":")[2]);
    byte[] head = (tag + ";").getBytes(StandardCharsets.UTF_8);
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    List<String> names = tag.endsWith(":d") ? List.of("a", "b", "c", "d") : List.of("a", "b", "c");
    for (String name : names) {
      byte[] bytes = Arrays.copyOf(head, head.length + padding);
      Arrays.fill(bytes, head.length, bytes.length, (byte) 'x');
      fields.put(name, new FieldValue(bytes, List.of(id)));
    }
    return fields;
  }
}
