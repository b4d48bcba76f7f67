package io.dataclay.logic.outgoing;

import io.dataclay.client.Channels;
import io.dataclay.client.DataServiceClient;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.logic.backends.BackendCalls;
import io.dataclay.logic.backends.RecordedRoots;
import io.dataclay.logic.backends.SnapshotCalls;
import io.dataclay.logic.codec.ProtoMapping;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.proto.CollectionBarrier;
import io.dataclay.proto.HeldObjects;
import io.dataclay.proto.Model;
import io.dataclay.proto.PromotedObject;
import io.dataclay.rpc.TlsSettings;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Calls backends over gRPC. Deploys models with DataService.DeployModels (and removes them with
 * RemoveModels) and waits for the confirmations: model changes to one backend run one at a time in
 * the order they were made (backends also order them by revision), different backends in parallel;
 * failures are logged, never raised. Runs the steps of a garbage collection
 * (Begin/GetReferences/EndCollection, DeleteObjects) on
 * the caller's thread, raising what the backend answered.
 */
public final class GrpcBackendCalls implements BackendCalls {
  private static final Logger LOG = Logger.getLogger(GrpcBackendCalls.class.getName());
  private static final long CALL_TIMEOUT_SECONDS = 30;
  // a backend streams the references of every object it stores: millions take minutes
  private static final long REFERENCES_TIMEOUT_SECONDS = 1800;

  private final ExecutorService pool;
  private final TlsSettings tls;
  private final Map<String, CompletableFuture<Void>> queues = new ConcurrentHashMap<>();
  private final Map<String, Target> targets = new ConcurrentHashMap<>();
  private final GrpcSnapshotCalls snapshotCalls = new GrpcSnapshotCalls(this::channelFor, this::drop);
  private volatile boolean closed;

  /** A caller with its own daemon threads, reaching backends over channels secured as {@code tls} says. */
  public GrpcBackendCalls(TlsSettings tls) {
    this.tls = tls;
    AtomicInteger n = new AtomicInteger();
    this.pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "lm-model-deploy-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public List<BackendRecord> deploy(List<BackendRecord> backends, ModelRecord model, String token, Duration wait) {
    Model wire = ProtoMapping.toProto(model);
    String what = "model '" + model.namespace() + "' v" + model.version() + " (revision " + model.revision() + ")";
    return inOrder(backends, what, wait, b -> new DataServiceClient(withDeadline(channelFor(b)), () -> token)
        .deployModels(List.of(wire)));
  }

  @Override
  public List<BackendRecord> removeModels(List<BackendRecord> backends, List<String> namespaces, long revision,
      String token, Duration wait) {
    return inOrder(backends, "the removal of models " + namespaces + " (revision " + revision + ")", wait,
        b -> new DataServiceClient(withDeadline(channelFor(b)), () -> token).removeModels(namespaces, revision));
  }

  // Model changes reach one backend one at a time, in the order they were asked for; different
  // backends in parallel. Returns the backends that did not confirm within the wait.
  private List<BackendRecord> inOrder(List<BackendRecord> backends, String what, Duration wait,
      Consumer<BackendRecord> call) {
    long deadline = System.nanoTime() + wait.toNanos();
    List<CompletableFuture<Boolean>> confirmations = new ArrayList<>(backends.size());
    for (BackendRecord b : backends) {
      CompletableFuture<Boolean> confirmed = new CompletableFuture<>();
      confirmations.add(confirmed);
      try {
        queues.compute(b.id(), (id, last) -> (last == null ? CompletableFuture.<Void>completedFuture(null) : last)
            .thenRunAsync(() -> confirmed.complete(send(b, what, call)), pool)
            // a rejected or failed step must neither leave this caller waiting nor block later ones
            .whenComplete((v, e) -> confirmed.complete(false))
            .exceptionally(e -> null));
      } catch (RejectedExecutionException e) {
        LOG.fine("deployer closed: " + what + " not sent to backend " + b.id());
        confirmed.complete(false);
      }
    }
    List<BackendRecord> missed = new ArrayList<>();
    for (int i = 0; i < backends.size(); i++) {
      if (!confirmedBy(confirmations.get(i), deadline)) {
        missed.add(backends.get(i));
      }
    }
    return missed;
  }

  private static boolean confirmedBy(CompletableFuture<Boolean> confirmed, long deadline) {
    try {
      return confirmed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public void sessionsClosed(List<BackendRecord> backends, List<String> tokenSha256, boolean forgetAll,
      String token, Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    List<CompletableFuture<Void>> calls = new ArrayList<>();
    for (BackendRecord b : backends) {
      try {
        calls.add(CompletableFuture.runAsync(() -> {
          try {
            new DataServiceClient(withDeadline(channelFor(b)), () -> token).sessionsClosed(tokenSha256, forgetAll);
          } catch (RuntimeException e) {
            LOG.fine(() -> "backend " + b.name() + " did not take the closed sessions (its next heartbeat brings"
                + " them): " + e.getMessage());
          }
        }, pool));
      } catch (RejectedExecutionException e) {
        return;
      }
    }
    for (CompletableFuture<Void> call : calls) {
      try {
        call.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException | ExecutionException e) {
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  @Override
  public void beginCollection(BackendRecord b, long collectionId, String token) {
    onBackend(b, () -> {
      new DataServiceClient(withDeadline(channelFor(b)), () -> token).beginCollection(collectionId);
      return null;
    });
  }

  @Override
  public void getReferences(BackendRecord b, long collectionId, String token, ReferenceSink sink) {
    onBackend(b, () -> {
      new DataServiceClient(withDeadline(channelFor(b), REFERENCES_TIMEOUT_SECONDS), () -> token)
          .getReferences(collectionId, o -> sink.accept(o.getId(), o.getReferencesList()));
      return null;
    });
  }

  @Override
  public RecordedRoots endCollection(BackendRecord b, long collectionId, String token) {
    CollectionBarrier barrier = onBackend(b,
        () -> new DataServiceClient(withDeadline(channelFor(b)), () -> token).endCollection(collectionId));
    Map<String, List<String>> held = new HashMap<>();
    for (HeldObjects h : barrier.getHeldList()) {
      held.computeIfAbsent(h.getSessionToken(), t -> new ArrayList<>()).addAll(h.getObjectIdsList());
    }
    return new RecordedRoots(barrier.getReferencedList(), held);
  }

  @Override
  public void deleteObjects(BackendRecord b, List<String> ids, String token) {
    onBackend(b, () -> {
      new DataServiceClient(withDeadline(channelFor(b)), () -> token).deleteObjects(ids);
      return null;
    });
  }

  @Override
  public SnapshotCalls snapshots() {
    return snapshotCalls;
  }

  @Override
  public void promoteReplicas(BackendRecord b, Map<String, List<String>> replicas, Map<String, Long> terms,
      String token) {
    List<PromotedObject> objects = new ArrayList<>(replicas.size());
    replicas.forEach((id, others) -> objects.add(PromotedObject.newBuilder().setObjectId(id)
        .addAllReplicaBackendIds(others).build()));
    onBackend(b, () -> {
      new DataServiceClient(withDeadline(channelFor(b)), () -> token).promoteReplicas(objects, terms);
      return null;
    });
  }

  @Override
  public void newReplicas(BackendRecord master, List<String> ids, String target, String token) {
    onBackend(master, () -> new DataServiceClient(withDeadline(channelFor(master)), () -> token)
        .newReplica(ids, target, false));
  }

  private <T> T onBackend(BackendRecord b, Supplier<T> call) {
    try {
      return call.get();
    } catch (BackendUnavailableException e) {
      // a fresh channel next time: the backend may come back on the same address without backoff
      drop(b.id());
      throw e;
    }
  }

  @Override
  public void close() {
    closed = true;
    pool.shutdownNow();
    for (Target t : targets.values()) {
      Channels.close(t.channel());
    }
    targets.clear();
  }

  /** Sends one deployment; whether the backend confirmed it. */
  private boolean send(BackendRecord b, String what, Consumer<BackendRecord> call) {
    String where = what + " to backend " + b.name() + " (" + b.id() + ") at " + b.host() + ":" + b.port();
    try {
      call.accept(b);
      LOG.fine(() -> "sent " + where);
      return true;
    } catch (RuntimeException e) {
      if (!closed) {
        logFailure(b, where, e);
      }
      return false;
    }
  }

  private void logFailure(BackendRecord b, String what, RuntimeException e) {
    if (e instanceof BackendUnavailableException) {
      // a fresh channel next time: the backend may come back on the same address without backoff
      drop(b.id());
      LOG.warning("could not send " + what + ": " + e.getMessage()
          + "; the backend gets it from ListModels when it registers, at its next heartbeat, or when it meets"
          + " one of the model's classes");
    } else if (e instanceof DataClayException) {
      LOG.warning("sending " + what + " failed: " + e.getMessage());
    } else {
      LOG.log(Level.WARNING, "failed to send " + what, e);
    }
  }

  private ManagedChannel channelFor(BackendRecord b) {
    Target t = targets.compute(b.id(), (id, old) -> {
      if (old != null && old.host().equals(b.host()) && old.port() == b.port()) {
        return old;
      }
      if (old != null) {
        Channels.close(old.channel());
      }
      try {
        return new Target(b.host(), b.port(), Channels.forAddress(b.host(), b.port(), tls));
      } catch (IllegalArgumentException e) {
        // an address recorded before host names were checked strictly: that backend cannot be reached
        throw new BackendUnavailableException(
            "backend " + b.name() + " has an address no channel can reach (" + b.host() + ":" + b.port() + ")");
      }
    });
    return t.channel();
  }

  private void drop(String backendId) {
    Target old = targets.remove(backendId);
    if (old != null) {
      Channels.close(old.channel());
    }
  }

  private static Channel withDeadline(Channel channel) {
    return withDeadline(channel, CALL_TIMEOUT_SECONDS);
  }

  private static Channel withDeadline(Channel channel, long seconds) {
    return ClientInterceptors.intercept(channel, new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return next.newCall(method, options.withDeadlineAfter(seconds, TimeUnit.SECONDS));
      }
    });
  }

  /** The channel kept for one backend's current address. */
  private record Target(String host, int port, ManagedChannel channel) {}
}
