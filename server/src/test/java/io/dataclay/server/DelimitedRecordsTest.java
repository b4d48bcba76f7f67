package io.dataclay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.SnapshotChunk;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Delimited records cut anywhere by the pieces they travel in come back whole. */
class DelimitedRecordsTest {
  private static byte[] stream(List<ObjectData> records) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ObjectData r : records) {
      r.writeDelimitedTo(out);
    }
    return out.toByteArray();
  }

  @Test
  void recordsSplitAtEveryPossibleByteComeBackWhole() throws Exception {
    // setup: a small record, one whose length takes two varint bytes, and an empty one
    List<ObjectData> records = List.of(ObjectData.newBuilder().setId("a").build(),
        ObjectData.newBuilder().setId("b".repeat(300)).build(), ObjectData.getDefaultInstance());
    byte[] bytes = stream(records);
    for (int cut = 0; cut <= bytes.length; cut++) {
      // run
      DelimitedRecords reader = new DelimitedRecords(1 << 20);
      List<ByteString> got = new ArrayList<>(reader.feed(ByteString.copyFrom(bytes, 0, cut)));
      got.addAll(reader.feed(ByteString.copyFrom(bytes, cut, bytes.length - cut)));
      // verify
      List<ObjectData> parsed = new ArrayList<>();
      for (ByteString b : got) {
        parsed.add(ObjectData.parseFrom(b));
      }
      assertEquals(records, parsed, "cut at " + cut);
      assertTrue(reader.atBoundary());
    }
  }

  @Test
  void aTruncatedStreamIsNotAtABoundaryAndAnOversizedRecordIsRefused() throws Exception {
    byte[] bytes = stream(List.of(ObjectData.newBuilder().setId("x".repeat(100)).build()));
    DelimitedRecords reader = new DelimitedRecords(1 << 20);
    assertEquals(0, reader.feed(ByteString.copyFrom(bytes, 0, bytes.length - 1)).size());
    assertFalse(reader.atBoundary());
    DelimitedRecords small = new DelimitedRecords(50);
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> small.feed(ByteString.copyFrom(bytes)));
    assertTrue(e.getMessage().contains("more than the 50"), e.getMessage());
    byte[] endless = new byte[12];
    java.util.Arrays.fill(endless, (byte) 0xff);
    assertThrows(InvalidArgumentException.class, () -> new DelimitedRecords(1 << 20).feed(ByteString.copyFrom(endless)));
  }

  @Test
  void whatRecordStreamsWritesComesBackWholeAcrossPieces() throws Exception {
    // setup: records that fill more than one piece
    List<ObjectData> records = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      records.add(ObjectData.newBuilder().setId(i + "x".repeat(RecordStreams.PIECE / 3)).build());
    }
    // run
    DelimitedRecords reader = new DelimitedRecords(RecordStreams.PIECE);
    List<ObjectData> parsed = new ArrayList<>();
    int pieces = 0;
    SnapshotChunk last = null;
    for (var chunks = RecordStreams.chunks(records.iterator()); chunks.hasNext(); ) {
      last = chunks.next();
      pieces++;
      for (ByteString b : reader.feed(last.getData())) {
        parsed.add(ObjectData.parseFrom(b));
      }
    }
    // verify
    assertEquals(records, parsed);
    assertTrue(pieces > 1, pieces + " pieces");
    assertTrue(last.getLast());
    assertEquals(records.size(), last.getRecords());
    assertEquals(reader.records(), last.getRecords());
    assertTrue(reader.atBoundary());
  }
}
