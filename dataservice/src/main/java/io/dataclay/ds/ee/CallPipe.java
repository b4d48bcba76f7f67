package io.dataclay.ds.ee;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.unix.FileDescriptor;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.logging.Logger;

/**
 * The pipe an execution environment reads its calls from (its standard input), made by the Data
 * Service instead of by {@link ProcessBuilder} so that its end can be written without waiting.
 *
 * <p>The process is model code, so it may stop reading at any time, and may shrink the pipe to one
 * page first ({@code F_SETPIPE_SZ}). A network thread that wrote a call into such a pipe would wait
 * until the call's deadline, holding up every connection it serves, other accounts' too. Here the
 * pipe's end has two open descriptions: one non-blocking, which {@link #writeNow} uses for frames
 * of at most {@link #ATOMIC_BYTES} (written whole at once, or not at all, never waiting), and one
 * blocking ({@link #blocking()}) for threads that may wait.
 *
 * <p>Built on the epoll transport that grpc-netty-shaded carries; {@link #open()} answers null where
 * it cannot load (another OS or CPU), and calls are then never written by threads that must not wait.
 */
final class CallPipe implements AutoCloseable {
  /** The largest write a pipe takes whole or not at all (Linux's PIPE_BUF). */
  static final int ATOMIC_BYTES = 4096;
  private static final Logger LOG = Logger.getLogger(CallPipe.class.getName());
  private static volatile boolean warned;

  private final FileDescriptor readEnd;
  private final FileDescriptor writeEnd;
  private final FileOutputStream blockingFile;
  private final OutputStream blocking;
  private final ByteBuffer frame = ByteBuffer.allocateDirect(ATOMIC_BYTES);
  private boolean closed;

  private CallPipe(FileDescriptor readEnd, FileDescriptor writeEnd, FileOutputStream blockingFile) {
    this.readEnd = readEnd;
    this.writeEnd = writeEnd;
    this.blockingFile = blockingFile;
    this.blocking = new BufferedOutputStream(blockingFile, 8192);
  }

  /** A new pipe, or null (said once in the log) when this platform cannot make one that does not wait. */
  static CallPipe open() {
    if (!Epoll.isAvailable()) {
      unavailable(String.valueOf(Epoll.unavailabilityCause()));
      return null;
    }
    FileDescriptor[] ends;
    try {
      ends = FileDescriptor.pipe(); // both ends O_NONBLOCK
    } catch (IOException e) {
      unavailable(e.getMessage());
      return null;
    }
    try {
      // a second, blocking, open description of the same write end
      return new CallPipe(ends[0], ends[1], new FileOutputStream(procFd(ends[1])));
    } catch (IOException e) {
      closeQuietly(ends[0]);
      closeQuietly(ends[1]);
      unavailable(e.getMessage());
      return null;
    }
  }

  /** What the process's standard input is redirected from: a blocking description of the read end. */
  ProcessBuilder.Redirect processEnd() {
    return ProcessBuilder.Redirect.from(new File(procFd(readEnd)));
  }

  /** Closes this process's copy of the read end, once the process has its own (or was not started). */
  void processStarted() {
    closeQuietly(readEnd);
  }

  /** The blocking side, for threads that may wait; the caller flushes after each frame. */
  OutputStream blocking() {
    return blocking;
  }

  /**
   * Writes {@code header} then {@code body} as one write that never waits: true when they are in the
   * pipe, false (nothing written) when the pipe has no room for them now or they are longer than
   * {@link #ATOMIC_BYTES}. The caller holds the stream's write lock and nothing is buffered on the
   * blocking side then.
   */
  synchronized boolean writeNow(byte[] header, byte[] body) throws IOException {
    int length = header.length + body.length;
    if (length > ATOMIC_BYTES) {
      return false;
    }
    if (closed) {
      throw new IOException("the pipe to the execution environment is closed");
    }
    frame.clear();
    frame.put(header).put(body);
    int written = writeEnd.write(frame, 0, length);
    if (written == length) {
      return true;
    }
    if (written == 0) {
      return false; // EAGAIN: the pipe is full
    }
    // A pipe never does this for a write of at most PIPE_BUF bytes; finish the frame rather than corrupt the link.
    byte[] rest = new byte[length - written];
    frame.get(written, rest);
    blocking.write(rest);
    blocking.flush();
    return true;
  }

  /**
   * Closes every descriptor of this end (the process sees the end of its input once it has read what
   * is there). Never waits: the blocking side is closed below its buffer, which a writer blocked in
   * the pipe holds, and which is empty between frames.
   */
  @Override
  public synchronized void close() {
    closed = true;
    closeQuietly(readEnd);
    closeQuietly(writeEnd);
    try {
      blockingFile.close();
    } catch (IOException ignored) {
      // nothing more to release
    }
  }

  private static String procFd(FileDescriptor fd) {
    return "/proc/self/fd/" + fd.intValue();
  }

  private static void closeQuietly(FileDescriptor fd) {
    try {
      fd.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  private static void unavailable(String why) {
    if (!warned) {
      warned = true;
      LOG.warning("calls to execution environments are written by a pool thread only (one hop more per call): "
          + "a pipe that is never waited on needs Netty's epoll transport, which did not load here: " + why);
    }
  }
}
