package io.dataclay.ds.store.engine;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static io.dataclay.ds.store.TestObjects.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InternalException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RecordCodecTest {
  private final RecordCodec codec = new RecordCodec();
  private final UUID id = UUID.randomUUID();

  @Test
  void aDecodedRecordEqualsTheEncodedObject() {
    // setup
    ObjectHeader header = new ObjectHeader("pkg.Klass", Language.JAVA, "ds", "version-of", null);
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    fields.put("z", new FieldValue(new byte[300], List.of(UUID.randomUUID(), UUID.randomUUID())));
    fields.put("é", value("ü"));
    fields.put("a", FieldValue.of(new byte[0]));
    // run
    StoredObject decoded = codec.decode(id, RecordInput.of(codec.encode(new StoredObject(id, header, fields))));
    // verify
    assertEquals(header, decoded.header());
    assertEquals(List.of("z", "é", "a"), List.copyOf(decoded.fields().keySet()));
    assertEquals(fields.get("z").references(), decoded.fields().get("z").references());
    assertArrayEquals(new byte[300], decoded.fields().get("z").value());
    assertEquals("ü", text(decoded.fields().get("é")));
  }

  @Test
  void decodedHeadersAreSharedAcrossObjects() {
    byte[] first = codec.encode(object(UUID.randomUUID(), "a", "1"));
    byte[] second = codec.encode(object(UUID.randomUUID(), "b", "2"));

    assertSame(codec.decodeHeader(RecordInput.of(first), id), codec.decodeHeader(RecordInput.of(second), id));
  }

  @Test
  void aCorruptRecordIsReportedNamingTheObjectInsteadOfDecodedOrAllocated() {
    byte[] good = codec.encode(object(id, "name", "value"));
    byte[] truncated = Arrays.copyOf(good, good.length - 3);
    byte[] badFormat = good.clone();
    badFormat[0] = 9;
    byte[] hugeHeader = good.clone();
    hugeHeader[1] = 0x7f;
    byte[] hugeValue = Arrays.copyOf(good, good.length + 5);
    int valueLength = good.length - 1 - "value".length() - 1;
    byte[] tail = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07};
    System.arraycopy(tail, 0, hugeValue, valueLength, tail.length);

    for (byte[] corrupt : List.of(truncated, badFormat, hugeHeader, hugeValue, new byte[0])) {
      InternalException e =
          assertThrows(InternalException.class, () -> codec.decode(id, RecordInput.of(corrupt)));
      assertTrue(e.getMessage().contains(id.toString()), e.getMessage());
    }
  }
}
