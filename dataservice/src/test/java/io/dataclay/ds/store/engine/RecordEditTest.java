package io.dataclay.ds.store.engine;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RecordEditTest {
  private final RecordCodec codec = new RecordCodec();
  private final UUID id = UUID.randomUUID();

  @Test
  void aSameSizedChangeIsAnInPlaceWriteOfJustThatValue() {
    // setup
    byte[] old = codec.encode(object(id, "a", "1111", "b", "2222", "c", "3333"));
    // run
    RecordEdit edit = RecordEdit.plan(RecordInput.of(old), new ObjectDelta(id, Map.of("b", value("9999")), Set.of()));
    // verify
    assertTrue(edit.inPlace());
    assertEquals(old.length, edit.length());
    List<Integer> writes = new ArrayList<>();
    edit.forEach(new RecordEdit.Pieces() {
      @Override
      public void copy(int from, int to, int length) {
        throw new AssertionError("an in-place edit copied");
      }

      @Override
      public void write(byte[] bytes, int to) {
        writes.add(bytes.length);
      }
    });
    assertEquals(List.of(1 + 4 + 1), writes);
    assertArrayEquals(codec.encode(object(id, "a", "1111", "b", "9999", "c", "3333")), edit.toArray(RecordInput.of(old)));
  }

  @Test
  void resizingRemovingAndAddingRebuildTheRecordKeepingFieldOrder() {
    byte[] old = codec.encode(object(id, "a", "1", "b", "2", "c", "3"));

    RecordEdit edit = RecordEdit.plan(RecordInput.of(old),
        new ObjectDelta(id, Map.of("b", value("twenty-two"), "d", value("4")), Set.of("c", "x")));

    assertFalse(edit.inPlace());
    byte[] expected = codec.encode(object(id, "a", "1", "b", "twenty-two", "d", "4"));
    assertEquals(expected.length, edit.length());
    assertArrayEquals(expected, edit.toArray(RecordInput.of(old)));
  }

  @Test
  void anEmptyDeltaChangesNothing() {
    byte[] old = codec.encode(object(id, "a", "1"));

    RecordEdit edit = RecordEdit.plan(RecordInput.of(old), new ObjectDelta(id, Map.of(), Set.of("missing")));

    assertTrue(edit.inPlace());
    assertArrayEquals(old, edit.toArray(RecordInput.of(old)));
  }

  @Test
  void aFieldBothChangedAndRemovedIsRefused() {
    byte[] old = codec.encode(object(id, "a", "1"));

    assertThrows(InvalidArgumentException.class,
        () -> RecordEdit.plan(RecordInput.of(old), new ObjectDelta(id, Map.of("a", value("2")), Set.of("a"))));
  }
}
