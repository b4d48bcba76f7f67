package io.dataclay.ds.ee;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Protobuf messages over a connected (blocking) socket, each framed as a 4-byte unsigned
 * big-endian length and that many bytes. Reading is for one thread; writes may come from any
 * thread and write each whole frame under one lock, so frames never interleave. Like any
 * InterruptibleChannel, the socket closes if a thread blocked in it is interrupted; only the Data
 * Service's shutdown interrupts the threads that use it.
 */
final class FramedChannel implements AutoCloseable {
  /** The largest frame body the link allows: 2^31-1 bytes. */
  static final long MAX_FRAME_BYTES = Integer.MAX_VALUE;
  private static final int HEADER_BYTES = 4;
  // Frames up to this size are parsed straight out of the reusable read buffer; larger ones get
  // an array of their own, which their parsed bytes fields then share (no second copy).
  private static final int READ_BUFFER_BYTES = 64 * 1024;
  // The JDK copies a heap buffer into a per-thread cached direct buffer of the same size before
  // the system call; writing big bodies in slices keeps that cache at 1 MiB per thread.
  private static final int WRITE_SLICE_BYTES = 1 << 20;

  private final SocketChannel channel;
  private final ByteBuffer in = ByteBuffer.allocateDirect(READ_BUFFER_BYTES).flip();
  private final ReentrantLock writeLock = new ReentrantLock();
  private final ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);

  /** Frames over {@code channel}, which is switched to blocking mode. */
  FramedChannel(SocketChannel channel) throws IOException {
    channel.configureBlocking(true);
    this.channel = channel;
  }

  /**
   * The next message, or null when the peer closed the connection between frames.
   *
   * @throws MalformedFrameException when the frame is longer than {@code maxBytes} or is not a
   *     valid message of {@code parser}'s type
   * @throws EOFException when the connection ended inside a frame
   */
  <T extends MessageLite> T read(Parser<T> parser, long maxBytes) throws IOException {
    if (!fill(HEADER_BYTES, true)) {
      return null;
    }
    long length = Integer.toUnsignedLong(in.getInt());
    if (length > maxBytes) {
      throw new MalformedFrameException("a frame announced " + length + " bytes; the limit is " + maxBytes);
    }
    int size = (int) length;
    if (size <= in.capacity()) {
      fill(size, false);
      ByteBuffer body = in.slice(in.position(), size);
      in.position(in.position() + size);
      return parse(parser, CodedInputStream.newInstance(body), size);
    }
    CodedInputStream large = CodedInputStream.newInstance(readLarge(size));
    large.enableAliasing(true);
    return parse(parser, large, size);
  }

  /** Writes one whole frame holding {@code body}, after any frame another thread is writing. */
  void write(byte[] body) throws IOException {
    writeLock.lock();
    try {
      writeFrame(body);
    } finally {
      writeLock.unlock();
    }
  }

  /** Writes the frame only if no other thread is writing one; false, with nothing written, otherwise. */
  boolean tryWrite(byte[] body) throws IOException {
    if (!writeLock.tryLock()) {
      return false;
    }
    try {
      writeFrame(body);
      return true;
    } finally {
      writeLock.unlock();
    }
  }

  /** Closes the connection; a blocked {@link #read} then fails. Idempotent. */
  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // Closing a socket only fails when it is already unusable: nothing more to release.
    }
  }

  private void writeFrame(byte[] body) throws IOException {
    header.clear();
    header.putInt(body.length).flip();
    ByteBuffer rest = ByteBuffer.wrap(body);
    ByteBuffer[] frame = {header, rest};
    while (header.hasRemaining() || rest.position() < body.length) {
      rest.limit(Math.min(body.length, rest.position() + WRITE_SLICE_BYTES));
      channel.write(frame);
    }
  }

  private static <T extends MessageLite> T parse(Parser<T> parser, CodedInputStream input, int size)
      throws MalformedFrameException {
    input.setSizeLimit(Integer.MAX_VALUE);
    try {
      T message = parser.parseFrom(input);
      input.checkLastTagWas(0);
      return message;
    } catch (InvalidProtocolBufferException e) {
      throw new MalformedFrameException("a frame of " + size + " bytes is not a valid message: " + e.getMessage());
    }
  }

  /** Makes {@code n} bytes readable in {@code in}; false at a clean end of stream before a frame. */
  private boolean fill(int n, boolean frameStart) throws IOException {
    if (in.remaining() >= n) {
      return true;
    }
    in.compact();
    try {
      while (in.position() < n) {
        if (channel.read(in) < 0) {
          if (frameStart && in.position() == 0) {
            return false;
          }
          throw new EOFException("the connection ended inside a frame");
        }
      }
    } finally {
      in.flip();
    }
    return true;
  }

  private byte[] readLarge(int size) throws IOException {
    byte[] body;
    try {
      body = new byte[size];
    } catch (OutOfMemoryError e) {
      throw new MalformedFrameException("a frame of " + size + " bytes does not fit in this Data Service's memory");
    }
    int filled = Math.min(in.remaining(), size);
    in.get(body, 0, filled);
    while (filled < size) {
      in.clear();
      int read = channel.read(in);
      in.flip();
      if (read < 0) {
        throw new EOFException("the connection ended inside a frame of " + size + " bytes");
      }
      int take = Math.min(in.remaining(), size - filled);
      in.get(body, filled, take);
      filled += take;
    }
    return body;
  }
}
