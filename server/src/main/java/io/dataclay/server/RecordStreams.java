package io.dataclay.server;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.dataclay.proto.SnapshotChunk;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Streams of records as the snapshot RPCs send them (docs/internals.md "Snapshots"): delimited
 * records cut into pieces of about {@link #PIECE} bytes, and server streams that produce each
 * message only when the transport can take it.
 */
public final class RecordStreams {
  /** The size of the data pieces a stream of records is cut into. */
  public static final int PIECE = 1 << 20;

  private RecordStreams() {}

  /**
   * The pieces of {@code records} written delimited (a varint length, then the record; read back
   * by {@link DelimitedRecords}), each read
   * from {@code records} only as the pieces are taken; the last piece is marked and counts the
   * records and bytes.
   */
  public static Iterator<SnapshotChunk> chunks(Iterator<? extends MessageLite> records) {
    return new Iterator<>() {
      private final ByteString.Output buffer = ByteString.newOutput(PIECE * 2);
      private final ArrayDeque<ByteString> ready = new ArrayDeque<>();
      private long count;
      private long bytes;
      private boolean lastSent;

      @Override
      public boolean hasNext() {
        return !lastSent;
      }

      @Override
      public SnapshotChunk next() {
        while (ready.isEmpty() && records.hasNext()) {
          try {
            records.next().writeDelimitedTo(buffer);
          } catch (IOException e) {
            throw new UncheckedIOException("writing to memory failed", e);
          }
          count++;
          if (buffer.size() >= PIECE) {
            drain();
          }
        }
        if (ready.isEmpty() && buffer.size() > 0) {
          drain();
        }
        ByteString data = ready.poll();
        if (data != null) {
          bytes += data.size();
          return SnapshotChunk.newBuilder().setData(data).build();
        }
        lastSent = true;
        return SnapshotChunk.newBuilder().setLast(true).setRecords(count).setBytes(bytes).build();
      }

      private void drain() {
        ByteString all = buffer.toByteString();
        buffer.reset();
        for (int at = 0; at < all.size(); at += PIECE) {
          ready.add(all.substring(at, Math.min(all.size(), at + PIECE)));
        }
      }
    };
  }

  /**
   * Streams {@code messages} to the caller as fast as it reads them, never ahead of it, and runs
   * {@code onEnd} once when the stream ends: completed, failed, or cancelled by the caller.
   */
  public static <T> void send(StreamObserver<T> observer, Iterator<T> messages, Runnable onEnd) {
    ServerCallStreamObserver<T> out = (ServerCallStreamObserver<T>) observer;
    AtomicBoolean finished = new AtomicBoolean();
    Runnable end = () -> {
      if (finished.compareAndSet(false, true)) {
        onEnd.run();
      }
    };
    out.setOnCancelHandler(end);
    out.setOnReadyHandler(() -> {
      if (finished.get()) {
        return;
      }
      try {
        while (out.isReady() && messages.hasNext()) {
          out.onNext(messages.next());
        }
        if (!messages.hasNext() && !finished.get()) {
          out.onCompleted();
          end.run();
        }
      } catch (Throwable t) {
        if (!finished.get()) {
          Replies.fail(out, t);
          end.run();
        }
      }
    });
  }
}
