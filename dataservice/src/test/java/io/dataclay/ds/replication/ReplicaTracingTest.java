package io.dataclay.ds.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dataclay.ds.registration.ObjectDirectory;
import io.dataclay.ds.store.ObjectDelta;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Changes passed on to a replica are sent, on the senders' thread, in the trace context of the
 * call that made them: the replica update's client span, and the replica's server span, join
 * that call's trace.
 */
@Timeout(30)
class ReplicaTracingTest {
  private final ExecutorService senders = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() throws InterruptedException {
    senders.shutdownNow();
    senders.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void a_replica_update_is_sent_in_the_trace_context_of_the_call_that_made_the_change() throws Exception {
    // setup: an object with a replica on backend "r", a master with a valid lease
    AtomicReference<SpanContext> sentIn = new AtomicReference<>();
    PeerBackends peers = (PeerBackends) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {PeerBackends.class}, (proxy, method, args) -> {
          if (!method.getName().equals("applyDeltas")) {
            throw new AssertionError("only changes are sent: " + method.getName());
          }
          sentIn.set(Span.current().getSpanContext());
          return null;
        });
    ObjectDirectory directory = (ObjectDirectory) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {ObjectDirectory.class}, (proxy, method, args) -> {
          throw new AssertionError("the directory is not asked: " + method.getName());
        });
    Mastership mastership = new Mastership(UUID.randomUUID(), System::nanoTime);
    mastership.heard(System.nanoTime(), 60_000, Map.of(), true);
    ReplicaSets sets = new ReplicaSets(peers, directory, mastership, senders);
    UUID id = UUID.randomUUID();
    sets.add(List.of(id), "r");
    Span call = SdkTracerProvider.builder().build().get("test").spanBuilder("call").startSpan();
    // run: the change is made while the call's span is current
    try (Scope ignored = call.makeCurrent()) {
      sets.writeThrough(List.of(new ObjectDelta(id, Map.of(), Set.of("x"))), () -> {}).get(10, TimeUnit.SECONDS);
    } finally {
      call.end();
    }
    // verify
    assertEquals(call.getSpanContext(), sentIn.get());
  }
}
