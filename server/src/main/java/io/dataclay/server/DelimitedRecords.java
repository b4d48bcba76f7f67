package io.dataclay.server;

import com.google.protobuf.ByteString;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a stream of delimited records (a varint length, then that many bytes), arriving in pieces
 * that may split records anywhere, back into whole records: the reading half of the framing
 * {@link RecordStreams#chunks} writes. Pieces are kept as ropes, not copied.
 */
public final class DelimitedRecords {
  private final long maxRecordBytes;
  private ByteString pending = ByteString.EMPTY;
  private long records;

  /** A reader refusing records longer than {@code maxRecordBytes}. */
  public DelimitedRecords(long maxRecordBytes) {
    this.maxRecordBytes = maxRecordBytes;
  }

  /** Adds the next piece; returns the records it completed, in order. */
  public List<ByteString> feed(ByteString piece) {
    pending = pending.concat(piece);
    List<ByteString> out = new ArrayList<>();
    while (true) {
      int size = pending.size();
      long length = 0;
      int shift = 0;
      int at = 0;
      boolean complete = false;
      while (at < size && at < 10) {
        int b = pending.byteAt(at++) & 0xff;
        length |= (long) (b & 0x7f) << shift;
        shift += 7;
        if ((b & 0x80) == 0) {
          complete = true;
          break;
        }
      }
      if (!complete) {
        if (at >= 10) {
          throw new InvalidArgumentException("data: record " + records + " has a malformed length");
        }
        return out;
      }
      if (length < 0 || length > maxRecordBytes) {
        throw new InvalidArgumentException("data: record " + records + " claims " + length + " bytes, more than the "
            + maxRecordBytes + " a record may hold");
      }
      if (size - at < length) {
        return out;
      }
      out.add(pending.substring(at, at + (int) length));
      pending = pending.substring(at + (int) length);
      records++;
    }
  }

  /** Records completed so far. */
  public long records() {
    return records;
  }

  /** Whether no partial record is left (the stream may end here). */
  public boolean atBoundary() {
    return pending.isEmpty();
  }
}
