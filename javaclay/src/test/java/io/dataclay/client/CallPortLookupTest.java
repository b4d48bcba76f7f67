package io.dataclay.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.CallFrame;
import io.dataclay.rpc.TlsSettings;
import java.net.ServerSocket;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CallPortLookupTest {
  @Test
  void aProgramIsTracedWhenItsEnvironmentNamesAnOtlpEndpointAndDoesNotDisableTheSdk() {
    assertFalse(CallPortLookup.traced(Map.of()));
    assertTrue(CallPortLookup.traced(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")));
    assertTrue(CallPortLookup.traced(Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318")));
    assertFalse(CallPortLookup.traced(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", " ")));
    assertFalse(CallPortLookup.traced(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318",
        "OTEL_SDK_DISABLED", "TRUE")));
  }

  @Test
  void aBackendThatServesNoCallPortIsAskedOnce() {
    AtomicInteger asked = new AtomicInteger();
    try (CallPortLookup lookup = new CallPortLookup("127.0.0.1", TlsSettings.plaintext())) {
      assertNull(lookup.port(() -> {
        asked.incrementAndGet();
        return 0;
      }));
      assertNull(lookup.port(asked::incrementAndGet));
      assertEquals(1, asked.get());
    }
  }

  @Test
  void aFailedQuestionIsNotAskedAgainAtOnceAndAPortIsKept() {
    AtomicInteger asked = new AtomicInteger();
    try (CallPortLookup lookup = new CallPortLookup("127.0.0.1", TlsSettings.plaintext())) {
      assertNull(lookup.port(() -> {
        asked.incrementAndGet();
        throw new BackendUnavailableException("not yet");
      }));
      assertNull(lookup.port(() -> asked.incrementAndGet() + 40000));
      assertEquals(1, asked.get());
    }
    try (CallPortLookup lookup = new CallPortLookup("127.0.0.1", TlsSettings.plaintext())) {
      CallPort port = lookup.port(() -> 45678);
      assertNotNull(port);
      assertEquals(45678, port.port());
      assertSame(port, lookup.port(() -> 1));
      lookup.unusable(port);
      assertNull(lookup.current());
      assertNull(lookup.port(() -> 1)); // left alone for a while after it could not be reached
    }
  }

  @Test
  void whileOneThreadAsksForThePortTheOthersCallsGoOverGrpcWithoutWaiting() throws Exception {
    CountDownLatch asking = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    try (CallPortLookup lookup = new CallPortLookup("127.0.0.1", TlsSettings.plaintext())) {
      // setup: a thread asks a backend that is slow to answer
      CompletableFuture<CallPort> first = CompletableFuture.supplyAsync(() -> lookup.port(() -> {
        asking.countDown();
        try {
          answer.await();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
        return 45678;
      }));
      assertTrue(asking.await(10, TimeUnit.SECONDS));
      // run: another thread's call meanwhile
      CompletableFuture<CallPort> other = CompletableFuture.supplyAsync(() -> lookup.port(() -> 1));
      boolean held;
      try {
        other.get(5, TimeUnit.SECONDS);
        held = false;
      } catch (TimeoutException e) {
        held = true;
      } finally {
        answer.countDown();
      }
      // verify: it was not held (gRPC), and the first thread's answer is the port for everyone after
      assertFalse(held, "a call waited for another thread's question");
      assertNull(other.get());
      CallPort port = first.get(5, TimeUnit.SECONDS);
      assertEquals(45678, port.port());
      assertSame(port, lookup.port(() -> 1));
    }
  }

  @Test
  void aPortThatCannotBeReachedIsUnusableAndNothingIsSent() throws Exception {
    ServerSocket closed = new ServerSocket(0);
    int free = closed.getLocalPort();
    closed.close();
    try (CallPort port = new CallPort("127.0.0.1", free, TlsSettings.plaintext(), 1200)) {
      assertThrows(CallPort.Unusable.class, () -> port.call("token", CallFrame.newBuilder()));
      assertEquals(0, port.connections());
    }
  }
}
