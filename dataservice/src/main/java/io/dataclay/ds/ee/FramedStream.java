package io.dataclay.ds.ee;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Protobuf messages over a pair of byte streams (an execution environment's standard output and
 * input), each framed as a 4-byte unsigned big-endian length and that many bytes. Reading is for
 * one thread; writes may come from any thread and write each whole frame under one lock, so
 * frames never interleave.
 */
public final class FramedStream implements AutoCloseable {
  /** The largest frame body the link allows: 2^31-1 bytes. */
  public static final long MAX_FRAME_BYTES = Integer.MAX_VALUE;
  private static final int HEADER_BYTES = 4;
  // Frames up to this size are read into one reusable array; larger ones get an array of their
  // own, which their parsed bytes fields then share (no second copy).
  private static final int READ_BUFFER_BYTES = 64 * 1024;

  private final InputStream in;
  private final OutputStream out;
  private final ReentrantLock writeLock = new ReentrantLock();
  private final byte[] header = new byte[HEADER_BYTES];
  private final byte[] readBuffer = new byte[READ_BUFFER_BYTES];
  private final byte[] outHeader = new byte[HEADER_BYTES];
  private final CallPipe pipe; // null: nothing is written without waiting

  /** Frames read from {@code in} and written to {@code out} (flushed after every frame). */
  public FramedStream(InputStream in, OutputStream out) {
    this(in, out, null);
  }

  /**
   * Frames read from {@code in} and written to {@code pipe}: {@link #write} on its blocking side,
   * {@link #tryWrite} without waiting. The stream owns the pipe.
   */
  FramedStream(InputStream in, CallPipe pipe) {
    this(in, pipe.blocking(), pipe);
  }

  private FramedStream(InputStream in, OutputStream out, CallPipe pipe) {
    this.in = in;
    this.out = out;
    this.pipe = pipe;
  }

  /**
   * The next message, or null when the peer closed its end between frames.
   *
   * @throws MalformedFrameException when the frame is longer than {@code maxBytes} or is not a
   *     valid message of {@code parser}'s type
   * @throws EOFException when the stream ended inside a frame
   */
  public <T extends MessageLite> T read(Parser<T> parser, long maxBytes) throws IOException {
    int got = in.readNBytes(header, 0, HEADER_BYTES);
    if (got == 0) {
      return null;
    }
    if (got < HEADER_BYTES) {
      throw new EOFException("the stream ended inside a frame header (" + got + " of 4 bytes)");
    }
    long length = Integer.toUnsignedLong(((header[0] & 0xff) << 24) | ((header[1] & 0xff) << 16)
        | ((header[2] & 0xff) << 8) | (header[3] & 0xff));
    if (length > maxBytes) {
      throw new MalformedFrameException("a frame announced " + length + " bytes; the limit is " + maxBytes);
    }
    int size = (int) length;
    if (size <= readBuffer.length) {
      readFully(readBuffer, size);
      return parse(parser, CodedInputStream.newInstance(readBuffer, 0, size), size);
    }
    byte[] body;
    try {
      body = new byte[size];
    } catch (OutOfMemoryError e) {
      throw new MalformedFrameException("a frame of " + size + " bytes does not fit in this Data Service's memory");
    }
    readFully(body, size);
    CodedInputStream large = CodedInputStream.newInstance(body);
    large.enableAliasing(true);
    return parse(parser, large, size);
  }

  /** Writes one whole frame holding {@code body}, after any frame another thread is writing. */
  public void write(byte[] body) throws IOException {
    writeLock.lock();
    try {
      writeFrame(body);
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Writes the frame now, never waiting, or not at all (false): only on a {@link CallPipe}, only a
   * frame of at most {@link CallPipe#ATOMIC_BYTES} with its header, only while no other thread is
   * writing one and only while the pipe has room for it.
   */
  boolean tryWrite(byte[] body) throws IOException {
    if (pipe == null || !writeLock.tryLock()) {
      return false;
    }
    try {
      header(body.length);
      return pipe.writeNow(outHeader, body);
    } finally {
      writeLock.unlock();
    }
  }

  /** Closes both streams; a blocked {@link #read} then fails or sees the end. Idempotent. */
  @Override
  public void close() {
    if (pipe != null) {
      pipe.close();
    } else {
      try {
        out.close();
      } catch (IOException ignored) {
        // a pipe whose reader is gone cannot be flushed: closing is all that is left
      }
    }
    try {
      in.close();
    } catch (IOException ignored) {
      // nothing more to release
    }
  }

  private void writeFrame(byte[] body) throws IOException {
    header(body.length);
    out.write(outHeader);
    out.write(body);
    out.flush();
  }

  private void header(int n) {
    outHeader[0] = (byte) (n >>> 24);
    outHeader[1] = (byte) (n >>> 16);
    outHeader[2] = (byte) (n >>> 8);
    outHeader[3] = (byte) n;
  }

  private void readFully(byte[] into, int size) throws IOException {
    int got = in.readNBytes(into, 0, size);
    if (got < size) {
      throw new EOFException("the stream ended inside a frame (" + got + " of " + size + " bytes)");
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
}
