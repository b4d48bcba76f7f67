package io.dataclay.ds.ee;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.EvictRequest;
import io.dataclay.proto.ExecuteRequest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The frames of the environment link ({@link FramedStream}) over in-memory streams and over the pipe a
 * Data Service makes for an environment ({@link CallPipe}): the wire format checked against frames
 * made by hand, limits, truncation, large frames, concurrent writers, and writes that never wait.
 */
@Timeout(60)
class LinkFramingTest {
  private static final OutputStream NOWHERE = OutputStream.nullOutputStream();

  /** A frame made by hand: 4-byte big-endian length, then the bytes. */
  private static byte[] frame(byte[] body) {
    return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  private static EnvironmentMessage hello(String runtime) {
    return EnvironmentMessage.newBuilder().setHello(EnvironmentHello.newBuilder().setPid(42)
        .setRuntimeVersion(runtime)).build();
  }

  private static Thread started(Runnable body) {
    Thread t = new Thread(body);
    t.start();
    return t;
  }

  private static FramedStream reading(byte[] wire) {
    return new FramedStream(new ByteArrayInputStream(wire), NOWHERE);
  }

  @Test
  void a_written_frame_is_a_big_endian_length_then_the_message() throws Exception {
    // setup
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    DataServiceMessage message = DataServiceMessage.newBuilder()
        .setEvict(EvictRequest.newBuilder().addIds("a").addIds("b")).build();
    // run
    new FramedStream(InputStream.nullInputStream(), wire).write(message.toByteArray());
    // verify
    byte[] bytes = wire.toByteArray();
    assertArrayEquals(frame(message.toByteArray()), bytes);
    assertEquals(0, bytes[0]);
    assertEquals(message.getSerializedSize(), bytes[3]);
  }

  @Test
  void frames_made_by_hand_are_read_in_order_and_a_clean_end_between_frames_is_null() throws Exception {
    // setup: two messages and an empty frame (a message with nothing set)
    byte[] wire = concat(frame(hello("one").toByteArray()), frame(new byte[0]), frame(hello("two").toByteArray()));
    FramedStream stream = reading(wire);
    // run
    List<EnvironmentMessage> read = new ArrayList<>();
    EnvironmentMessage m;
    while ((m = stream.read(EnvironmentMessage.parser(), 1024)) != null) {
      read.add(m);
    }
    // verify
    assertEquals(List.of(hello("one"), EnvironmentMessage.getDefaultInstance(), hello("two")), read);
  }

  @Test
  void a_frame_longer_than_the_limit_is_refused_before_its_body_is_read() throws Exception {
    // setup: a header announcing one byte more than allowed, then that many bytes
    int limit = 64 * 1024;
    ByteArrayInputStream wire = new ByteArrayInputStream(frame(new byte[limit + 1]));
    FramedStream stream = new FramedStream(wire, NOWHERE);
    // run
    MalformedFrameException e = assertThrows(MalformedFrameException.class,
        () -> stream.read(EnvironmentMessage.parser(), limit));
    // verify: only the header was consumed
    assertTrue(e.getMessage().contains(Integer.toString(limit + 1)) && e.getMessage().contains(Integer.toString(limit)),
        e.getMessage());
    assertEquals(limit + 1, wire.available());
  }

  @Test
  void a_length_over_2_gib_is_refused_as_malformed_without_allocating() {
    // an unsigned length of 4 GiB - 1 (a signed reading would see -1)
    FramedStream stream = reading(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2});
    MalformedFrameException e = assertThrows(MalformedFrameException.class,
        () -> stream.read(EnvironmentMessage.parser(), FramedStream.MAX_FRAME_BYTES));
    assertTrue(e.getMessage().contains("4294967295"), e.getMessage());
  }

  @Test
  void a_stream_ending_inside_a_header_or_a_body_is_an_eof_not_a_message() {
    // a header cut after 2 bytes
    FramedStream header = reading(new byte[] {0, 0});
    EOFException inHeader = assertThrows(EOFException.class, () -> header.read(EnvironmentMessage.parser(), 1024));
    // a body of 10 announced bytes cut after 3
    FramedStream body = reading(new byte[] {0, 0, 0, 10, 1, 2, 3});
    EOFException inBody = assertThrows(EOFException.class, () -> body.read(EnvironmentMessage.parser(), 1024));
    assertTrue(inHeader.getMessage().contains("2 of 4"), inHeader.getMessage());
    assertTrue(inBody.getMessage().contains("3 of 10"), inBody.getMessage());
  }

  @Test
  void bytes_that_are_no_message_are_a_malformed_frame() {
    // a tag with the invalid wire type 7, then bytes that are no message either
    FramedStream stream = reading(frame(new byte[] {0x0f, (byte) 0xff, (byte) 0xff, 1, 2, 3}));
    assertThrows(MalformedFrameException.class, () -> stream.read(EnvironmentMessage.parser(), 1024));
  }

  @Test
  void a_32_mib_frame_crosses_a_pipe_intact_between_small_ones() throws Exception {
    // setup: a pipe whose buffer is far smaller than the frame, written from another thread
    PipedInputStream in = new PipedInputStream(64 * 1024);
    PipedOutputStream out = new PipedOutputStream(in);
    byte[] payload = new byte[32 << 20];
    new Random(7).nextBytes(payload);
    DataServiceMessage large = DataServiceMessage.newBuilder().setExecute(ExecuteRequest.newBuilder().setCallId(2)
        .setPayload(UnsafeByteOperations.unsafeWrap(payload))).build();
    DataServiceMessage small = DataServiceMessage.newBuilder().setExecute(ExecuteRequest.newBuilder().setCallId(3)
        .setPayload(ByteString.copyFromUtf8("small"))).build();
    FramedStream writer = new FramedStream(InputStream.nullInputStream(), out);
    CompletableFuture<Void> written = CompletableFuture.runAsync(() -> {
      try (out) {
        writer.write(small.toByteArray());
        writer.write(large.toByteArray());
        writer.write(small.toByteArray());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    FramedStream reader = new FramedStream(in, NOWHERE);
    // run
    DataServiceMessage first = reader.read(DataServiceMessage.parser(), FramedStream.MAX_FRAME_BYTES);
    DataServiceMessage second = reader.read(DataServiceMessage.parser(), FramedStream.MAX_FRAME_BYTES);
    DataServiceMessage third = reader.read(DataServiceMessage.parser(), FramedStream.MAX_FRAME_BYTES);
    DataServiceMessage end = reader.read(DataServiceMessage.parser(), FramedStream.MAX_FRAME_BYTES);
    // verify: the large one byte for byte; the small one after it is not overwritten by the buffer reuse
    written.get(30, TimeUnit.SECONDS);
    assertEquals(small, first);
    assertArrayEquals(payload, second.getExecute().getPayload().toByteArray());
    assertEquals(small, third);
    assertEquals("small", first.getExecute().getPayload().toStringUtf8());
    assertNull(end);
  }

  @Test
  void frames_written_by_many_threads_at_once_never_interleave() throws Exception {
    // setup: 8 writers, 150 frames each, of sizes around the 64 KiB read buffer, over one pipe; a
    // writer stays alive until everything is read (a pipe whose last writer died refuses reads)
    PipedInputStream in = new PipedInputStream(16 * 1024);
    PipedOutputStream out = new PipedOutputStream(in);
    FramedStream shared = new FramedStream(InputStream.nullInputStream(), out);
    int writers = 8;
    int frames = 150;
    CountDownLatch allRead = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      int writer = w;
      threads.add(started(() -> {
        Random random = new Random(writer);
        try {
          for (int i = 0; i < frames; i++) {
            byte[] filler = new byte[random.nextInt(80 * 1024)];
            java.util.Arrays.fill(filler, (byte) writer);
            shared.write(DataServiceMessage.newBuilder().setExecute(ExecuteRequest.newBuilder().setCallId(writer)
                .setObjectId(Integer.toString(i)).setPayload(ByteString.copyFrom(filler))).build().toByteArray());
          }
          allRead.await();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }));
    }
    FramedStream reader = new FramedStream(in, NOWHERE);
    // run
    Map<Long, List<Integer>> seen = new HashMap<>();
    try {
      for (int n = 0; n < writers * frames; n++) {
        ExecuteRequest r = reader.read(DataServiceMessage.parser(), FramedStream.MAX_FRAME_BYTES).getExecute();
        for (byte b : r.getPayload().toByteArray()) {
          if (b != (byte) r.getCallId()) {
            throw new AssertionError("frame " + r.getObjectId() + " of writer " + r.getCallId() + " holds bytes of "
                + b);
          }
        }
        seen.computeIfAbsent(r.getCallId(), k -> new ArrayList<>()).add(Integer.parseInt(r.getObjectId()));
      }
    } finally {
      allRead.countDown();
    }
    for (Thread t : threads) {
      t.join();
    }
    out.close();
    // verify: every frame whole, each writer's frames in its order
    List<Integer> inOrder = java.util.stream.IntStream.range(0, frames).boxed().toList();
    for (long w = 0; w < writers; w++) {
      assertEquals(inOrder, seen.get(w), "writer " + w);
    }
  }

  /** A pipe made as a Data Service makes one for an environment, and a blocking reader of its other end. */
  private static FramedStream[] callPipe() throws Exception {
    CallPipe pipe = CallPipe.open();
    assertNotNull(pipe, "Netty's epoll transport did not load");
    FramedStream reader = new FramedStream(new FileInputStream(pipe.processEnd().file()), NOWHERE);
    pipe.processStarted();
    return new FramedStream[] {new FramedStream(InputStream.nullInputStream(), pipe), reader};
  }

  @Test
  void try_write_never_waits_on_a_pipe_that_nobody_reads() throws Exception {
    // setup
    FramedStream[] ends = callPipe();
    FramedStream writer = ends[0];
    FramedStream reader = ends[1];
    // run: small frames, until the pipe has no room (a 64 KiB pipe holds about 2,000 of them)
    int written = 0;
    while (writer.tryWrite(hello("frame " + written).toByteArray())) {
      written++;
      assertTrue(written < 100_000, "the pipe never filled");
    }
    // verify: refused, not blocked; every frame written is whole and in order; room again once read
    assertTrue(written > 100, "only " + written + " frames fitted");
    for (int n = 0; n < written; n++) {
      assertEquals(hello("frame " + n), reader.read(EnvironmentMessage.parser(), 1 << 20));
    }
    assertTrue(writer.tryWrite(hello("after").toByteArray()));
    assertEquals(hello("after"), reader.read(EnvironmentMessage.parser(), 1 << 20));
    writer.close();
    assertNull(reader.read(EnvironmentMessage.parser(), 1 << 20));
  }

  @Test
  void try_write_leaves_a_frame_over_a_page_to_a_thread_that_may_wait() throws Exception {
    // setup
    FramedStream[] ends = callPipe();
    byte[] page = hello("x".repeat(CallPipe.ATOMIC_BYTES)).toByteArray();
    byte[] justFits = hello("x".repeat(CallPipe.ATOMIC_BYTES - 4 - (page.length - CallPipe.ATOMIC_BYTES)))
        .toByteArray();
    // run
    boolean large = ends[0].tryWrite(page);
    boolean fits = ends[0].tryWrite(justFits);
    ends[0].write(page);
    // verify
    assertFalse(large);
    assertTrue(fits);
    assertArrayEquals(justFits, ends[1].read(EnvironmentMessage.parser(), 1 << 20).toByteArray());
    assertArrayEquals(page, ends[1].read(EnvironmentMessage.parser(), 1 << 20).toByteArray());
  }

  @Test
  void try_write_writes_nothing_while_another_thread_is_writing_a_frame() throws Exception {
    // setup: a writer blocked inside a frame larger than the pipe, which nobody reads yet
    FramedStream[] ends = callPipe();
    FramedStream stream = ends[0];
    byte[] big = hello("x".repeat(256 * 1024)).toByteArray();
    Thread blocked = started(() -> {
      try {
        stream.write(big);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    while (blocked.getState() != Thread.State.RUNNABLE || !blockedInWrite(blocked)) {
      Thread.sleep(5);
    }
    // run
    boolean written = stream.tryWrite(hello("small").toByteArray());
    // verify: refused at once; the big frame then arrives whole and alone
    assertFalse(written);
    assertArrayEquals(big, ends[1].read(EnvironmentMessage.parser(), 1 << 20).toByteArray());
    blocked.join();
    assertTrue(stream.tryWrite(hello("small").toByteArray()));
    assertEquals(hello("small"), ends[1].read(EnvironmentMessage.parser(), 1 << 20));
  }

  // A thread blocked in a pipe's write(2) shows as RUNNABLE, inside FileOutputStream.writeBytes.
  private static boolean blockedInWrite(Thread t) {
    for (StackTraceElement frame : t.getStackTrace()) {
      if (frame.getMethodName().equals("writeBytes")) {
        return true;
      }
    }
    return false;
  }
}
